/**
 * Differential tests of the SQL projection against the written spec (`projectStructure` in core), event
 * type by event type: per rule, a fast-check arbitrary of store commands that write mostly that event
 * type (plus the appends it needs), a runner that writes them through the store API, and after EVERY
 * command a comparison of `turnlog.live_messages` (what the inline trigger projection left) with
 * `projectStructure` over the session's stored events. A divergence names the rule (the event types the
 * command wrote), the command and both row lists. At the end of a history: `foldSession` (the pure fold)
 * agrees with both, and `rebuild` (after damaging the rows) leaves the spec's rows again, positions equal
 * to the trigger's.
 */
import { expect } from '@jest/globals'
import fc from 'fast-check'
import {
  contentHash,
  createMessage,
  foldSession,
  isTurnlogError,
  newEventId,
  newSessionId,
  projectStructure,
  toMessage,
  type ChatMessage,
  type Message,
  type MessageId,
  type ProjectionRow,
  type SessionId,
  type StoredEvent,
} from '@turnlog/core'
import { applyEvent, newStructure } from '@turnlog/core/internal'
import type { PostgresStore } from '@turnlog/postgres'
import { sql, type Kysely } from 'kysely'

/** A rule of the spec, named after the event type it is about (`mixed`: every command at once). */
export type Rule =
  | 'message_appended'
  | 'messages_retracted'
  | 'messages_compacted'
  | 'message_revised'
  | 'message_finalized'
  | 'message_redacted'
  | 'session_forked'
  | 'mixed'

/** Every rule, in the order the tests run them. */
export const RULES: readonly Rule[] = [
  'message_appended',
  'messages_retracted',
  'messages_compacted',
  'message_revised',
  'message_finalized',
  'message_redacted',
  'session_forked',
  'mixed',
]

/** One store call. `session` and `pick` are indexes taken modulo what exists; a pick ≡ 0 (mod 8) names any message ever created. */
export type DiffCommand =
  | {
      readonly kind: 'append'
      readonly session: number
      readonly fresh: readonly boolean[]
      readonly resend: number | null
      readonly flush: boolean
    }
  | { readonly kind: 'rewind'; readonly session: number; readonly pick: number; readonly mode: 'after' | 'from' }
  | { readonly kind: 'compact'; readonly session: number; readonly picks: readonly number[]; readonly summaries: readonly boolean[] }
  | { readonly kind: 'revise'; readonly session: number; readonly pick: number; readonly text: string; readonly partial: boolean }
  | { readonly kind: 'finalize'; readonly session: number; readonly pick: number; readonly text: string | null }
  | { readonly kind: 'redact'; readonly session: number; readonly pick: number }
  | { readonly kind: 'fork'; readonly session: number; readonly pick: number }

const session = fc.nat({ max: 3 })
const pick = fc.nat({ max: 255 })
const text = fc.constantFrom('a', 'b', 'ok', '')
/** Per new message: partial (streaming) or not. */
const fresh = fc.array(fc.boolean(), { minLength: 1, maxLength: 3 })

const arbs = {
  append: fc.record({ kind: fc.constant('append' as const), session, fresh, resend: fc.option(pick, { nil: null }), flush: fc.boolean() }),
  rewind: fc.record({ kind: fc.constant('rewind' as const), session, pick, mode: fc.constantFrom('after' as const, 'from' as const) }),
  compact: fc.record({
    kind: fc.constant('compact' as const),
    session,
    picks: fc.array(pick, { minLength: 1, maxLength: 3 }),
    summaries: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
  }),
  revise: fc.record({ kind: fc.constant('revise' as const), session, pick, text, partial: fc.boolean() }),
  finalize: fc.record({ kind: fc.constant('finalize' as const), session, pick, text: fc.option(text, { nil: null, freq: 2 }) }),
  redact: fc.record({ kind: fc.constant('redact' as const), session, pick }),
  fork: fc.record({ kind: fc.constant('fork' as const), session, pick }),
} satisfies Record<DiffCommand['kind'], fc.Arbitrary<DiffCommand>>

