import type { SessionId } from './ids.js'
import type { JsonValue } from './json-value.js'

/**
 * One event of a session to import, exactly as another store recorded it (an export file's event
 * line): ids, seq, type, texts and `recordedAt` are kept, and the store refuses a `hash` (chain link)
 * that does not verify.
 */
export interface ImportedEvent {
  /** 1-based, contiguous within the session. */
  readonly seq: number
  readonly eventId: string
  readonly type: string
  readonly messageId: string | null
  /** Taken as given (as the database takes it): verify it against `payload` first when the source is not trusted. */
  readonly contentHash: string | null
  readonly payload: JsonValue | null
  readonly data: JsonValue
  /** ISO-8601. */
  readonly recordedAt: string
  /** The hash-chain link (64 lower-case hex digits) the source recorded. */
  readonly hash: string
  /** Set on an event a redaction scrubbed: the digest the chain covers instead of the (placeholder) payload. */
  readonly payloadDigest?: string
  /** Where the event came from (a 1-based line of a file): errors name it as `details.line`. */
  readonly line: number
}

/** A complete session to import: its attributes and its whole log from seq 1. */
export interface ImportedSession {
  readonly id: string
  readonly tenantId: string | null
  readonly metadata: JsonValue | null
  /** ISO-8601. */
  readonly createdAt: string
  /** ISO-8601. */
  readonly updatedAt: string
  /** Fork lineage: the parent session, its version at the fork, and the last inherited message. */
  readonly parent: { readonly sessionId: string; readonly version: number; readonly at: string } | null
  /** The session's events in seq order, from 1. */
  readonly events: readonly ImportedEvent[]
  /** Where the session came from (a 1-based line of a file): errors name it as `details.line`. */
  readonly line: number
}

/** Reported after each session an import committed (or found already present). */
export interface ImportedSessionOutcome {
  readonly sessionId: SessionId
  /** Events of this session inserted. */
  readonly written: number
  /** Events of this session the store already had (same seq, same link): nothing written for them. */
  readonly skipped: number
}

/** Options for `SessionStore.importSessions`. */
export interface ImportSessionsOptions {
  /** Called after each session is committed (or found already present), in source order. */
  readonly onSession?: (outcome: ImportedSessionOutcome) => void
}

/** Result of `SessionStore.importSessions`. */
export interface ImportSessionsResult {
  /** Sessions of the source (written, extended or already present). */
  readonly sessions: number
  /** Events inserted by this call. */
  readonly eventsWritten: number
  /** Events the store already had: nothing written for them. */
  readonly eventsSkipped: number
  /** Every session id of the source, in source order. */
  readonly sessionIds: SessionId[]
}
