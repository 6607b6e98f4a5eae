/**
 * The store hashes messages with Node's SHA-256 (`messageContentHash`) where core's `contentHash` uses a
 * portable one; both memoise on the frozen payload, so a difference would be stored, exported and
 * compared as the message's content hash. This pins the two together: the same hash for every payload
 * the generators make (lone surrogates, `\u0000`, astral and RTL text, long runs, both formats).
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { contentHash, createMessage, type ChatMessage } from '@turnlog/core'
import { chatPayloadArb, formatPayloadArb, weirdStringArb } from '@turnlog/testing'
import { messageContentHash } from '../src/message-content-hash.js'

const RUNS = { numRuns: 300 }

describe('messageContentHash (properties)', () => {
  it('equals contentHash for every payload, each computed on its own copy', () => {
    fc.assert(
      fc.property(formatPayloadArb, ({ format, payload }) => {
        // given: two copies, so neither reads the other's memoised hash
        const forStore = createMessage(payload as ChatMessage, { format })
        const forCore = createMessage(payload as ChatMessage, { format })

        // when
        const native = messageContentHash(forStore)

        // then
        expect(native).toBe(contentHash(forCore))
        expect(native).toMatch(/^[0-9a-f]{64}$/)
        // memoised: core's contentHash of the same message reads the store's hash
        expect(contentHash(forStore)).toBe(native)
      }),
      RUNS,
    )
  })

  it('equals contentHash for strings of lone surrogates, NUL and astral characters', () => {
    fc.assert(
      fc.property(weirdStringArb, weirdStringArb, (content, key) => {
        // given
        const payload = { role: 'user', content, [`x_${key}`]: [content, { [key]: content }] } as unknown as ChatMessage
        const m1 = createMessage(payload)
        const m2 = createMessage(payload)

        // when / then
        expect(messageContentHash(m1)).toBe(contentHash(m2))
      }),
      RUNS,
    )
  })

  it('agrees on fixed texts: a lone surrogate, NUL, an emoji, and a 1 KB chat message', () => {
    for (const content of ['\ud800', 'a\udc00b', '\u0000', '😀', 'שלום', 'x'.repeat(1100)]) {
      // given
      const payload: ChatMessage = { role: 'user', content }

      // when / then
      expect(messageContentHash(createMessage(payload))).toBe(contentHash(createMessage(payload)))
    }
    // a known value: SHA-256 of the canonical text {"content":"hi","role":"user"}
    expect(messageContentHash(createMessage({ role: 'user', content: 'hi' }))).toBe(
      '9017285104d1b249960a30732b8e92f6e2fb3acf8d8e4b2a16c116ad0c1ed211',
    )
  })

  it('equals contentHash of the bare payload, which is not memoised', () => {
    fc.assert(
      fc.property(chatPayloadArb, (payload) => {
        // given: a plain (unfrozen) copy of the payload, which contentHash hashes afresh
        const plain = JSON.parse(JSON.stringify(payload)) as ChatMessage

        // when / then
        expect(messageContentHash(createMessage(payload))).toBe(contentHash(plain))
      }),
      { numRuns: 100 },
    )
  })
})
