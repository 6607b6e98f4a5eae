import { describe, expect, it } from '@jest/globals'
import { createMessage, contentHash, toWire } from '@turnlog/core'

describe('smoke', () => {
  it('creates a message', () => {
    const m = createMessage({ role: 'user', content: 'hi' })
    expect(toWire([m])).toEqual([{ role: 'user', content: 'hi' }])
    expect(contentHash(m)).toHaveLength(64)
  })
})
