import { TurnlogError, type SessionId } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { sqlState } from './map-database-error.js'

/** One live message as stored: its projection row and the event holding its current content. */
export interface LiveMessageRow {
  readonly message_id: string
  readonly partial: boolean | null
  /** Hex SHA-256 of the canonical payload. */
  readonly content_hash: string
  readonly data: { readonly createdAt: string; readonly externalId?: string }
  readonly payload: unknown
}

/** The session's version and its live messages in position order. */
export interface LiveRows {
  readonly version: number
  readonly rows: readonly LiveMessageRow[]
}

/** A row of `load_session` (0006), or of `load_live` (0001) with a null position. */
interface LoadRow {
  version: string | number | null
  message_id: string | null
  position: string | number | null
  partial: boolean | null
  content_hash: string | null
  data: { createdAt: string; externalId?: string } | null
  payload: unknown
}

/** Databases (by their root Kysely) whose schema predates 0006: their loads read `load_live`. */
const withoutLoadSession = new WeakSet<Kysely<unknown>>()

/**
 * Reads a session's version and live messages in one statement: `turnlog.load_session` (0006), whose
 * rows come in join order and are sorted here by position (a stable sort, skipped when they already
 * are in order, as they are unless a compaction or a revision moved something). On a schema older than
 * 0006 (code deployed before its migration ran) it reads `turnlog.load_live` (0001) instead, already in
 * order: at once outside a caller's transaction, from the next call inside one (the failed statement
 * has aborted it). Throws `SESSION_NOT_FOUND` (a `TLS01` from the function, or no session row);
 * database errors are thrown as they are.
 */
export async function loadLiveRows(db: Kysely<unknown>, root: Kysely<unknown>, sessionId: SessionId, inTransaction: boolean): Promise<LiveRows> {
  let result: LoadRow[]
  if (withoutLoadSession.has(root)) {
    result = await selectLoadLive(db, sessionId)
  } else {
    try {
      result = (await sql<LoadRow>`
        select version, message_id::text, position, partial, content_hash, data, payload
          from turnlog.load_session(${sessionId}::uuid)`.execute(db)).rows
    } catch (error) {
      if (sqlState(error) !== '42883') throw error
      withoutLoadSession.add(root)
      if (inTransaction) throw error
      result = await selectLoadLive(db, sessionId)
    }
  }
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
    rows.push(row)
  }
  if (version === undefined) throw new TurnlogError('SESSION_NOT_FOUND', `session ${sessionId} not found`, { details: { sessionId } })
  if (!sorted) rows.sort((a, b) => Number(a.position) - Number(b.position))
  return { version, rows }
}

/** A message row, not the session's own row (nor load_live's all-null row of an empty session). */
function isMessageRow(row: LoadRow): row is LoadRow & LiveMessageRow {
  return row.message_id !== null && row.content_hash !== null && row.data !== null
}

/** The 0001 read: version on every row, messages in position order, one all-null row when there are none. */
async function selectLoadLive(db: Kysely<unknown>, sessionId: SessionId): Promise<LoadRow[]> {
  return (await sql<LoadRow>`
    select version, message_id::text, null::bigint as position, partial, content_hash, data, payload
      from turnlog.load_live(${sessionId}::uuid)`.execute(db)).rows
}
