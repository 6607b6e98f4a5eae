import type { ColumnType, Generated } from 'kysely'

/** `turnlog.sessions`. */
export interface SessionsTable {
  session_id: string
  tenant_id: string | null
  version: ColumnType<string | number, number | undefined, number>
  created_at: ColumnType<Date, never, never>
  updated_at: ColumnType<Date, never, Date>
  metadata: unknown
  parent_session_id: string | null
  parent_version: ColumnType<string | number | null, number | null | undefined, number | null>
  fork_at: string | null
}

/** `turnlog.events`: the append-only log. */
export interface EventsTable {
  session_id: string
  seq: ColumnType<string | number, number, never>
  global_position: Generated<string>
  tx_id: Generated<string>
  event_id: string
  type: string
  message_id: string | null
  content_hash: Uint8Array | null
  payload: unknown
  data: unknown
  recorded_at: Generated<Date>
  hash: Generated<Uint8Array>
}

/** `turnlog.live_messages`: the inline projection of each session's live list. */
export interface LiveMessagesTable {
  session_id: string
  message_id: string
  position: string | number
  event_seq: string | number
  partial: boolean
}

/** `turnlog.conflicts`: evidence of refused `MESSAGE_CONFLICT` attempts. */
export interface ConflictsTable {
  session_id: string
  conflict_id: string
  message_id: string
  reason: string
  stored_hash: Uint8Array | null
  incoming_hash: Uint8Array
  other_session_id: string | null
  incoming_payload: unknown
  detected_at: Generated<Date>
}

/** The kysely schema of turnlog's tables. */
export interface TurnlogDatabase {
  'turnlog.sessions': SessionsTable
  'turnlog.events': EventsTable
  'turnlog.live_messages': LiveMessagesTable
  'turnlog.conflicts': ConflictsTable
}