type Kind = DiffCommand['kind']
/** What each rule's histories are made of: the rule's own command(s), weighted up, and what they need. */
const MIX: Record<Rule, Partial<Record<Kind, number>>> = {
  message_appended: { append: 1 },
  messages_retracted: { append: 2, rewind: 3 },
  messages_compacted: { append: 2, compact: 3 },
  message_revised: { append: 2, revise: 3 },
  message_finalized: { append: 2, finalize: 3, revise: 1 },
  message_redacted: { append: 2, redact: 2, revise: 1, fork: 1 },
  // a fork inherits whatever the parent's history made of its messages
  session_forked: { append: 2, fork: 3, revise: 1, finalize: 1, compact: 1, rewind: 1 },
  mixed: { append: 3, rewind: 1, compact: 1, revise: 1, finalize: 1, redact: 1, fork: 1 },
}

/** Histories for `rule`: a first append on the root session, then up to `maxCommands` commands of the rule's mix. */
export function historyFor(rule: Rule, maxCommands = 10): fc.Arbitrary<DiffCommand[]> {
  const weighted = Object.entries(MIX[rule]).map(([kind, weight]) => ({
    weight,
    arbitrary: arbs[kind as Kind] as fc.Arbitrary<DiffCommand>,
  }))
  return fc
    .tuple(arbs.append, fc.array(fc.oneof(...weighted), { minLength: 1, maxLength: maxCommands }))
    .map(([first, rest]) => [{ ...first, session: 0, flush: false }, ...rest])
}

/** Counts of what the histories wrote: event types, and store refusals (by code). */
export interface DiffStats {
  histories: number
  comparisons: number
  events: Record<string, number>
  refused: Record<string, number>
}

/** Fresh statistics. */
export function newDiffStats(): DiffStats {
  return { histories: 0, comparisons: 0, events: {}, refused: {} }
}

interface TableRow extends ProjectionRow {
  readonly position: number
}

/** `turnlog.live_messages` of one session, in position order. */
export async function tableRows(store: PostgresStore, sid: SessionId): Promise<TableRow[]> {
  const { rows } = await sql<{ message_id: string; event_seq: string | number; partial: boolean; position: string | number }>`
    select message_id::text, event_seq, partial, position from turnlog.live_messages
     where session_id = ${sid} order by position`.execute(store.db)
  return rows.map((r) => ({
    messageId: r.message_id as MessageId,
    eventSeq: Number(r.event_seq),
    partial: r.partial,
    position: Number(r.position),
  }))
}

async function eventsOf(store: PostgresStore, sid: SessionId): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(sid)) out.push(e)
  return out
}

const strip = (rows: readonly TableRow[]): ProjectionRow[] =>
  rows.map(({ messageId, eventSeq, partial }) => ({ messageId, eventSeq, partial }))

/**
 * Compares the table with the spec for one session; on a difference throws an error naming the rule
 * (the event types written since `fromSeq`), `label` and both row lists. Returns the events and rows.
 */
export async function compareSession(
  store: PostgresStore,
  sid: SessionId,
  fromSeq: number,
  label: string,
): Promise<{ events: StoredEvent[]; rows: TableRow[] }> {
  const events = await eventsOf(store, sid)
  const rows = await tableRows(store, sid)
  const spec = projectStructure(events)
  const written = [...new Set(events.filter((e) => e.seq > fromSeq).map((e) => e.type))]
  const where = `rule ${written.join(' + ') || '(no new event)'} (seqs ${fromSeq + 1}..${events.length}) after ${label}, session ${sid}`
  // the store never writes an event the spec cannot apply
  expect({ where, anomalies: spec.anomalies }).toEqual({ where, anomalies: [] })
  expect({ where, table: strip(rows) }).toEqual({ where, table: spec.rows })
  // positions only order the rows: strictly increasing
  expect({ where, ordered: rows.every((r, i) => i === 0 || (rows[i - 1] as TableRow).position < r.position) }).toEqual({
    where,
    ordered: true,
  })
  return { events, rows }
}

