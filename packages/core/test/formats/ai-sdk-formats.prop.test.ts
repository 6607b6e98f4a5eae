/**
 * The AI SDK formats (`ai-sdk-ui`, `ai-sdk-model`) over generated payloads: every payload validates and
 * round-trips exactly through createMessage → toWire (NUL, lone surrogates, unknown kinds); the pairing
 * repair of a generated sequence leaves no unanswered call, in the format's own shape.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  createMessage,
  isRedactedPayload,
  parseFormatPayload,
  parseMessage,
  redactedPayload,
  serializeMessage,
  toolPairing,
  toWire,
} from '@turnlog/core'
import { aiSdkModelPayloadArb, aiSdkModelPayloadArbWith, aiSdkUiPayloadArb, aiSdkUiPayloadArbWith, toolCallIdArb } from '@turnlog/testing'

const RUNS = { numRuns: 200 }
/** A small pool of call ids, so calls and results of different messages meet. */
const pooledIdArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('call_a', 'call_b', 'call_c') },
  { weight: 1, arbitrary: toolCallIdArb },
)

const FORMATS = [
  {
    format: 'ai-sdk-ui',
    payload: aiSdkUiPayloadArb as fc.Arbitrary<object>,
    sequence: fc.array(aiSdkUiPayloadArbWith(pooledIdArb) as fc.Arbitrary<object>, { maxLength: 8 }),
  },
  {
    format: 'ai-sdk-model',
    payload: aiSdkModelPayloadArb as fc.Arbitrary<object>,
    sequence: fc.array(aiSdkModelPayloadArbWith(pooledIdArb) as fc.Arbitrary<object>, { maxLength: 8 }),
  },
] as const

describe.each(FORMATS)('$format (properties)', ({ format, payload, sequence }) => {
  it('every generated payload validates, and createMessage → serialize/parse → toWire round-trips exactly', () => {
    fc.assert(
      fc.property(payload, (p) => {
        expect(JSON.stringify(parseFormatPayload(p, format))).toBe(JSON.stringify(p))
        const m = createMessage<object>(p, { format })
        const back = parseMessage<object>(serializeMessage(m))
        expect(back.format).toBe(format)
        const wire = toWire([m])
        expect(JSON.stringify(wire)).toBe(JSON.stringify([p]))
        expect(JSON.stringify(toWire([back]))).toBe(JSON.stringify([p]))
        expect(wire[0]).not.toBe(m.payload)
      }),
      RUNS,
    )
  })

  it("a redaction's placeholder is a valid payload of the format, a placeholder, pairing as the payload did", () => {
    fc.assert(
      fc.property(payload, (p) => {
        const placeholder = redactedPayload(p, format)
        expect(() => parseFormatPayload(placeholder, format)).not.toThrow()
        expect(isRedactedPayload(placeholder, format)).toBe(true)
        expect(redactedPayload(placeholder, format)).toEqual(placeholder)
        const m = createMessage<object>(p, { format })
        const r = createMessage<object>(placeholder as object, { format, id: m.id })
        expect(toolPairing([r])).toEqual(toolPairing([m]))
      }),
      RUNS,
    )
  })

  it('the pairing repair leaves no unanswered call, no orphan, no second result and no call made twice, and every repaired payload is valid for the format', () => {
    fc.assert(
      fc.property(sequence, (payloads) => {
        const messages = payloads.map((p) => createMessage<object>(p, { format }))
        const wire = toWire(messages, { repairPairing: true }) as object[]
        for (const w of wire) parseFormatPayload(w, format)
        const repaired = toolPairing(wire.map((p) => createMessage<object>(p, { format })))
        expect(repaired.unanswered).toEqual([])
        expect(repaired.orphans).toEqual([])
        expect(repaired.duplicates).toEqual([])
        // each call once: no open part left beside (or before) the answered part of its call
        expect(repaired.duplicateCalls).toEqual([])
        // the log is untouched
        expect(JSON.stringify(messages.map((m) => m.payload))).toBe(JSON.stringify(payloads))
      }),
      RUNS,
    )
  })
})
