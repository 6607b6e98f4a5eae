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

/** The fields of a message's `data` the store reads (`status`: an appends-only row's partial flag). */
type LoadData = { createdAt: string; externalId?: string; externalScope?: string; format?: string; meta?: unknown; status?: unknown }

/**
 * Reads a session's version and live messages in one statement, `turnlog.load_session`, whose rows
 * come in seq order and are sorted here by position (a stable sort, skipped when they already are in
 * order, as they are unless a compaction or a revision moved something). Throws `SESSION_NOT_FOUND`
 * (a `TLS01` from the function, or no session row); database errors are thrown as they are. The rows
 * are read as the prepared statement's are ({@link PackedRow}): id, hash, flag and position packed
 * into one text column by the outer select, `data` as its JSON text (the payload stays `json`: a
 * server-side `json` → `text` conversion of every payload cost more than the driver's parse of it).
 */
export async function loadLiveRows(db: Kysely<unknown>, sessionId: SessionId): Promise<LiveRows> {
  const { rows } = await sql<PackedRow<unknown>>`
    select version::text as v,
           message_id::text || content_hash || case when partial then 'p' else 'f' end || position::text as k,
           data::text as data, payload
      from turnlog.load_session(${sessionId}::uuid)`.execute(db)
  return packedLiveRows(rows, sessionId, false)
}

/**
 * `load_session`'s reads (0007) sent as a named prepared statement on a pool the store owns: each
 * connection plans it once (a generic plan after five custom ones), and the rows skip PL/pgSQL's copy
 * into a result set (measured: 0.54 → 0.45 ms a call for 60 messages, the raw indexed read 0.43). Only
 * on a pool the store opened with `directConnection: true`, whose connections run with `jit = off` and
 * no parallel workers (open-store.ts): a prepared statement cannot carry the function's settings. Row
 * level security applies as it does to the function (the connection's role).
 *
 * Its rows are the function's, with a message's id, content hash, partial flag and position packed
 * into one text column (see {@link unpackKey}): the driver turns every column of every row into a
 * string and a property, and four small columns cost the client more than the message's JSON
 * (counted: 3.55 M → 3.0 M instructions a 100-message call through `pg`, the raw read 2.73 M).
 */
export async function loadLiveRowsPrepared(pool: Pool, sessionId: SessionId): Promise<LiveRows> {
  const { rows } = await pool.query<PackedRow>({ name: LOAD_STATEMENT_NAME, text: LOAD_STATEMENT, values: [sessionId], types: AS_TEXT })
  return packedLiveRows(rows, sessionId, true)
}

/**
 * The version and the message rows in position order, from the rows of either read (`payloadText`:
 * the payload came as its JSON text, to parse here).
 */
function packedLiveRows(rows: readonly PackedRow<unknown>[], sessionId: SessionId, payloadText: boolean): LiveRows {
  let version: number | undefined
  let sorted = true
  let last = -Infinity
  const messages: (LiveMessageRow & { readonly position: number })[] = []
  for (const row of rows) {
    if (row.k === null || row.data === null) {
      if (row.v !== null) version = Number(row.v)
      continue
    }
    const payload = payloadText && typeof row.payload === 'string' ? (JSON.parse(row.payload) as unknown) : row.payload
    const message = unpackKey(row.k, readData(row.data), payload)
    if (message.position < last) sorted = false
    last = message.position
    messages.push(message)
  }
  if (version === undefined) throw new TurnlogError('SESSION_NOT_FOUND', `session ${sessionId} not found`, { details: { sessionId } })
  if (!sorted) messages.sort((a, b) => a.position - b.position)
  return { version, rows: messages }
}

/**
 * A row of either read: the session's own (`v`, the version), then one per live message. The prepared
 * statement's columns all come as the server's text ({@link AS_TEXT}), the payload too; the function
 * read's payload comes parsed by the driver (`P`).
 */
interface PackedRow<P = string | null> {
  v: string | null
  /** The message id (36 characters), the hex content hash (64), `p`/`f`/`-` and the position. */
  k: string | null
  /** The event's `data`, its JSON text (see {@link readData}). */
  data: string | null
  /** The payload: its JSON text (the prepared statement) or the driver's parse of it. */
  payload: P
}

/**
 * The statement's type parsers: every column as the text the server sent (its columns are text and
 * json), so `data` can be read without a parse in the common case ({@link readData}); the store parses
 * the payload itself, as the driver's json parser would (`JSON.parse`).
 */
const AS_TEXT = { getTypeParser: () => (text: string) => text }

/** The text of `data` as the store writes it for a message with no other attribute: `{"createdAt":"…"}`. */
const CREATED_AT_ONLY = '{"createdAt":"'

/**
 * The event's `data` from its JSON text: the common row, `{"createdAt":"<24 characters>"}` (what the
 * store writes for a message with no external id, format, meta or status), is read by its length
 * without a parse (its 24 characters hold no `"` or `\`, so `JSON.parse` would give the same object;
 * counted: 3.70 M → 3.46–3.49 M client instructions a 100-message `store.load`); any other text is parsed.
 */
function readData(text: string): LoadData {
  if (text.length === 40 && text.startsWith(CREATED_AT_ONLY) && text.endsWith('"}')) {
    const createdAt = text.slice(14, 38)
    if (!createdAt.includes('"') && !createdAt.includes('\\')) return { createdAt }
  }
  return JSON.parse(text) as LoadData
}

/**
 * A message row from the statement's key: the id (36 characters of `uuid::text`), the hex content
 * hash (64), the partial flag (`p`, `f`, or `-` for a row of an appends-only session, whose flag is the
 * projection's rule on `data.status`) and the position (the seq in an appends-only session).
 */
function unpackKey(k: string, data: LoadData, payload: unknown): LiveMessageRow & { readonly position: number } {
  const flag = k.charCodeAt(100)
  return {
    message_id: k.slice(0, 36),
    content_hash: k.slice(36, 100),
    partial: flag === 0x70 /* p */ || (flag === 0x2d /* - */ && data.status === 'partial'),
    position: Number(k.slice(101)),
    data,
    payload,
  }
}

/** Versioned: a new text needs a new name (a connection keeps a prepared statement by its name). */
const LOAD_STATEMENT_NAME = 'turnlog_load_session_2'
const LOAD_STATEMENT = `
  select s.version::text as v, null::text as k, null::json as data, null::json as payload
    from turnlog.sessions s
   where s.session_id = $1::uuid
  union all
  select null, x.k, x.data, x.payload
    from turnlog.sessions s
   cross join lateral (
     select e.message_id::text || encode(e.content_hash, 'hex') || '-' || e.seq::text as k, e.data, e.payload
       from turnlog.events e
      where s.appends_only and e.session_id = s.session_id
     union all
     select l.message_id::text || encode(e.content_hash, 'hex') || case when l.partial then 'p' else 'f' end || l.position::text,
            e.data, e.payload
       from turnlog.live_messages l
       join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
      where not s.appends_only and l.session_id = s.session_id and e.session_id = s.session_id) x
   where s.session_id = $1::uuid`
