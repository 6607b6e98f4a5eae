import { TurnlogError, type SessionId } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import type { Pool } from 'pg'

/** One live message as stored: its projection row and the event holding its current content. */
export interface LiveMessageRow {
  readonly message_id: string
  readonly partial: boolean | null
  /** Hex SHA-256 of the canonical payload. */
  readonly content_hash: string
  readonly data: {
    readonly createdAt: string
    readonly externalId?: string
    readonly externalScope?: string
    readonly format?: string
    readonly meta?: unknown
  }
  readonly payload: unknown
}

/** The session's version and its live messages in position order. */
export interface LiveRows {
  readonly version: number
  readonly rows: readonly LiveMessageRow[]
}

/**
 * A row of `load_session`: the session's own row (its version), then one per live message; or, from
 * the prepared statement, one per live message each with the version (one with the version and nulls
 * for a session with no live message).
 */
interface LoadRow {
  version: string | number | null
  message_id: string | null
  position: string | number | null
  partial: boolean | null
  content_hash: string | null
  data: { createdAt: string; externalId?: string; externalScope?: string; format?: string; meta?: unknown; status?: unknown } | null
  payload: unknown
}

/**
 * Reads a session's version and live messages in one statement, `turnlog.load_session`, whose rows
 * come in seq order and are sorted here by position (a stable sort, skipped when they already are in
 * order, as they are unless a compaction or a revision moved something). Throws `SESSION_NOT_FOUND`
 * (a `TLS01` from the function, or no session row); database errors are thrown as they are.
 */
export async function loadLiveRows(db: Kysely<unknown>, sessionId: SessionId): Promise<LiveRows> {
  const { rows } = await sql<LoadRow>`
    select version, message_id::text, position, partial, content_hash, data, payload
      from turnlog.load_session(${sessionId}::uuid)`.execute(db)
  return toLiveRows(rows, sessionId)
}

/**
 * `load_session`'s statement itself (the function's body, 0006), sent as a named prepared statement on
 * a pool the store owns: each connection plans it once (a generic plan after five custom ones), and the
 * rows skip PL/pgSQL's copy into a result set (measured: 0.54 → 0.45 ms a call for 60 messages, the
 * raw indexed read 0.43). Only on a pool the store opened with `directConnection: true`, whose connections run with `jit = off` and no
 * parallel workers (open-store.ts): a prepared statement cannot carry the function's settings.
 * Row level security applies as it does to the function (the connection's role).
 */
export async function loadLiveRowsPrepared(pool: Pool, sessionId: SessionId): Promise<LiveRows> {
  const { rows } = await pool.query<LoadRow>({ name: LOAD_STATEMENT_NAME, text: LOAD_STATEMENT, values: [sessionId] })
  return toLiveRows(rows, sessionId)
}

/** Versioned: a new text needs a new name (a connection keeps a prepared statement by its name). */
const LOAD_STATEMENT_NAME = 'turnlog_load_session_2'
/**
 * The function's reads (0007) in one shape the client reads as well as the function's: the session's
 * row joined with its messages (every row carries the version; a session with no live message is one
 * row of nulls besides it), one probe of `sessions` instead of two. A session whose log is appends only
 * leaves `partial` null for the client to read from `data.status` (the rule the projection applies):
 * no JSON parse of `data` per row on the server.
 */
const LOAD_STATEMENT = `
  select s.version, x.message_id, x.position, x.partial, x.content_hash, x.data, x.payload
    from turnlog.sessions s
    left join lateral (
      select e.message_id::text as message_id, e.seq as position, null::boolean as partial,
             encode(e.content_hash, 'hex') as content_hash, e.data, e.payload
        from turnlog.events e
       where s.appends_only and e.session_id = s.session_id
      union all
      select l.message_id::text, l.position, l.partial, encode(e.content_hash, 'hex'), e.data, e.payload
        from turnlog.live_messages l
        join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
       where not s.appends_only and l.session_id = s.session_id and e.session_id = s.session_id) x on true
   where s.session_id = $1::uuid`

/** The version and the message rows in position order. */
function toLiveRows(result: readonly LoadRow[], sessionId: SessionId): LiveRows {
  let version: number | undefined
  let sorted = true
  let last = -Infinity
  const rows: (LoadRow & LiveMessageRow)[] = []
  for (const row of result) {
    if (version === undefined && row.version !== null) version = Number(row.version)
    if (!isMessageRow(row)) continue
    const position = Number(row.position)
    if (position < last) sorted = false
    last = position
    // an appends-only session's row read by the prepared statement: the projection's rule for `partial`
    if (row.partial === null) row.partial = row.data.status === 'partial'
    rows.push(row)
  }
  if (version === undefined) throw new TurnlogError('SESSION_NOT_FOUND', `session ${sessionId} not found`, { details: { sessionId } })
  if (!sorted) rows.sort((a, b) => Number(a.position) - Number(b.position))
  return { version, rows }
}

/** A message row, not the session's own row. */
function isMessageRow(row: LoadRow): row is LoadRow & LiveMessageRow {
  return row.message_id !== null && row.content_hash !== null && row.data !== null
}