const payloadOf = (partial: boolean, i: number): { payload: ChatMessage; partial: boolean } =>
  partial
    ? { payload: { role: 'assistant', content: `streaming ${i}` }, partial }
    : { payload: { role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` }, partial }

/**
 * Writes `commands` through `store` on a fresh root session (and the forks they make), comparing every
 * session of the history with the spec after each command, then the pure fold, then `rebuild` from
 * damaged rows. Store refusals (an unknown message, a conflict) are part of the history: counted, and
 * then the table must still be the spec of what was written.
 */
export async function runDifferential(store: PostgresStore, commands: readonly DiffCommand[], stats: DiffStats): Promise<void> {
  const root = await store.createSession()
  const sessions: SessionId[] = [root]
  const created: Message[] = []
  const seen = new Map<SessionId, number>([[root, 0]])
  const live = new Map<SessionId, readonly MessageId[]>([[root, []]])
  const sessionOf = (i: number): SessionId => sessions[i % sessions.length] as SessionId
  const streaming = new Map<SessionId, readonly MessageId[]>()
  /** A live message of `sid` (a streaming one when `preferPartial` and there is one), or, one pick in eight, any message. */
  const target = (sid: SessionId, p: number, preferPartial = false): MessageId => {
    const partial = preferPartial ? (streaming.get(sid) ?? []) : []
    const ids = partial.length > 0 ? partial : (live.get(sid) ?? [])
    if (p % 8 !== 0 && ids.length > 0) return ids[Math.floor(p / 8) % ids.length] as MessageId
    const any = [...created.map((m) => m.id), '0190f0f0-0000-7000-8000-000000000001' as MessageId]
    return any[Math.floor(p / 8) % any.length] as MessageId
  }
  const make = (partial: boolean): Message => {
    const { payload } = payloadOf(partial, created.length)
    const m = createMessage(payload, partial ? { status: 'partial' } : {})
    created.push(m)
    return m
  }

  for (const [n, c] of commands.entries()) {
    const sid = sessionOf(c.session)
    const label = `command #${n} ${JSON.stringify(c)}`
    try {
      switch (c.kind) {
        case 'append': {
          const batch = c.fresh.map(make)
          const old = c.resend === null || created.length === 0 ? undefined : created[c.resend % created.length]
          if (old && !batch.includes(old)) batch.unshift(toMessage({ ...old }))
          if (c.flush) {
            // the agent loop's call: the whole loaded list, the new messages and scaffolding, which is skipped
            const { messages } = await store.load(sid)
            const loaded = new Set(messages.map((m) => m.id))
            await store.flush(sid, [
              ...messages,
              ...batch.filter((m) => !loaded.has(m.id)),
              createMessage({ role: 'user', content: 'continue' }, { ephemeral: true }),
            ])
          } else {
            await store.append(sid, batch)
          }
          break
        }
        case 'rewind': {
          const at = target(sid, c.pick)
          await store.rewind(sid, c.mode === 'after' ? { after: at } : { from: at })
          break
        }
        case 'compact': {
          const covered = [...new Set(c.picks.map((p) => target(sid, p)))]
          await store.compact(sid, { covered, summary: c.summaries.map(make) })
          break
        }
        case 'revise':
          await store.revise(sid, target(sid, c.pick), { role: 'assistant', content: c.text }, { status: c.partial ? 'partial' : 'final' })
          break
        case 'finalize':
          await store.finalize(sid, target(sid, c.pick, true), c.text === null ? undefined : { role: 'assistant', content: c.text })
          break
        case 'redact':
          await store.redact(sid, target(sid, c.pick), { reason: 'test' })
          break
        case 'fork': {
          const child = await store.fork(sid, { at: target(sid, c.pick), id: newSessionId() })
          sessions.push(child)
          seen.set(child, 0)
          break
        }
      }
    } catch (error) {
      if (!isTurnlogError(error)) throw error
      stats.refused[`${c.kind}:${error.code}`] = (stats.refused[`${c.kind}:${error.code}`] ?? 0) + 1
    }
    // every session: a redaction writes into the forks holding a copy too
    for (const s of sessions) {
      const { events, rows } = await compareSession(store, s, seen.get(s) ?? 0, label)
      for (const e of events.slice(seen.get(s) ?? 0)) stats.events[e.type] = (stats.events[e.type] ?? 0) + 1
      seen.set(s, events.length)
      live.set(
        s,
        rows.map((r) => r.messageId),
      )
      streaming.set(
        s,
        rows.filter((r) => r.partial).map((r) => r.messageId),
      )
      stats.comparisons++
    }
  }

  // the pure fold agrees with the spec and the table; rebuild from damaged rows gives the trigger's rows again
  const inline = new Map<SessionId, TableRow[]>()
  for (const s of sessions) {
    const { events, rows } = await compareSession(store, s, seen.get(s) ?? 0, 'the history')
    const folded = foldSession(events)
    const foldRows = folded.live.map((id) => {
      const r = folded.messages.get(id)
      return { messageId: id, eventSeq: r?.revisions[r.revisions.length - 1]?.seq ?? -1, partial: r?.partial ?? true }
    })
    expect({ session: s, fold: foldRows }).toEqual({ session: s, fold: strip(rows) })
    inline.set(s, rows)
  }
  for (const [i, s] of sessions.entries()) {
    await damageLiveMessages(store.db, s, i)
    const rebuilt = await store.rebuild({ sessionId: s })
    expect(rebuilt.rewritten).toBe(1)
    const after = await compareSession(store, s, seen.get(s) ?? 0, 'rebuild')
    expect({ session: s, rebuilt: after.rows }).toEqual({ session: s, rebuilt: inline.get(s) })
  }
  stats.histories++
}

