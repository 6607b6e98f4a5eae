import type { SessionId, StoredEvent } from '@turnlog/core'
import { sql } from 'kysely'

/** An event row as the store selects it (ids as text, hashes as hex). */
export interface EventRow {
  session_id: string
  seq: string | number
  event_id: string
  type: string
  message_id: string | null
  content_hash: string | null
  payload: unknown
  data: unknown
  recorded_at: Date | string
  hash: string
  payload_digest?: string | null
}

/** The select list that produces an {@link EventRow} from `turnlog.events` (unaliased). */
export const EVENT_COLUMNS = sql.raw(
  `session_id::text, seq, event_id::text, type, message_id::text, encode(content_hash, 'hex') as content_hash,
   payload, data, recorded_at, encode(hash, 'hex') as hash, encode(payload_digest, 'hex') as payload_digest`,
)

/** A timestamp from either driver (node-postgres gives a Date, PGlite too, text as a fallback) as ISO-8601. */
export function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString()
}

/** Maps a selected row to a {@link StoredEvent}. */
export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    sessionId: row.session_id as SessionId,
    seq: Number(row.seq),
    eventId: row.event_id,
    type: row.type,
    messageId: row.message_id,
    contentHash: row.content_hash,
    payload: row.payload ?? null,
    data: row.data ?? {},
    recordedAt: iso(row.recorded_at),
    hash: row.hash,
    ...(row.payload_digest === null || row.payload_digest === undefined ? {} : { payloadDigest: row.payload_digest }),
  } as StoredEvent
}
