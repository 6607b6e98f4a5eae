import {
  TurnlogError,
  foldSession,
  liveMessages,
  restoreMessage,
  toolPairing,
  transcriptOf,
  type ChatMessage,
  type ConflictRecord,
  type EventsOptions,
  type JsonValue,
  type ListSessionsOptions,
  type LoadOptions,
  type LoadResult,
  type Message,
  type MessageId,
  type SessionId,
  type SessionInfo,
  type SessionPage,
  type SessionState,
  type StoredEvent,
  type Transcript,
} from '@turnlog/core'
import { toolPairingOfDistinct, parseSessionIdArgument } from '@turnlog/core/internal'
import { sql } from 'kysely'
import { checkCallOptions, optionKeys, preview } from '../check-arguments.js'
import { EVENT_COLUMNS, iso, toStoredEvent, type EventRow } from '../event-row.js'
import { loadLiveRows, loadLiveRowsPrepared } from '../load-live-rows.js'
import { checkSafeText } from '../safe-text.js'
import type { StoreContext } from './store-context.js'

interface SessionRow {
  session_id: string
  tenant_id: string | null
  version: string | number
  live_count: string | number
  created_at: Date | string
  updated_at: Date | string
  metadata: unknown
  parent_session_id: string | null
  parent_version: string | number | null
  fork_at: string | null
}

/** Events per page of `events`. */
const PAGE = 500

/** The options each read takes (any other key is refused: a misspelt option would be ignored). */
const LIST_SESSIONS_OPTIONS = optionKeys<ListSessionsOptions>({ tenantId: true, limit: true, after: true })
const LOAD_OPTIONS = optionKeys<LoadOptions>({ at: true })
const EVENTS_OPTIONS = optionKeys<EventsOptions>({ fromSeq: true, toSeq: true })