/**
 * Damages every session's rows, runs one full `rebuild()` (batches of many sessions: the set-based path
 * for logs of plain appends and the replay path side by side) and compares every session with the spec
 * (those of `withAnomalies` allowing the anomalies their logs were written with).
 */
export async function rebuildAllAgainstSpec(store: PostgresStore, withAnomalies: ReadonlySet<string> = new Set()): Promise<number> {
  const { rows: all } = await sql<{ session_id: string }>`select session_id::text from turnlog.sessions order by 1`.execute(store.db)
  await sql`update turnlog.live_messages set partial = not partial where position % 2 = 0`.execute(store.db)
  await sql`delete from turnlog.live_messages where position % 3 = 0`.execute(store.db)
  const result = await store.rebuild()
  expect(result.rewritten).toBe(all.length)
  for (const r of all) {
    const sid = r.session_id as SessionId
    if (withAnomalies.has(sid)) await compareWithAnomalies(store, sid, 'full rebuild')
    else await compareSession(store, sid, 0, 'full rebuild')
  }
  return all.length
}

/**
 * One step of a log written around the store (as an import or a future writer could): histories the
 * spec applies without an anomaly, including ones today's store calls never write (a rewind of any
 * subset, summaries placed in any order, several events in one INSERT). A compaction covers at least one
 * live message, as every store call writes it: see {@link KNOWN_DIVERGENCE} for one that covers none.
 */
export type RawStep =
  | { readonly kind: 'append'; readonly partial: boolean; readonly deferred: boolean }
  | { readonly kind: 'revise'; readonly pick: number; readonly partial: boolean }
  | { readonly kind: 'finalize'; readonly pick: number }
  | { readonly kind: 'retract'; readonly picks: readonly number[] }
  | { readonly kind: 'compact'; readonly picks: readonly number[]; readonly summaries: readonly number[] }
  | { readonly kind: 'redact'; readonly pick: number }

const picks = fc.array(pick, { maxLength: 3 })
/** Raw logs: steps, and how many events each INSERT statement carries (the statement trigger sees them together). */
export const rawLogArb: fc.Arbitrary<{ steps: RawStep[]; chunks: number[] }> = fc.record({
  steps: fc.array(
    fc.oneof(
      { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), partial: fc.boolean(), deferred: fc.boolean() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('revise' as const), pick, partial: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('finalize' as const), pick }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('retract' as const), picks }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('compact' as const), picks, summaries: picks }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('redact' as const), pick }) },
    ),
    { minLength: 1, maxLength: 16 },
  ),
  chunks: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 16, maxLength: 16 }),
})

