import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, parseFormatPayload, toolPairing, toWire } from '@turnlog/core'
import { openAIResponsesItemArb, openAIResponsesCallArb } from '@turnlog/testing'

const FORMAT = 'openai-responses'
const RUNS = { numRuns: 300 }

describe('openai-responses payloads (property)', () => {
  it('every generated payload validates, kept verbatim (NUL, lone surrogates, unknown fields and kinds)', () => {
    fc.assert(
      fc.property(openAIResponsesItemArb, (payload) => {
        expect(parseFormatPayload(payload, FORMAT)).toEqual(payload)
      }),
      RUNS,
    )
  })

  it('createMessage(payload, { format }) then toWire gives the payload back exactly', () => {
    fc.assert(
      fc.property(fc.array(openAIResponsesItemArb, { maxLength: 6 }), (payloads) => {
        // given
        const messages = payloads.map((p) => createMessage(p, { format: FORMAT }))

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
      fc.property(fc.array(openAIResponsesItemArb, { maxLength: 6 }), openAIResponsesCallArb, (before, call) => {
        // given: any items, then a call nothing answers
        const messages = [...before, call].map((p) => createMessage(p, { format: FORMAT }))

        // when
        const wire = toWire(messages, { repairPairing: true })

        // then
        const again = wire.map((p) => createMessage(p as object, { format: FORMAT }))
        const pairing = toolPairing(again)
        expect(pairing.unanswered).toEqual([])
        expect(pairing.orphans).toEqual([])
        expect(pairing.ok).toBe(true)
      }),
      RUNS,
    )
  })
})
