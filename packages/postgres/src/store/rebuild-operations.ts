import {
  TurnlogError,
  projectStructure,
  type MessageId,
  type ProjectionDrift,
  type RebuildOptions,
  type RebuildResult,
  type SessionId,
  type StructuralEvent,
  type StructureState,
} from '@turnlog/core'
import { parseSessionIdArgument } from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { checkCallOptions, optionKeys } from '../check-arguments.js'
import type { ReadOperations } from './read-operations.js'
import type { StoreContext } from './store-context.js'

/** Most sessions in one rebuild batch. */
const REBUILD_SESSIONS = 200
/** Events in one rebuild batch before its last session: bounds its memory and how long it holds locks. */
const REBUILD_EVENTS = 5000

/** A projection row as `turnlog.rebuild_read` / `rebuild_sessions` return it. */
interface ProjectionRowData {
  message_id: string
  event_seq: number
  partial: boolean
}

/** One session of a rebuild batch: its events' structure (no payloads), its projection rows and flag. */
interface BatchSession {
  readonly id: SessionId
  readonly events: StructuralEvent[]
  readonly live: ProjectionRowData[]
  /** `sessions.appends_only` as stored (0007). */
  readonly appendsOnly: boolean
}

/** What one batch found: its sessions (in id order) and their drift. */
interface BatchOutcome {
  readonly ids: SessionId[]
  readonly drift: ProjectionDrift[]
}

/** The options of `rebuild` (any other key is refused, naming it). */
const REBUILD_OPTIONS = optionKeys<RebuildOptions>({ sessionId: true, verify: true, onProgress: true })

/** `rebuild`: checks (`verify`) or recomputes the inline projections against the projection spec. */
export class RebuildOperations {
  readonly #ctx: StoreContext
  readonly #reads: ReadOperations

  constructor(ctx: StoreContext, reads: ReadOperations) {
    this.#ctx = ctx
    this.#reads = reads
  }