/** One event of a raw log (what {@link rawEvents} returns). */
export interface RawEvent {
  readonly type: string
  readonly messageId: MessageId | null
  readonly payload: ChatMessage | null
  readonly data: Record<string, unknown>
}

/**
 * The events of `steps`, each one chosen among what the spec applies without an anomaly at that point;
 * a compaction with no live message to cover is left out unless `emptyCompactions`.
 */
export function rawEvents(steps: readonly RawStep[], options: { readonly emptyCompactions?: boolean } = {}): RawEvent[] {
  return rawEventsOf(steps, options.emptyCompactions === true)
}

/**
 * A history where the SQL statement trigger and the spec disagreed until `events_project` applied a
 * statement's appends after its first other event in seq order (found by the raw-log differential):
 * a compaction that covers no live message (`covered: []`), followed by an append IN THE SAME INSERT.
 * `events_project` inserts a statement's plain appends first, so `project_event` then finds the later
 * append already there and placed the summary after it (max position + 1); the spec, `rebuild` (which
 * replays event by event) and the fold place it before. No store call writes it (`compact` refuses an
 * empty `covered` and never writes an append in the compaction's statement); `importEvents` of a
 * chain-valid file does (packages/audit/test/import-projection.int.test.ts).
 */
export const KNOWN_DIVERGENCE: { readonly steps: readonly RawStep[]; readonly chunks: readonly number[] } = {
  steps: [
    { kind: 'append', partial: false, deferred: true },
    { kind: 'compact', picks: [], summaries: [0] },
    { kind: 'append', partial: false, deferred: false },
  ],
  chunks: [1, 2],
}

/**
 * A history where positions collided until `project_event` kept them at most the applying event's seq
 * (found by the raw-log differential, migration 0004): three summaries appended deferred, a live append,
 * then a compaction that covers that one message with the three summaries (positions 4, 5, 6 for a
 * compaction at seq 5), then an append at seq 6, placed at its seq: position 6 twice, and `load` ordered
 * the summary and the append arbitrarily. No store call writes it (`compact` appends its summaries just
 * before the compaction); an import of such a log does.
 */
export const CROWDED_COMPACTION: { readonly steps: readonly RawStep[]; readonly chunks: readonly number[] } = {
  steps: [
    { kind: 'append', partial: false, deferred: true },
    { kind: 'append', partial: false, deferred: true },
    { kind: 'append', partial: false, deferred: true },
    { kind: 'append', partial: false, deferred: false },
    { kind: 'compact', picks: [], summaries: [1, 0, 2] },
    { kind: 'append', partial: false, deferred: false },
  ],
  chunks: [1],
}

/**
 * A history where the SQL placed a summary partial although the spec places it final, until
 * `project_event` honoured a `message_finalized` written while the summary was pending (migration 0004):
 * a summary appended deferred and partial, finalized, a live append, then the compaction that covers it
 * with the summary. No store call writes it (the store finalizes live messages only); an import does.
 */
export const FINALIZED_PENDING_SUMMARY: { readonly steps: readonly RawStep[]; readonly chunks: readonly number[] } = {
  steps: [
    { kind: 'append', partial: true, deferred: true },
    { kind: 'finalize', pick: 0 },
    { kind: 'append', partial: false, deferred: false },
    { kind: 'compact', picks: [0], summaries: [0] },
  ],
  chunks: [1],
}

