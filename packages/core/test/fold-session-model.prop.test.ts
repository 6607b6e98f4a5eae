/**
 * Attacks the pure projection `foldSession` (docs/guarantees.md, "Projections"; packages/core/README.md,
 * "Events, fold and transcript") with random logs of every event type a store writes (appends with tool
 * calls and results, revisions, streaming and finalization, rewinds, compactions with a slow summary and
 * appends in between, redactions), checked against a small independent model:
 *
 * - the live list is the model's (order by seq, a summary at its first covered message, appends made
 *   while the summary was pending stay after it); nothing a store writes is an anomaly;
 * - time travel: `foldSession(events, { at: k })` is the fold of the first k events;
 * - every live message carries its latest content and the hash of that content; the transcript lists
 *   every content version once, in seq order, exactly one current version per message;
 * - a redaction keeps the tool-call pairing of the live list (the placeholder keeps pairing ids) and
 *   the content hashes;
 * - the caller's live list (the fold's, with scaffolding between its messages) after `applyRewind`,
 *   `applyCompact` or `applyRevision` holds exactly the fold's live list after that write, scaffolding
 *   kept where it stood (docs/guarantees.md, "The caller's live list"), except after a rewind point.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  applyCompact,
  applyRevision,
  applyRewind,
  contentHash,
  createMessage,
  foldSession,
  liveMessages,
  newSessionId,
  toolPairing,
  transcriptOf,
  withStatus,
  type ChatMessage,
  type Message,
  type MessageId,
  type SessionState,
  type StoredEvent,
} from '@turnlog/core'
import { EventLog, coverage } from './support/event-log.js'

const RUNS = { numRuns: 200 }
const CALLS = ['call_1', 'call_2', 'call_3']

type Op =
  | { readonly kind: 'append'; readonly payload: ChatMessage; readonly partial: boolean }
  | { readonly kind: 'revise'; readonly pick: number; readonly text: string; readonly partial: boolean }
  | { readonly kind: 'finalize'; readonly pick: number }
  | { readonly kind: 'rewind'; readonly pick: number }
  | { readonly kind: 'compact'; readonly from: number; readonly count: number; readonly between: number }
  | { readonly kind: 'redact'; readonly pick: number }

const payloadArb: fc.Arbitrary<ChatMessage> = fc.oneof(
  fc.string({ maxLength: 4 }).map((content) => ({ role: 'user', content }) as ChatMessage),
  fc.uniqueArray(fc.constantFrom(...CALLS), { minLength: 1, maxLength: 2 }).map(
    (ids) =>
      ({
        role: 'assistant',
        content: null,
        tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
      }) as ChatMessage,
  ),
  fc.constantFrom(...CALLS).map((id) => ({ role: 'tool', tool_call_id: id, content: `r ${id}` }) as ChatMessage),
)

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), payload: payloadArb, partial: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('revise' as const),
      pick: fc.nat(),
      text: fc.string({ maxLength: 3 }),
      partial: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('finalize' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rewind' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      from: fc.nat(),
      count: fc.integer({ min: 1, max: 3 }),
      between: fc.nat(2),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('redact' as const), pick: fc.nat() }) },
)

interface Model {
  live: MessageId[]
  /** Latest content of every message ever appended. */
  readonly content: Map<MessageId, Message>
  readonly partial: Set<MessageId>
  readonly redacted: Set<MessageId>
}