/** The reads: sessions (`getSession`, `sessions`), `load`, `events`, `state`, `transcript`, `conflicts`. */
export class ReadOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.getSession`. */
  async getSession(sessionId: string): Promise<SessionInfo> {
    this.#ctx.assertOpen()
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    return this.#ctx.run(async (db) => {
      const { rows } = await sql<SessionRow>`
        select s.session_id::text, s.tenant_id, s.version, s.created_at, s.updated_at, s.metadata,
               s.parent_session_id::text, s.parent_version, s.fork_at::text,
               (select count(*) from turnlog.live_messages l where l.session_id = s.session_id) as live_count
          from turnlog.sessions s where s.session_id = ${id}`.execute(db)
      const row = rows[0]
      if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `session ${id} not found`, { details: { sessionId: id } })
      return toSessionInfo(row)
    })
  }

  /** See `SessionStore.sessions`. */
  async sessions(options: ListSessionsOptions = {}): Promise<SessionPage> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'sessions options', LIST_SESSIONS_OPTIONS)
    const limit = options.limit ?? 100
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new TurnlogError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${preview(limit)}`, {
        details: { field: 'options.limit' },
      })
    }
    const after = options.after === undefined ? null : parseSessionIdArgument(options.after, 'options.after')
    // the same rule as createSession's tenant: a NUL would reach Postgres as a text parameter (DB_ERROR)
    const tenant = options.tenantId === undefined ? null : checkSafeText(options.tenantId, 'options.tenantId')
    return this.#ctx.run(async (db) => {
      const { rows } = await sql<SessionRow>`
        select s.session_id::text, s.tenant_id, s.version, s.created_at, s.updated_at, s.metadata,
               s.parent_session_id::text, s.parent_version, s.fork_at::text,
               (select count(*) from turnlog.live_messages l where l.session_id = s.session_id) as live_count
          from turnlog.sessions s
         where (${after}::uuid is null or s.session_id > ${after}::uuid)
           and (${tenant}::text is null or s.tenant_id = ${tenant}::text)
         order by s.session_id
         limit ${limit + 1}`.execute(db)
      const page = rows.slice(0, limit).map(toSessionInfo)
      const last = page[page.length - 1]
      return { sessions: page, next: rows.length > limit && last ? last.sessionId : null }
    })
  }

  /** See `SessionStore.load`. */
  async load(sessionId: string, options: LoadOptions = {}): Promise<LoadResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'load options', LOAD_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    if (options.at !== undefined) {
      const state = await this.state(id, options)
      const messages = liveMessages(state)
      return { sessionId: id, version: state.version, messages, pairing: toolPairing(messages) }
    }
    return this.#ctx.run(async (db) => {
      const { version, rows } = await this.#ctx.namedOr(
        (pool) => loadLiveRowsPrepared(pool, id),
        () => loadLiveRows(db, id),
      )
      const messages: Message[] = []
      for (const row of rows) {
        const message = restoreMessage({
          id: row.message_id as MessageId,
          payload: row.payload,
          createdAt: row.data.createdAt,
          externalId: row.data.externalId,
          externalScope: row.data.externalScope,
          format: row.data.format,
          meta: row.data.meta,
          status: row.partial === true ? 'partial' : undefined,
          contentHash: row.content_hash,
        })
        messages.push(message)
      }
      // a log behind a version this store saw lost commits (a restore, a failover): forget what it knew
      const seen = this.#ctx.durableVersion(id)
      if (seen !== undefined && Number(version) < seen) this.#ctx.forget(id)
      // the pairs the flush cache learns are (id, stored hash): the hashes memoised above for these payloads
      this.#ctx.learnLoaded(id, version, rows)
      this.#ctx.observe(id, version)
      // a load's ids are distinct (one projection row per id; an appends-only log appends an id once)
      return { sessionId: id, version, messages, pairing: toolPairingOfDistinct(messages) }
    })
  }

  /** See `SessionStore.events`: keyset pages of {@link PAGE} events. */
  async *events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<StoredEvent> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'events options', EVENTS_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    let from = options.fromSeq ?? 1
    const to = options.toSeq ?? Number.MAX_SAFE_INTEGER
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) {
      throw new TurnlogError('INVALID_INPUT', 'fromSeq/toSeq must be integers', {
        details: { field: Number.isSafeInteger(from) ? 'options.toSeq' : 'options.fromSeq' },
      })
    }
    await this.#ctx.run(async (db) => {
      const { rows } = await sql`select 1 from turnlog.sessions where session_id = ${id}`.execute(db)
      if (rows.length === 0) throw new TurnlogError('SESSION_NOT_FOUND', `session ${id} not found`, { details: { sessionId: id } })
    })
    for (;;) {
      const rows = await this.#ctx.run(async (db) => {
        const result = await sql<EventRow>`
          select ${EVENT_COLUMNS} from turnlog.events
           where session_id = ${id} and seq >= ${from} and seq <= ${to}
           order by seq limit ${PAGE}`.execute(db)
        return result.rows
      })
      for (const row of rows) yield toStoredEvent(row)
      if (rows.length < PAGE) return
      from = Number(rows[rows.length - 1]?.seq) + 1
    }
  }

  /** See `SessionStore.state`: the fold of the session's events (up to `at`). */
  async state(sessionId: string, options: LoadOptions = {}): Promise<SessionState> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'state options', LOAD_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const at = options.at
    const events: StoredEvent[] = []
    if (at !== undefined) {
      if (!Number.isSafeInteger(at) || at < 0)
        throw new TurnlogError('INVALID_INPUT', `at must be a non-negative integer, got ${preview(at)}`, {
          details: { field: 'options.at' },
        })
      // the session's version and the first page of its events up to `at` in one statement (a
      // checkpoint read loads at a version: one round trip instead of three)
      const rows = await this.#ctx.run(async (db) => {
        const result = await sql<Partial<EventRow> & { head: string | number }>`
          select s.version as head, e.*
            from turnlog.sessions s
            left join lateral (
              select ${EVENT_COLUMNS} from turnlog.events
               where session_id = s.session_id and seq <= ${at}
               order by seq limit ${PAGE}) e on true
           where s.session_id = ${id}
           order by e.seq`.execute(db)
        return result.rows
      })
      const head = rows[0]?.head
      if (head === undefined) throw new TurnlogError('SESSION_NOT_FOUND', `session ${id} not found`, { details: { sessionId: id } })
      if (at > Number(head)) {
        throw new TurnlogError('INVALID_INPUT', `at ${at} is beyond the session's version ${Number(head)}`, {
          details: { at, version: Number(head), field: 'options.at' },
        })
      }
      for (const row of rows) if (row.seq !== null && row.seq !== undefined) events.push(toStoredEvent(row as EventRow))
      const last = events[events.length - 1]
      if (events.length === PAGE && last !== undefined) {
        for await (const e of this.events(id, { fromSeq: last.seq + 1, toSeq: at })) events.push(e)
      }
    } else {
      for await (const e of this.events(id)) events.push(e)
    }
    const state = foldSession(events)
    return state.sessionId === null ? { ...state, sessionId: id } : state
  }

  /**
   * See `SessionStore.transcript`. One read of the log serves both the fold and the list of other
   * events, so `events` never holds an event past `version` (a second read raced concurrent writers:
   * a rewind listed while its messages still showed live).
   */
  async transcript(sessionId: string): Promise<Transcript> {
    this.#ctx.assertOpen()
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const all: StoredEvent[] = []
    for await (const e of this.events(id)) all.push(e)
    const folded = foldSession(all)
    const state = folded.sessionId === null ? { ...folded, sessionId: id } : folded
    const other = all.filter((e) => e.type !== 'message_appended' && e.type !== 'message_revised')
    return {
      sessionId: id,
      version: state.version,
      entries: transcriptOf(state),
      events: other,
      pairing: toolPairing(liveMessages(state)),
    }
  }

  /** See `SessionStore.conflicts`: the session's conflict evidence, oldest first. */
  async conflicts(sessionId: string): Promise<readonly ConflictRecord[]> {
    this.#ctx.assertOpen()
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    return this.#ctx.run(async (db) => {
      const { rows } = await sql<{
        message_id: string
        reason: ConflictRecord['reason']
        stored_hash: string | null
        incoming_hash: string
        other_session_id: string | null
        incoming_payload: ChatMessage
        detected_at: Date | string
      }>`
        select message_id::text, reason, nullif(encode(stored_hash, 'hex'), '') as stored_hash,
               encode(incoming_hash, 'hex') as incoming_hash, other_session_id::text, incoming_payload, detected_at
          from turnlog.conflicts where session_id = ${id} order by detected_at, conflict_id`.execute(db)
      return rows.map((r) => ({
        sessionId: id,
        messageId: r.message_id as MessageId,
        reason: r.reason,
        storedHash: r.stored_hash,
        incomingHash: r.incoming_hash,
        otherSessionId: r.other_session_id as SessionId | null,
        incomingPayload: r.incoming_payload,
        detectedAt: iso(r.detected_at),
      }))
    })
  }
}

function toSessionInfo(row: SessionRow): SessionInfo {
  return {
    sessionId: row.session_id as SessionId,
    tenantId: row.tenant_id,
    version: Number(row.version),
    liveCount: Number(row.live_count),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    metadata: (row.metadata ?? null) as JsonValue | null,
    parent:
      row.parent_session_id === null
        ? null
        : {
            sessionId: row.parent_session_id as SessionId,
            version: Number(row.parent_version),
            at: row.fork_at as MessageId,
          },
  }
}