function rawEventsOf(steps: readonly RawStep[], emptyCompactions: boolean): RawEvent[] {
  const state = newStructure()
  const out: RawEvent[] = []
  const emit = (e: RawEvent): void => {
    if (!applyEvent(state, { seq: out.length + 1, ...e })) throw new Error(`generator bug: ${JSON.stringify(state.anomalies)}`)
    out.push(e)
  }
  const inState = (s: string): MessageId[] => [...state.messages.values()].filter((r) => r.state === s).map((r) => r.id)
  const choose = <T>(from: readonly T[], ps: readonly number[]): T[] => [...new Set(ps.map((p) => from[p % from.length] as T))]
  const content = (text: string, partial: boolean): { payload: ChatMessage; data: Record<string, unknown> } => ({
    payload: { role: 'assistant', content: text },
    data: { createdAt: '2026-01-01T00:00:00.000Z', ...(partial ? { status: 'partial' } : {}) },
  })
  for (const s of steps) {
    const live = inState('live')
    switch (s.kind) {
      case 'append': {
        const c = content(`m${out.length}`, s.partial)
        emit({
          type: 'message_appended',
          messageId: createMessage(c.payload).id,
          payload: c.payload,
          data: s.deferred ? { ...c.data, deferred: true } : c.data,
        })
        break
      }
      case 'revise': {
        if (live.length === 0) break
        const c = content(`r${out.length}`, s.partial)
        emit({
          type: 'message_revised',
          messageId: choose(live, [s.pick])[0] ?? null,
          payload: c.payload,
          data: { ...c.data, revision: 1 },
        })
        break
      }
      case 'finalize': {
        // a live message, or a summary still pending (the spec applies both; the store only finalizes live ones)
        const finalizable = [...live, ...inState('pending')]
        if (finalizable.length > 0)
          emit({ type: 'message_finalized', messageId: choose(finalizable, [s.pick])[0] ?? null, payload: null, data: {} })
        break
      }
      case 'retract':
        if (live.length > 0) {
          const ids = choose(live, s.picks)
          emit({ type: 'messages_retracted', messageId: null, payload: null, data: { ids, target: { from: ids[0] } } })
        }
        break
      case 'compact': {
        const covered = live.length === 0 ? [] : choose(live, s.picks.length === 0 ? [0] : s.picks)
        if (covered.length === 0 && !emptyCompactions) break
        const pending = inState('pending')
        const summary = pending.length === 0 ? [] : choose(pending, s.summaries)
        emit({
          type: 'messages_compacted',
          messageId: null,
          payload: null,
          data: { covered: covered.map((id) => ({ id, contentHash: '' })), summary },
        })
        break
      }
      case 'redact': {
        const known = [...state.messages.keys()]
        if (known.length > 0)
          emit({ type: 'message_redacted', messageId: choose(known, [s.pick])[0] ?? null, payload: null, data: { reason: 'test' } })
        break
      }
    }
  }
  return out
}

/**
 * Writes `events` straight into `turnlog.events` of a new session (the triggers run as for any writer),
 * `chunks[i]` events per INSERT statement, comparing the table with the spec after every statement.
 * Needs a connection that may write the table (the test database's owner).
 */
export async function runRawLog(store: PostgresStore, events: readonly RawEvent[], chunks: readonly number[]): Promise<void> {
  const sid = await store.createSession()
  let seq = 0
  for (let i = 0; seq < events.length; i++) {
    const size = chunks[i % chunks.length] ?? 1
    const chunk = events.slice(seq, seq + size)
    await insertRawEvents(store.db, sid, seq, chunk)
    await compareSession(store, sid, seq, `an INSERT of events ${seq + 1}..${seq + chunk.length}`)
    seq += chunk.length
  }
  const rebuilt = await store.rebuild({ sessionId: sid })
  expect(rebuilt.drift).toEqual([])
  await compareSession(store, sid, seq, 'rebuild of the raw log')
}

/**
 * Inserts `events` as seqs `after + 1…` of session `sid` in one INSERT statement (the triggers run as for
 * any writer) and sets the session's version. Needs a connection that may write the table (the owner).
 */
export async function insertRawEvents(db: Kysely<unknown>, sid: SessionId, after: number, events: readonly RawEvent[]): Promise<void> {
  const values = events.map(
    (e, j) => sql`(${sid}::uuid, ${after + j + 1}::bigint, ${newEventId()}::uuid, ${e.type}, ${e.messageId}::uuid,
    ${e.payload === null ? null : contentHash(e.payload)}::text, ${e.payload === null ? null : JSON.stringify(e.payload)}::json, ${JSON.stringify(e.data)}::json)`,
  )
  await sql`
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
    select v.s, v.q, v.e, v.t, v.m, decode(v.h, 'hex'), v.p, v.d from (values ${sql.join(values)}) as v(s, q, e, t, m, h, p, d)
     order by v.q`.execute(db)
  await sql`update turnlog.sessions set version = ${after + events.length} where session_id = ${sid}`.execute(db)
}