  /** See `PostgresStore.rebuild`: batches of sessions, two in flight on Postgres, checked against `projectStructure`. */
  async rebuild(options: RebuildOptions = {}): Promise<RebuildResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'rebuild options', REBUILD_OPTIONS)
    if (options.verify !== undefined && typeof options.verify !== 'boolean')
      throw new TurnlogError('INVALID_INPUT', 'rebuild: verify must be a boolean', { details: { field: 'options.verify' } })
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
      throw new TurnlogError('INVALID_INPUT', 'rebuild: onProgress must be a function', { details: { field: 'options.onProgress' } })
    }
    const verify = options.verify === true
    let single: SessionId | null = null
    let total = 1
    if (options.sessionId !== undefined) {
      single = parseSessionIdArgument(options.sessionId, 'options.sessionId')
      await this.#reads.getSession(single)
    } else {
      const { rows } = await this.#ctx.run((db) => sql<{ n: string | number }>`select count(*) as n from turnlog.sessions`.execute(db))
      total = Number(rows[0]?.n ?? 0)
    }
    // two batches in flight: while Postgres works on one, this process folds the other
    const concurrency = single === null ? this.#ctx.parallelism : 1
    type Outcome = ({ ok: true } & BatchOutcome) | { ok: false; error: unknown }
    const inFlight: Promise<Outcome>[] = []
    const drift: ProjectionDrift[] = []
    let rewritten = 0
    let done = 0
    let after: SessionId | null = null
    let exhausted = false
    try {
      for (;;) {
        while (!exhausted && inFlight.length < concurrency) {
          const ids: SessionId[] = single !== null ? [single] : await this.#rebuildPage(after)
          exhausted = single !== null || ids.length === 0
          if (ids.length === 0) break
          after = ids[ids.length - 1] ?? null
          const batch = verify ? this.#verifyBatch(ids) : this.#rebuildBatch(ids)
          inFlight.push(
            batch.then(
              (b) => ({ ok: true as const, ...b }),
              (error: unknown) => ({ ok: false as const, error }),
            ),
          )
        }
        const next = inFlight.shift()
        if (next === undefined) break
        const outcome = await next
        if (!outcome.ok) throw outcome.error
        drift.push(...outcome.drift)
        if (!verify) rewritten += outcome.ids.length
        for (const id of outcome.ids) {
          done++
          options.onProgress?.({ done, total, sessionId: id })
        }
      }
    } finally {
      // never leave a batch running (or its failure unobserved) behind a throw
      await Promise.all(inFlight)
    }
    return { sessions: done, drift, rewritten }
  }

  /**
   * The next rebuild batch: the sessions after `after` in id order, at most 200, and only while the
   * ones before the last hold fewer than 5,000 events (always at least one session when any is left).
   */
  async #rebuildPage(after: SessionId | null): Promise<SessionId[]> {
    const { rows } = await this.#ctx.run((db) =>
      sql<{ session_id: string }>`
        select c.session_id from (
          select s.session_id, sum(s.version) over (order by s.session_id) - s.version as before
            from (select s.session_id, s.version from turnlog.sessions s
                   where (${after}::uuid is null or s.session_id > ${after}::uuid)
                   order by s.session_id limit ${REBUILD_SESSIONS}) s) c
         where c.before < ${REBUILD_EVENTS}
         order by c.session_id`.execute(db),
    )
    return rows.map((r) => r.session_id as SessionId)
  }

  async #verifyBatch(ids: readonly SessionId[]): Promise<BatchOutcome> {
    const sessions = await this.#ctx.run((db) => readBatch(db, ids))
    const drift: ProjectionDrift[] = []
    for (const s of sessions) {
      const found = driftOf(s.id, project(s.id, s.events), s.live, s.events, s.appendsOnly)
      if (found) drift.push(found)
    }
    return { ids: sessions.map((s) => s.id), drift }
  }

  async #rebuildBatch(ids: readonly SessionId[]): Promise<BatchOutcome> {
    return this.#ctx.tx(async (db) => {
      // lock, then read: the read's snapshot comes after every writer of these sessions is done
      const idsJson = JSON.stringify(ids)
      await sql`
        select s.session_id from turnlog.sessions s
         where s.session_id = any (array(select value::uuid from json_array_elements_text(${idsJson}::json)))
         order by s.session_id for update of s`.execute(db)
      const sessions = await readBatch(db, ids)
      if (sessions.length === 0) return { ids: [], drift: [] }
      const drift: ProjectionDrift[] = []
      const specs: [SessionId, StructureState][] = []
      for (const s of sessions) {
        const state = project(s.id, s.events)
        specs.push([s.id, state])
        const found = driftOf(s.id, state, s.live, s.events, s.appendsOnly)
        if (found) drift.push(found)
      }
      // recompute; it returns every session's rows in position order
      const { rows } = await sql<{ session_id: string; live: [string, number, boolean][] | null }>`
        select r.session_id, r.live
          from turnlog.rebuild_sessions(array(select value::uuid from json_array_elements_text(${JSON.stringify(sessions.map((s) => s.id))}::json))) r`.execute(
        db,
      )
      const rebuilt = new Map(rows.map((r) => [r.session_id, projectionRows(r.live)]))
      const flags = await sql<{ session_id: string; appends_only: boolean }>`
        select s.session_id, s.appends_only from turnlog.sessions s
         where s.session_id = any (array(select value::uuid from json_array_elements_text(${idsJson}::json)))`.execute(db)
      const rebuiltFlags = new Map(flags.rows.map((r) => [r.session_id, r.appends_only]))
      const events = new Map(sessions.map((s) => [s.id as string, s.events]))
      // the verification: the recomputed projection equals the spec's, or the batch rolls back
      for (const [id, state] of specs) {
        const log = events.get(id) ?? []
        const flag = rebuiltFlags.get(id) ?? false
        const still =
          driftOf(id, state, rebuilt.get(id) ?? [], log, flag) ??
          (flag === appendsOnly(log) ? null : { explanation: `sessions.appends_only is ${flag}, the log says ${!flag}` })
        if (still) {
          throw new TurnlogError(
            'CORRUPT_LOG',
            `rebuilt projection of ${id} still differs from the fold of its log: ${still.explanation}`,
            {
              details: { sessionId: id },
            },
          )
        }
      }
      return { ids: sessions.map((s) => s.id), drift }
    })
  }
}