/** Writes `ops` as a store would (only valid events), and the model of what they mean. */
function play(ops: readonly Op[], redact: boolean): { readonly log: EventLog; readonly model: Model } {
  const log = new EventLog(newSessionId())
  const model: Model = { live: [], content: new Map(), partial: new Set(), redacted: new Set() }
  const pick = (n: number): MessageId | undefined => model.live[n % Math.max(1, model.live.length)]
  // ids derived from a counter: two plays of the same ops name the same messages
  let minted = 0
  const next = () => ({ externalId: String(++minted), scope: 'fold-model' })
  const append = (payload: ChatMessage, partial: boolean): Message => {
    const m = createMessage(payload, partial ? { ...next(), status: 'partial' } : next())
    log.append(m)
    model.content.set(m.id, m)
    if (partial) model.partial.add(m.id)
    return m
  }
  for (const op of ops) {
    switch (op.kind) {
      case 'append':
        model.live.push(append(op.payload, op.partial).id)
        break
      case 'revise': {
        const id = pick(op.pick)
        const old = id === undefined ? undefined : model.content.get(id)
        if (id === undefined || old === undefined || model.redacted.has(id)) break
        const payload = {
          ...old.payload,
          content: `${typeof old.payload.content === 'string' ? old.payload.content : ''}+${op.text}`,
        } as ChatMessage
        log.revise(withStatus(old, undefined), payload, op.partial ? { status: 'partial' } : {})
        model.content.set(id, createMessage(payload, { id }))
        if (op.partial) model.partial.add(id)
        else model.partial.delete(id)
        break
      }
      case 'finalize': {
        const id = pick(op.pick)
        if (id === undefined || !model.partial.has(id)) break
        log.finalize(id)
        model.partial.delete(id)
        break
      }
      case 'rewind': {
        const id = pick(op.pick)
        if (id === undefined) break
        const at = model.live.indexOf(id)
        const gone = model.live.slice(at)
        log.retract(gone, { from: id })
        model.live = model.live.slice(0, at)
        break
      }
      case 'compact': {
        if (model.live.length === 0) break
        const from = op.from % model.live.length
        const covered = model.live.slice(from, from + op.count)
        // the summary is appended deferred; appends may land while it is being written
        const summary = createMessage({ role: 'system', content: `summary of ${covered.length}` }, next())
        log.append(summary, { deferred: true })
        model.content.set(summary.id, summary)
        const between: MessageId[] = []
        for (let i = 0; i < op.between; i++) between.push(append({ role: 'user', content: `meanwhile ${i}` }, false).id)
        model.live.push(...between)
        log.compact(coverage(...covered.map((id) => model.content.get(id) as Message)), [summary.id])
        const at = model.live.indexOf(covered[0] as MessageId)
        model.live = [
          ...model.live.slice(0, at).filter((id) => !covered.includes(id)),
          summary.id,
          ...model.live.slice(at).filter((id) => !covered.includes(id)),
        ]
        break
      }
      case 'redact': {
        const id = pick(op.pick)
        if (id === undefined || model.redacted.has(id)) break
        // a play without redactions skips the event only, so both plays write the same other events
        if (redact) log.redact(id)
        model.redacted.add(id)
        break
      }
    }
  }
  return { log, model }
}

/** A comparable view of a folded state. */
function view(state: SessionState): unknown {
  return {
    version: state.version,
    live: state.live,
    anomalies: state.anomalies,
    messages: liveMessages(state).map((m) => ({ id: m.id, payload: m.payload, status: m.status, hash: contentHash(m) })),
    transcript: transcriptOf(state).map((t) => ({
      seq: t.seq,
      id: t.message.id,
      revision: t.revision,
      status: t.status,
      changedBy: t.changedBy,
    })),
  }
}

/** Fresh copies of events (the fold freezes the payloads it is given). */
const copies = (events: readonly StoredEvent[]): StoredEvent[] => JSON.parse(JSON.stringify(events)) as StoredEvent[]

