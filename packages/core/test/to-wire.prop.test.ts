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
 *  is called twice (in one message, again in a later one while open, or again after its result). */
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
 * An independent model of the repair of an `openai-chat` list: each call id's calls in order; a call
 * of an id whose call is still open is left out (a repeated `tool_calls` entry; no `tool_calls` key
 * when none is left, nothing at all when no content is left either); a call of an id a result
 * already answered is a new call, sent as `<id>_<n>` (more `_` while the list calls that id), it and
 * its results; a result with no call open or already answered (an orphan, a second result) is left
 * out. Returns the messages kept, as sent, and the names of the calls no result answers.
 */
function modelRepair(messages: readonly Message[]): { kept: ChatMessage[]; unanswered: string[] } {
  const idOf = (call: unknown): string | undefined => {
    const c = call as { id?: unknown; call_id?: unknown } | null
    const id = typeof c === 'object' && c !== null ? (c.id ?? c.call_id) : undefined
    return typeof id === 'string' ? id : undefined
  }
  const used = new Set<string>()
  for (const m of messages)
    if (m.payload.role === 'assistant' && Array.isArray(m.payload.tool_calls)) for (const c of m.payload.tool_calls) used.add(idOf(c) ?? '')
  const calls = new Map<string, { n: number; answered: boolean; name: string }>()
  const kept: ChatMessage[] = []
  for (const m of messages) {
    const p = m.payload
    if (p.role === 'tool') {
      const id = p.tool_call_id ?? p.call_id
      const call = typeof id === 'string' ? calls.get(id) : undefined
      if (call === undefined || call.answered) continue
      call.answered = true
      kept.push(
        call.name === id ? p : { ...p, [p.tool_call_id !== undefined && p.tool_call_id !== null ? 'tool_call_id' : 'call_id']: call.name },
      )
      continue
    }
    if (p.role !== 'assistant' || !Array.isArray(p.tool_calls)) {
      kept.push(p)
      continue
    }
    let changed = false
    const out: unknown[] = []
    for (const c of p.tool_calls) {
      const id = idOf(c)
      if (id === undefined) {
        out.push(c)
        continue
      }
      const call = calls.get(id)
      if (call !== undefined && !call.answered) {
        changed = true
        continue
      }
      let name = id
      const n = call === undefined ? 1 : call.n + 1
      if (n > 1) {
        name = `${id}_${n}`
        while (used.has(name)) name += '_'
        used.add(name)
      }
      calls.set(id, { n, answered: false, name })
      if (name === id) out.push(c)
      else {
        changed = true
        const field = (c as { id?: unknown }).id !== undefined && (c as { id?: unknown }).id !== null ? 'id' : 'call_id'
        out.push({ ...(c as object), [field]: name })
      }
    }
    if (!changed) kept.push(p)
    else if (out.length > 0) kept.push({ ...p, tool_calls: out } as ChatMessage)
    else {
      const { tool_calls: _all, ...rest } = p
      if (rest.content !== null && rest.content !== undefined) kept.push(rest as ChatMessage)
    }
  }
  const unanswered = [...calls.values()].filter((c) => !c.answered).map((c) => c.name)
  return { kept, unanswered }
}

const asMessages = (wire: readonly WireMessage[]) =>
  wire.map((payload, i) => ({ id: `wire-${i}` as MessageId, payload: payload as ChatMessage }))

function assertNoEnvelopeLeak(messages: readonly Message[], wire: readonly WireMessage[]): void {
  const payloads = new Set(messages.map((m) => JSON.stringify(m.payload)))
  for (const w of wire) {
    const source = payloads.has(JSON.stringify(w)) ? (JSON.parse(JSON.stringify(w)) as Record<string, unknown>) : null
    for (const key of ENVELOPE_KEYS) {
      if (!Object.prototype.hasOwnProperty.call(w, key)) continue
      // a payload the repair rewrote (a call left out) has no identical source: then the key must be one
      // some payload had (a payload may hold a key named like an envelope field, e.g. `createdAt`)
      const had =
        source !== null
          ? Object.prototype.hasOwnProperty.call(source, key)
          : messages.some(
              (m) => typeof m.payload === 'object' && m.payload !== null && Object.prototype.hasOwnProperty.call(m.payload, key),
            )
      expect({ key, had }).toEqual({ key, had: true })
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

          // then: what remains of the input is the input minus orphans and extra results, each call
          // sent once (a repeated tool_calls entry left out; a reused id renamed), in order
          const synthetic = wire.filter((w) => w.content === SYNTHETIC)
          const kept = wire.filter((w) => !synthetic.includes(w))
          const model = modelRepair(messages)
          expect(kept).toEqual(model.kept)
          expect(synthetic.map((s) => toolResultId(s as ChatMessage)).sort()).toEqual(model.unanswered.sort())
          expect(pairing.unanswered.length).toBe(model.unanswered.length)

          // then: every call id is sent once
          const sent = wire.flatMap((w) => toolCallIds(w as ChatMessage))
          expect(new Set(sent).size).toBe(sent.length)

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
