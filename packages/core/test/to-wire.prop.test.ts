import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  createMessage,
  toWire,
  toolCallIds,
  toolPairing,
  toolResultId,
  type ChatMessage,
  type Message,
  type MessageId,
  type WireMessage,
} from '@turnlog/core'
import { messageArb } from '@turnlog/testing'
import { SYNTHETIC, checkRepairedWire } from './support/repair-pairing.js'

const RUNS = { numRuns: 300 }
const ENVELOPE_KEYS = ['id', 'createdAt', 'ephemeral', 'externalId', 'status'] as const

/** Lists of messages whose tool calls and results share a small pool of call ids, so that calls
 *  get answered, left unanswered, answered twice or answered before they are made, and that one id
 *  is called twice (in one message, or again in a later one). */
const CALL_IDS = ['call_a', 'call_b', 'call_c', 'call_d']
const pairingListArb: fc.Arbitrary<Message[]> = fc.array(
  fc.oneof(
    fc.array(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 }).chain((ids) =>
      fc.constantFrom<'id' | 'call_id'>('id', 'call_id').map((key) =>
        createMessage({
          role: 'assistant',
          content: null,
          tool_calls: ids.map((id) => ({ [key]: id, type: 'function', function: { name: 'f', arguments: '{}' } })),
        }),
      ),
    ),
    fc
      .tuple(fc.constantFrom(...CALL_IDS), fc.constantFrom<'tool_call_id' | 'call_id'>('tool_call_id', 'call_id'))
      .map(([id, key]) => createMessage({ role: 'tool', [key]: id, content: `result of ${id}` })),
    fc
      .tuple(fc.constantFrom('user', 'assistant'), fc.boolean())
      .map(([role, ephemeral]) => createMessage({ role, content: role }, { ephemeral })),
    messageArb,
  ),
  { maxLength: 12 },
)

/**
 * What the repair keeps of an assistant message, given the call ids opened before it (updated): each
 * call id once, none opened before; no `tool_calls` key when none is left, and nothing at all when
 * no content is left either (providers refuse an empty assistant message and an empty list alike).
 */
function withCallsOnce(payload: ChatMessage, opened: Set<string>): ChatMessage | undefined {
  if (payload.role !== 'assistant' || !Array.isArray(payload.tool_calls)) return payload
  const calls = payload.tool_calls.filter((call) => {
    const id = typeof call === 'object' && call !== null ? (call.id ?? call.call_id) : undefined
    if (typeof id !== 'string') return true
    if (opened.has(id)) return false
    opened.add(id)
    return true
  })
  if (calls.length === payload.tool_calls.length) return payload
  const { tool_calls: _all, ...rest } = payload
  if (calls.length > 0) return { ...payload, tool_calls: calls }
  return rest.content === null || rest.content === undefined ? undefined : rest
}

const asMessages = (wire: readonly WireMessage[]) =>
  wire.map((payload, i) => ({ id: `wire-${i}` as MessageId, payload: payload as ChatMessage }))

function assertNoEnvelopeLeak(messages: readonly Message[], wire: readonly WireMessage[]): void {
  const payloads = new Set(messages.map((m) => JSON.stringify(m.payload)))
  for (const w of wire) {
    const source = payloads.has(JSON.stringify(w)) ? (JSON.parse(JSON.stringify(w)) as Record<string, unknown>) : null
    for (const key of ENVELOPE_KEYS) {
      if (Object.prototype.hasOwnProperty.call(w, key))
        expect(source !== null && Object.prototype.hasOwnProperty.call(source, key)).toBe(true)
    }
  }
  const text = JSON.stringify(wire)
  for (const m of messages) if (!JSON.stringify(m.payload).includes(m.id)) expect(text).not.toContain(m.id)
}

describe('toWire (properties)', () => {
  it('never adds an envelope key the payload did not have, and is exactly the payloads', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 6 }), (messages) => {
        // when
        const wire = toWire(messages)

        // then
        expect(wire).toEqual(messages.map((m) => m.payload))
        wire.forEach((w, i) => expect(Object.keys(w)).toEqual(Object.keys(messages[i]?.payload ?? {})))
        assertNoEnvelopeLeak(messages, wire)
      }),
      RUNS,
    )
  })

  it('never adds an envelope key with repairPairing either', () => {
    fc.assert(
      fc.property(pairingListArb, (messages) => {
        assertNoEnvelopeLeak(messages, toWire(messages, { repairPairing: true }))
      }),
      RUNS,
    )
  })

  it('repairs any list into one providers accept, keeping the original messages in order', () => {
    fc.assert(
      fc.property(pairingListArb, (messages) => {
        checkRepairedWire<WireMessage>(messages, (wire, pairing) => {
          // then: paired
          expect(toolPairing(asMessages(wire)).ok).toBe(true)

          // then: what remains of the input is the input minus orphans and extra results, each call id
          // called once (a repeated tool_calls entry left out), in order
          const dropped = new Set<string>([
            ...pairing.orphans.map((o) => o.messageId),
            ...pairing.duplicates.flatMap((d) => d.messageIds.slice(1)),
          ])
          const synthetic = wire.filter((w) => w.content === SYNTHETIC)
          const kept = wire.filter((w) => !synthetic.includes(w))
          const opened = new Set<string>()
          const expected = messages.filter((m) => !dropped.has(m.id)).flatMap((m) => withCallsOnce(m.payload, opened) ?? [])
          expect(kept).toEqual(expected)
          expect(synthetic.map((s) => toolResultId(s as ChatMessage)).sort()).toEqual(pairing.unanswered.map((u) => u.toolCallId).sort())

          // then: each synthetic result sits in the block of results right after its call
          wire.forEach((w, i) => {
            if (!synthetic.includes(w)) return
            let j = i - 1
            while (j >= 0 && wire[j]?.role === 'tool') j--
            expect(toolCallIds(wire[j] as ChatMessage)).toContain(toolResultId(w as ChatMessage))
          })
        })
      }),
      RUNS,
    )
  })
})
