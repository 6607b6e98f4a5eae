import type { SessionId } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'

/** A live projection row joined with the event holding its current content. */
export interface LiveRow {
  message_id: string
  event_seq: number
  partial: boolean
  content_hash: string
  data: Record<string, unknown>
  scrubbed: boolean
}

/** The session's live projection rows in position order, each with its current content's hash and envelope (no payloads). */
export async function liveRows(db: Kysely<unknown>, id: SessionId): Promise<LiveRow[]> {
  const { rows } = await sql<{
    message_id: string
    event_seq: string | number
    partial: boolean
    content_hash: string
    data: Record<string, unknown>
    scrubbed: boolean
  }>`
    select l.message_id::text, l.event_seq, l.partial, encode(e.content_hash, 'hex') as content_hash, e.data,
           e.payload_digest is not null as scrubbed
      from turnlog.live_messages l
      join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
     where l.session_id = ${id}
     order by l.position`.execute(db)
  return rows.map((r) => ({ ...r, event_seq: Number(r.event_seq) }))
}
