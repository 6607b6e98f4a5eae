import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, parseMessage, serializeMessage } from '@turnlog/core'
import { sha256 } from './support/independent-hashes.js'

describe('serializeMessage / parseMessage', () => {
  it('round-trips a 10 MB tool result with NUL, lone surrogates and astral characters', () => {
    // given: 10 MiB of UTF-16 units, weird characters sprinkled through
    const chunk = 'log line 0123456789 \u0000 \ud800 😀 שלום\n'
    const content = chunk.repeat(Math.ceil((10 * 1024 * 1024) / chunk.length)).slice(0, 10 * 1024 * 1024 - 1) + '\udc00'
    const m = createMessage({ role: 'tool', tool_call_id: 'call_big', content })

    // when
    const text = serializeMessage(m)
    const back = parseMessage(text)

    // then
    expect(back.payload.content).toHaveLength(10 * 1024 * 1024)
    expect(back.payload.content === content).toBe(true)
    expect(back.id).toBe(m.id)
    expect(contentHash(back)).toBe(contentHash(m))
    expect(contentHash(m)).toBe(sha256(`{"content":${JSON.stringify(content)},"role":"tool","tool_call_id":"call_big"}`))
  })
})