/**
 * One statement, so one snapshot: each session of `ids` that exists (in id order), with its events'
 * structure (seq, type, message id, data; never payloads) in seq order and its projection rows in
 * position order.
 */
async function readBatch(db: Kysely<unknown>, ids: readonly SessionId[]): Promise<BatchSession[]> {
  // per session one row, its events and projection rows as JSON arrays: far cheaper to receive than a row each
  const { rows } = await sql<{
    session_id: string
    events: [number, string, string | null, unknown][] | null
    live: [string, number, boolean][] | null
    appends_only: boolean
  }>`
    select r.session_id, r.events, r.live, r.appends_only
      from turnlog.rebuild_read(array(select value::uuid from json_array_elements_text(${JSON.stringify(ids)}::json))) r`.execute(db)
  return rows.map((r) => ({
    id: r.session_id as SessionId,
    events: (r.events ?? []).map(([seq, type, messageId, data]) => ({ seq, type, messageId, data: data ?? {} })),
    live: projectionRows(r.live),
    appendsOnly: r.appends_only,
  }))
}

/** Projection rows from `[message_id, event_seq, partial]` JSON arrays. */
function projectionRows(live: readonly (readonly [string, number, boolean])[] | null): ProjectionRowData[] {
  return (live ?? []).map(([message_id, event_seq, partial]) => ({ message_id, event_seq, partial }))
}

/** The projection spec of one session's events; a log it cannot read is `CORRUPT_LOG`, not a TypeError. */
function project(id: SessionId, events: readonly StructuralEvent[]): StructureState {
  try {
    return projectStructure(events)
  } catch (error) {
    // a malformed event (written around the store)
    throw new TurnlogError(
      'CORRUPT_LOG',
      `the log of session ${id} cannot be folded: ${error instanceof Error ? error.message : String(error)}`,
      {
        details: { sessionId: id },
        cause: error,
      },
    )
  }
}

/**
 * What `sessions.appends_only` must be for a log (0007): every event a `message_appended` that is not
 * deferred, so the live list is the events in seq order and `load` reads them without the projection.
 */
function appendsOnly(events: readonly StructuralEvent[]): boolean {
  return events.every((e) => e.type === 'message_appended' && (e.data as { deferred?: unknown }).deferred == null)
}

/**
 * Compares a session's projection rows (in position order) and its `appends_only` flag with what its
 * log gives; null when they agree.
 */
function driftOf(
  id: SessionId,
  state: StructureState,
  live: readonly ProjectionRowData[],
  events: readonly StructuralEvent[],
  storedAppendsOnly: boolean,
): ProjectionDrift | null {
  const expected = state.live
  const actual = live.map((r) => r.message_id as MessageId)
  const sameOrder = expected.length === actual.length && expected.every((m, i) => m === actual[i])
  if (!sameOrder) {
    return {
      sessionId: id,
      expected,
      actual,
      explanation: `live list differs: fold has ${expected.length} message(s), projection ${actual.length}`,
    }
  }
  for (const r of live) {
    const rec = state.messages.get(r.message_id as MessageId)
    if (!rec || rec.eventSeq !== r.event_seq || rec.partial !== r.partial) {
      return { sessionId: id, expected, actual, explanation: `message ${r.message_id} points at the wrong revision or status` }
    }
  }
  // a flag set on a log that is not appends only makes load read the events as the live list; one left
  // unset is no claim (load reads the projection): sessions older than 0007 have it unset until a rebuild
  if (storedAppendsOnly && !appendsOnly(events)) {
    return {
      sessionId: id,
      expected,
      actual,
      explanation:
        'sessions.appends_only is set but the log holds an event other than a plain append (load would read the events as the live list)',
    }
  }
  return null
}
