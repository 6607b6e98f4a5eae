import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { contentHash, createMessage, isMessage, parseMessage, serializeMessage } from '@turnlog/core'
import { messageArb, weirdStringArb } from '@turnlog/testing'

const RUNS = { numRuns: 300 }

describe('serializeMessage / parseMessage (properties)', () => {
  it('round-trips every message: deep-equal, same key order, same hash', () => {
    fc.assert(
      fc.property(messageArb, (m) => {
        // when
        const text = serializeMessage(m)
        const back = parseMessage(text)

        // then
        expect(back).toEqual(m)
        expect(isMessage(back)).toBe(true)
        expect(serializeMessage(back)).toBe(text)
        expect(contentHash(back)).toBe(contentHash(m))
      }),
      RUNS,
    )
  })

  it('keeps NUL, lone surrogates and astral characters byte for byte', () => {
    fc.assert(
      fc.property(
        weirdStringArb,
        weirdStringArb,
        fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '😀', '\ud83d\ude00\ud83d', '\u202e'),
        (a, b, c) => {
          // given
          const content = a + c + b
          const m = createMessage({ role: 'tool', tool_call_id: `call_${c}`, content, [c]: c }, { externalId: `${b}${c}${a}`, scope: null })

          // when
          const back = parseMessage(serializeMessage(m))

          // then
          expect(back.payload.content).toBe(content)
          expect(back.payload[c]).toBe(c)
          expect(back.payload.tool_call_id).toBe(`call_${c}`)
          expect(back.externalId).toBe(`${b}${c}${a}`)
          expect(back.id).toBe(m.id)
          expect(contentHash(back)).toBe(contentHash(m))
        },
      ),
      RUNS,
    )
  })

  it('writes well-formed text (lone surrogates escaped) that survives a UTF-8 encode/decode', () => {
    fc.assert(
      fc.property(messageArb, (m) => {
        // given
        const text = serializeMessage(m)

        // when: what a file, a socket or a Postgres text column does with it
        const decoded = new TextDecoder().decode(new TextEncoder().encode(text))

        // then
        expect(decoded).toBe(text)
        expect(parseMessage(decoded)).toEqual(m)
      }),
      RUNS,
    )
  })
})
