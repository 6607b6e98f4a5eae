import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, parseFormatPayload, toolPairing, toWire } from '@turnlog/core'

/** A format of one item per message whose items and calls an arbitrary can generate (openai-responses, openai-agents). */
export interface ItemFormatPropertiesSpec<P extends object> {
  readonly format: string
  readonly itemArb: fc.Arbitrary<P>
  readonly callArb: fc.Arbitrary<P>
}

const RUNS = { numRuns: 300 }

/**
 * The pure properties of an item format's generated payloads: kept verbatim by validation, given back
 * exactly by `toWire`, and `repairPairing` leaves no unanswered call and no orphan.
 */
export function describeItemFormatProperties<P extends object>({ format, itemArb, callArb }: ItemFormatPropertiesSpec<P>): void {
  describe(`${format} payloads (property)`, () => {
    it('every generated payload validates, kept verbatim (NUL, lone surrogates, unknown fields and kinds)', () => {
      fc.assert(
        fc.property(itemArb, (payload) => {
          expect(parseFormatPayload(payload, format)).toEqual(payload)
        }),
        RUNS,
      )
    })

    it('createMessage(payload, { format }) then toWire gives the payload back exactly', () => {
      fc.assert(
        fc.property(fc.array(itemArb, { maxLength: 6 }), (payloads) => {
          // given
          const messages = payloads.map((p) => createMessage(p, { format: format }))

          // when
          const wire = toWire(messages)

          // then
          expect(wire).toEqual(payloads)
          expect(JSON.stringify(wire)).toBe(JSON.stringify(payloads))
        }),
        RUNS,
      )
    })

    it('repairPairing leaves no unanswered call and no orphan, and its synthetic results are valid payloads of the format', () => {
      fc.assert(
        fc.property(fc.array(itemArb, { maxLength: 6 }), callArb, (before, call) => {
          // given: any items, then a call nothing answers
          const messages = [...before, call].map((p) => createMessage(p, { format: format }))

          // when
          const wire = toWire(messages, { repairPairing: true })

          // then
          const again = wire.map((p) => createMessage(p as object, { format: format }))
          const pairing = toolPairing(again)
          expect(pairing.unanswered).toEqual([])
          expect(pairing.orphans).toEqual([])
          expect(pairing.ok).toBe(true)
        }),
        RUNS,
      )
    })
  })
}
