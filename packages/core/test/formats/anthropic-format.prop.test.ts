import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  ANTHROPIC_FORMAT,
  anthropicFormat,
  createMessage,
  parseMessage,
  serializeMessage,
  toWire,
  toolPairing,
  type AnthropicContentBlock,
  type AnthropicMessageParam,
  type Message,
  type MessageId,
} from '@turnlog/core'
import { anthropicAnsweringArb, anthropicCallingArb, anthropicPayloadArb } from '@turnlog/testing'
import { SYNTHETIC, checkRepairedWire } from '../support/repair-pairing.js'

const RUNS = { numRuns: 300 }
const CALL_IDS = ['toolu_a', 'toolu_b', 'toolu_c', 'toolu_d']

const anthropic = (payload: AnthropicMessageParam): Message<AnthropicMessageParam> =>
  createMessage<AnthropicMessageParam>(payload, { format: ANTHROPIC_FORMAT })

/** Sessions whose calls and results share a small pool of ids: answered, unanswered, answered twice, answered before the call. */
const sessionArb: fc.Arbitrary<Message<AnthropicMessageParam>[]> = fc.array(
  fc
    .oneof(
      fc.uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 }).chain(anthropicCallingArb),
      fc.uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 2 }).chain(anthropicAnsweringArb),
      fc.constantFrom<AnthropicMessageParam>({ role: 'user', content: 'go on' }, { role: 'assistant', content: 'ok' }),
      anthropicPayloadArb,
    )
    .map(anthropic),
  { maxLength: 10 },
)

const blocks = (p: AnthropicMessageParam): readonly AnthropicContentBlock[] => (typeof p.content === 'string' ? [] : p.content)
const isSynthetic = (p: AnthropicMessageParam): boolean =>
  p.role === 'user' &&
  blocks(p).length > 0 &&
  blocks(p).every((b) => b.type === 'tool_result' && b['content'] === SYNTHETIC && b['is_error'] === true)

describe('anthropic format (properties)', () => {
  it('every generated payload validates and round-trips exactly through createMessage, serializeMessage and toWire', () => {
    fc.assert(
      fc.property(anthropicPayloadArb, (payload) => {
        // when
        const m = createMessage<AnthropicMessageParam>(payload, { format: ANTHROPIC_FORMAT })
        const [wire] = toWire([m])

        // then: kept verbatim (key order, NUL, lone surrogates, unknown fields and block types)
        expect(JSON.stringify(m.payload)).toBe(JSON.stringify(payload))
        expect(JSON.stringify(wire)).toBe(JSON.stringify(payload))
        expect(wire).toEqual(m.payload)
        expect(parseMessage(serializeMessage(m))).toEqual(m)
        expect(anthropicFormat.schema.safeParse(wire).success).toBe(true)
        anthropicFormat.preview(m.payload)
      }),
      RUNS,
    )
  })

  it("repairPairing leaves no unanswered call, no orphan and no duplicate, in the format's own shape, right after the call's results", () => {
    fc.assert(
      fc.property(sessionArb, (messages) => {
        checkRepairedWire<AnthropicMessageParam>(messages, (wire, pairing) => {
          // then: every wire message is a valid payload, and the list pairs
          for (const w of wire) expect(anthropicFormat.schema.safeParse(w).success).toBe(true)
          const rewired = wire.map((payload, i) => ({ id: `wire-${i}` as MessageId, payload, format: ANTHROPIC_FORMAT }))
          expect(toolPairing(rewired).ok).toBe(true)

          // then: one synthetic is_error tool_result per unanswered call, in a user message after its call and the call's results
          const synthetic = wire.flatMap((w, i) =>
            isSynthetic(w) ? blocks(w).map((b) => ({ id: b['tool_use_id'] as string, at: i })) : [],
          )
          // (a reused id's later call goes as `<id>_<n>`)
          const reusedIds = new Set(pairing.reusedCalls.map((r) => r.toolCallId))
          const asLogged = (id: string): string => {
            const base = id.replace(/_\d+_*$/, '')
            return base !== id && reusedIds.has(base) ? base : id
          }
          expect(synthetic.map((s) => asLogged(s.id)).sort()).toEqual(pairing.unanswered.map((u) => u.toolCallId).sort())
          for (const s of synthetic) {
            let j = s.at - 1
            while (j >= 0 && wire[j]?.role === 'user' && blocks(wire[j]!).some((b) => b.type === 'tool_result')) j--
            expect(anthropicFormat.toolCalls(wire[j]!)).toContain(s.id)
          }

          // then: without orphans, second results and messages that call an id again, the input's payloads are all there, in order
          const dropped = new Set([
            ...pairing.orphans.map((o) => o.messageId),
            ...pairing.duplicates.flatMap((d) => d.messageIds.slice(1)),
            ...pairing.duplicateCalls.flatMap((d) => d.messageIds.slice(1)),
          ])
          // (a message that names a reused id may go renamed)
          const reused = new Set(pairing.reusedCalls.map((r) => r.toolCallId))
          const names = (m: Message<AnthropicMessageParam>) => [
            ...anthropicFormat.toolCalls(m.payload),
            ...anthropicFormat.toolResults(m.payload),
          ]
          const kept = wire.filter((w) => !isSynthetic(w))
          const untouched = messages.filter((m) => !dropped.has(m.id) && !names(m).some((id) => reused.has(id))).map((m) => m.payload)
          for (const p of untouched) expect(kept).toContainEqual(p)

          // then: every tool_use id is sent once (the API refuses a repeated one), a reused id renamed
          const sent = wire.flatMap((w) => anthropicFormat.toolCalls(w))
          expect(new Set(sent).size).toBe(sent.length)
          const calls = messages.flatMap((m) => anthropicFormat.toolCalls(m.payload)).length
          const repeated = pairing.duplicateCalls.reduce((n, d) => n + d.messageIds.length - 1, 0)
          expect(sent.length).toBe(calls - repeated)
        })
      }),
      RUNS,
    )
  })

  it('a generated unanswered call is repaired by an is_error tool_result user message', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 4 }).chain(anthropicCallingArb), (payload) => {
        // given
        const m = anthropic(payload)

        // when
        const wire = toWire([m], { repairPairing: true, interruptedContent: SYNTHETIC }) as AnthropicMessageParam[]

        // then
        expect(wire).toEqual([
          m.payload,
          {
            role: 'user',
            content: anthropicFormat
              .toolCalls(payload)
              .map((id) => ({ type: 'tool_result', tool_use_id: id, content: SYNTHETIC, is_error: true })),
          },
        ])
        expect(toolPairing(wire.map((p, i) => ({ id: `w${i}` as MessageId, payload: p, format: ANTHROPIC_FORMAT }))).ok).toBe(true)
      }),
      RUNS,
    )
  })
})