/**
 * One step of a log written around the store that the spec may NOT apply cleanly (an import of a
 * crafted or damaged file, a raw writer): appends (some re-using a known id, a copy's included,
 * `deferred` as `true`, `false`, `null`, a string or absent), revisions, finalizations, rewinds and
 * compactions naming any id (live, pending, gone or unknown, repeated), redactions, fork markers,
 * inherited copies (some of a known id) and an unknown event type. Since 0006 the claim trigger refuses
 * a second append of an id the session holds, original or copy, in a fork session, and any copy in a
 * session that is no fork ({@link runAnomalousLog} writes both kinds of session).
 */
export interface AnomalousStep {
  readonly type: string
  readonly pick: number
  readonly picks: readonly number[]
  readonly summary: readonly number[]
  readonly deferred: unknown
  readonly partial: boolean
}

/** Logs with anomalies: steps, and how many events each INSERT statement carries. */
export const anomalousLogArb: fc.Arbitrary<{ steps: AnomalousStep[]; chunks: number[]; fork: boolean }> = fc.record({
  fork: fc.boolean(),
  steps: fc.array(
    fc.record({
      type: fc.constantFrom(
        'message_appended',
        'message_appended',
        'message_appended',
        'message_revised',
        'message_finalized',
        'messages_retracted',
        'messages_compacted',
        'message_redacted',
        'session_forked',
        'inherited_copy',
        'no_such_type',
      ),
      pick: fc.nat(50),
      picks: fc.array(fc.nat(50), { maxLength: 3 }),
      summary: fc.array(fc.nat(50), { maxLength: 3 }),
      deferred: fc.constantFrom<unknown>(undefined, undefined, true, true, false, null, 'yes'),
      partial: fc.boolean(),
    }),
    { minLength: 1, maxLength: 14 },
  ),
  chunks: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 14, maxLength: 14 }),
})

/** The fork parent an anomalous log's session names (no such session exists: the database does not check it). */
const ANOMALOUS_PARENT = '0190f0f0-0000-7000-8000-000000000002'

/** The events of an anomalous log's `steps` (ids picked among every id written so far and one unknown). */
export function anomalousEvents(steps: readonly AnomalousStep[]): RawEvent[] {
  const ids: MessageId[] = ['0190f0f0-0000-7000-8000-000000000001' as MessageId]
  const out: RawEvent[] = []
  const pick = (p: number): MessageId => ids[p % ids.length] as MessageId
  const data = (partial: boolean): Record<string, unknown> => ({
    createdAt: '2026-01-01T00:00:00.000Z',
    ...(partial ? { status: 'partial' } : {}),
  })
  const fresh = (payload: ChatMessage): MessageId => {
    const id = createMessage(payload).id
    ids.push(id)
    return id
  }
  for (const s of steps) {
    switch (s.type) {
      case 'message_appended': {
        const payload: ChatMessage = { role: 'assistant', content: `m${out.length}` }
        const messageId = s.pick % 7 === 0 ? pick(s.pick) : fresh(payload)
        out.push({
          type: s.type,
          messageId,
          payload,
          data: s.deferred === undefined ? data(s.partial) : { ...data(s.partial), deferred: s.deferred },
        })
        break
      }
      case 'inherited_copy': {
        const payload: ChatMessage = { role: 'user', content: `i${out.length}` }
        const inheritedFrom = ANOMALOUS_PARENT
        const messageId = s.pick % 5 === 0 ? pick(s.pick) : fresh(payload)
        out.push({ type: 'message_appended', messageId, payload, data: { ...data(s.partial), inheritedFrom } })
        break
      }
      case 'message_revised':
        out.push({
          type: s.type,
          messageId: pick(s.pick),
          payload: { role: 'assistant', content: `r${out.length}` },
          data: { ...data(s.partial), revision: 1 },
        })
        break
      case 'message_finalized':
      case 'message_redacted':
        out.push({ type: s.type, messageId: pick(s.pick), payload: null, data: s.type === 'message_redacted' ? { reason: 'test' } : {} })
        break
      case 'messages_retracted': {
        const named = s.picks.map(pick)
        out.push({ type: s.type, messageId: null, payload: null, data: { ids: named, target: { from: named[0] ?? pick(0) } } })
        break
      }
      case 'messages_compacted':
        out.push({
          type: s.type,
          messageId: null,
          payload: null,
          data: { covered: s.picks.map((p) => ({ id: pick(p), contentHash: '' })), summary: s.summary.map(pick) },
        })
        break
      default:
        out.push({ type: s.type, messageId: null, payload: null, data: {} })
    }
  }
  return out
}