describe('foldSession against a model of the log (properties)', () => {
  it('folds any log a store writes into the model live list, with latest contents and their hashes, and no anomaly', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 25 }), (ops) => {
        // given
        const { log, model } = play(ops, false)

        // when
        const state = foldSession(copies(log.events))

        // then
        expect(state.anomalies).toEqual([])
        expect(state.version).toBe(log.events.length)
        expect(state.live).toEqual(model.live)
        for (const m of liveMessages(state)) {
          const latest = model.content.get(m.id) as Message
          expect(m.payload).toEqual(latest.payload)
          expect(contentHash(m)).toBe(contentHash(latest))
          expect(contentHash({ payload: JSON.parse(JSON.stringify(m.payload)) as unknown })).toBe(contentHash(latest))
          expect(m.status === 'partial').toBe(model.partial.has(m.id))
        }
        // then: the transcript has each content version once, in seq order, one current version per message
        const transcript = transcriptOf(state)
        expect(transcript.map((t) => t.seq)).toEqual([...transcript.map((t) => t.seq)].sort((a, b) => a - b))
        expect(new Set(transcript.map((t) => t.seq)).size).toBe(transcript.length)
        const current = transcript.filter((t) => t.status !== 'superseded-revision').map((t) => t.message.id)
        expect([...current].sort()).toEqual([...model.content.keys()].sort())
      }),
      RUNS,
    )
  })

  it('time travel: the state at version k is the fold of the first k events', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 20 }), fc.nat(), (ops, k) => {
        // given
        const { log } = play(ops, true)
        const at = log.events.length === 0 ? 0 : k % (log.events.length + 1)

        // when
        const travelled = foldSession(copies(log.events), { at })
        const prefix = foldSession(copies(log.events.slice(0, at)))

        // then
        expect(view(travelled)).toEqual(view(prefix))
      }),
      RUNS,
    )
  })

  it('a redaction keeps the live list, its tool-call pairing and its content hashes', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 25 }), (ops) => {
        // given: the same log with and without its redactions
        const { log: plain } = play(ops, false)
        const { log: redacted, model } = play(ops, true)

        // when
        const a = foldSession(copies(plain.events))
        const b = foldSession(copies(redacted.events))

        // then
        expect(b.anomalies).toEqual([])
        expect(b.live).toEqual(a.live)
        const pairing = (s: SessionState) => toolPairing(liveMessages(s))
        expect(pairing(b)).toEqual(pairing(a))
        expect(liveMessages(b).map((m) => contentHash(m))).toEqual(liveMessages(a).map((m) => contentHash(m)))
        for (const m of liveMessages(b)) if (model.redacted.has(m.id)) expect(JSON.stringify(m.payload)).toContain('[redacted]')
      }),
      RUNS,
    )
  })

  it("applyTo: the caller's list after a rewind, a compaction or a revision holds the fold's live list after it, scaffolding kept", () => {
    const finalArb = fc.record({
      kind: fc.constantFrom('rewind' as const, 'compact' as const, 'revise' as const),
      pick: fc.nat(),
      count: fc.integer({ min: 1, max: 3 }),
    })
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 4 }), finalArb, (ops, nudges, last) => {
        // given: the log, and the caller's list: the fold's live list with scaffolding between its messages
        const { log } = play(ops, true)
        const live: Message[] = [...liveMessages(foldSession(copies(log.events)))]
        if (live.length === 0) return
        for (const at of nudges)
          live.splice(at % (live.length + 1), 0, createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true }))
        const durable = live.filter((m) => m.ephemeral !== true)
        const target = durable[last.pick % durable.length] as Message

        // when: the write, and what the caller's list becomes
        let after: Message[]
        if (last.kind === 'rewind') {
          const gone = durable.slice(durable.indexOf(target)).map((m) => m.id)
          log.retract(gone, { from: target.id })
          after = applyRewind(live, { retracted: gone })
        } else if (last.kind === 'compact') {
          const covered = durable.slice(durable.indexOf(target), durable.indexOf(target) + last.count)
          const summary = createMessage({ role: 'system', content: 'summary' })
          log.append(summary, { deferred: true }).compact(coverage(...covered), [summary.id])
          after = applyCompact(live, { covered: covered.map((m) => m.id), summary })
        } else {
          const payload = { role: 'user', content: 'revised' } as ChatMessage
          log.revise(withStatus(target, undefined), payload)
          after = applyRevision(live, { message: createMessage(payload, { id: target.id, createdAt: target.createdAt }) })
        }

        // then: the durable messages are the fold's live list, in order, with its contents
        const state = foldSession(copies(log.events))
        expect(state.anomalies).toEqual([])
        const kept = after.filter((m) => m.ephemeral !== true)
        expect(kept.map((m) => m.id)).toEqual(state.live)
        expect(kept.map((m) => contentHash(m))).toEqual(liveMessages(state).map((m) => contentHash(m)))
        // then: scaffolding stays, in its place, except after a rewind point
        const cut = last.kind === 'rewind' ? live.indexOf(target) : live.length
        expect(after.filter((m) => m.ephemeral === true)).toEqual(live.slice(0, cut).filter((m) => m.ephemeral === true))
      }),
      RUNS,
    )
  })
})