/** What the anomalous-log property met: statements the database refused (by SQLSTATE and constraint) and comparisons made. */
export interface AnomalyStats {
  readonly refused: Record<string, number>
  /** The sessions written (their logs hold anomalies the spec skips). */
  readonly sessions: Set<string>
  compared: number
  anomalies: number
}

/**
 * Writes `events` into a new session, `chunks[i]` per INSERT, until the database refuses one (then the
 * table must still be the spec of what was stored, and the log ends there). After every statement the
 * table is `projectStructure`'s rows (anomalies change nothing in either) with strictly increasing
 * positions; then `rebuild` finds no drift and gives the same rows.
 */
export async function runAnomalousLog(
  store: PostgresStore,
  events: readonly RawEvent[],
  chunks: readonly number[],
  stats: AnomalyStats,
  fork = false,
): Promise<void> {
  const sid = await store.createSession()
  // a fork session (of a parent the database does not hold: nothing checks it) takes copies labelled with it
  if (fork) await sql`update turnlog.sessions set parent_session_id = ${ANOMALOUS_PARENT}::uuid where session_id = ${sid}`.execute(store.db)
  stats.sessions.add(sid)
  let seq = 0
  for (let i = 0; seq < events.length; i++) {
    const chunk = events.slice(seq, seq + (chunks[i % chunks.length] ?? 1))
    try {
      await insertRawEvents(store.db, sid, seq, chunk)
    } catch (error) {
      const { code, constraint } = error as { code?: unknown; constraint?: unknown }
      const key = `${String(code)} ${String(constraint)}`
      stats.refused[key] = (stats.refused[key] ?? 0) + 1
      break
    }
    seq += chunk.length
    const { rows } = await compareWithAnomalies(store, sid, `an INSERT of events ${seq - chunk.length + 1}..${seq}`)
    stats.compared++
    if (rows.anomalies > 0) stats.anomalies++
  }
  const rebuilt = await store.rebuild({ sessionId: sid })
  expect(rebuilt.drift).toEqual([])
  await compareWithAnomalies(store, sid, 'rebuild of the anomalous log')
}

async function compareWithAnomalies(store: PostgresStore, sid: SessionId, label: string): Promise<{ rows: { anomalies: number } }> {
  const events = await eventsOf(store, sid)
  const spec = projectStructure(events)
  const rows = await tableRows(store, sid)
  const where = `${label}: ${JSON.stringify(events.map((e) => [e.seq, e.type, e.messageId?.slice(-4) ?? null, e.data]))}`
  expect({ where, table: strip(rows) }).toEqual({ where, table: spec.rows })
  expect({ where, ordered: rows.every((r, i) => i === 0 || (rows[i - 1] as TableRow).position < r.position) }).toEqual({
    where,
    ordered: true,
  })
  return { rows: { anomalies: spec.anomalies.length } }
}

/**
 * Damages the projection rows of session `sessionId` in one of three ways (`way` % 3): deleted; each
 * `partial` flipped and its position moved; each `event_seq` moved. A rebuild must repair every one.
 */
export async function damageLiveMessages(db: Kysely<unknown>, sessionId: string, way: number): Promise<void> {
  if (way % 3 === 0) await sql`delete from turnlog.live_messages where session_id = ${sessionId}`.execute(db)
  else if (way % 3 === 1)
    await sql`update turnlog.live_messages set partial = not partial, position = position + 1000 where session_id = ${sessionId}`.execute(
      db,
    )
  else await sql`update turnlog.live_messages set event_seq = event_seq + 1 where session_id = ${sessionId}`.execute(db)
}
