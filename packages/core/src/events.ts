import type { ChatMessage } from './chat-message.js'
import type { ContentHash } from './content-hash.js'
import type { EventId, MessageId, SessionId } from './ids.js'
import type { JsonValue } from './json-value.js'

/** Every event type turnlog writes. New types may be added; none is ever renamed. */
export const EVENT_TYPES = [
  'message_appended',
  'message_revised',
  'message_finalized',
  'messages_retracted',
  'messages_compacted',
  'session_forked',
  'message_redacted',
] as const

/** An event type. */
export type EventType = (typeof EVENT_TYPES)[number]

/** Envelope fields of a message, carried by every event that carries its content. */
export interface MessageEventData {
  /** The message's own creation time (data, not order). */
  readonly createdAt: string
  readonly externalId?: string
  /** The scope the id was derived in with `externalId` (see `createMessage`). */
  readonly externalScope?: string
  /** `'partial'` while streaming. */
  readonly status?: 'partial'
  /** A compaction summary: not live until the `messages_compacted` event that follows places it. */
  readonly deferred?: true
  /** Copied into a fork from this parent session (same id, same content). */
  readonly inheritedFrom?: SessionId
  /** 0 for the first content, 1.. for revisions. */
  readonly revision?: number
  /** A fork's copy of a message that was already redacted: the payload is the placeholder, never content. */
  readonly redacted?: true
  /** The payload's format; absent for `openai-chat` (so chat messages are stored as before formats existed). */
  readonly format?: string
  /** The message's `meta` (never sent to the provider); absent when it has none. */
  readonly meta?: { readonly [key: string]: JsonValue }
}

/** What a rewind kept or dropped: keep `after` (retract what follows), or retract `from` on. */
export type RewindTarget = { readonly after: MessageId } | { readonly from: MessageId }

/** Fields every stored event has. */
export interface EventBase {
  readonly sessionId: SessionId
  /** Per-session sequence: 1, 2, 3, … without gaps. The session's version is its last seq. */
  readonly seq: number
  readonly eventId: EventId
  /** When the event was written (database clock). Data only. */
  readonly recordedAt: string
  /** Hash-chain link: hex SHA-256 over the previous event's hash and this event (see `chainHash`). */
  readonly hash: string
  /**
   * Set when a redaction scrubbed this event's payload (now the placeholder): hex SHA-256 of the
   * original payload text, which the chain covers in its place. A `message_redacted` event records it too.
   */
  readonly payloadDigest?: string
}

/** A message entered the log. */
export interface MessageAppendedEvent extends EventBase {
  readonly type: 'message_appended'
  readonly messageId: MessageId
  readonly contentHash: ContentHash
  readonly payload: ChatMessage
  readonly data: MessageEventData
}

/** A live message got new content (same id, new hash), or its streaming status changed with it. */
export interface MessageRevisedEvent extends EventBase {
  readonly type: 'message_revised'
  readonly messageId: MessageId
  readonly contentHash: ContentHash
  readonly payload: ChatMessage
  readonly data: MessageEventData
}

/** A partial (streaming) message was declared complete without new content. */
export interface MessageFinalizedEvent extends EventBase {
  readonly type: 'message_finalized'
  readonly messageId: MessageId
  readonly contentHash: null
  readonly payload: null
  readonly data: Readonly<Record<string, never>>
}

/**
 * A rewind, or a `sync` (then `data.sync` is true and `target` is `{ from }` its first id): the named
 * live messages left the live view.
 */
export interface MessagesRetractedEvent extends EventBase {
  readonly type: 'messages_retracted'
  readonly messageId: null
  readonly contentHash: null
  readonly payload: null
  readonly data: { readonly ids: readonly MessageId[]; readonly target: RewindTarget; readonly reason?: string; readonly sync?: true }
}

/**
 * A compaction (`compact`, or a `sync` with `compaction`: then `data.sync` is true): `covered` left the
 * live view; `summary` (appended just before) took the first one's place.
 */
export interface MessagesCompactedEvent extends EventBase {
  readonly type: 'messages_compacted'
  readonly messageId: null
  readonly contentHash: null
  readonly payload: null
  readonly data: {
    readonly covered: readonly { readonly id: MessageId; readonly contentHash: string }[]
    readonly summary: readonly MessageId[]
    readonly reason?: string
    readonly metadata?: JsonValue
    readonly sync?: true
  }
}

/** First event of a forked session; the inherited messages follow as `message_appended` copies. */
export interface SessionForkedEvent extends EventBase {
  readonly type: 'session_forked'
  readonly messageId: null
  readonly contentHash: null
  readonly payload: null
  readonly data: {
    readonly parentSessionId: SessionId
    readonly parentVersion: number
    readonly at: MessageId
    readonly inherited: number
  }
}

/**
 * A message's content was scrubbed (GDPR) in this session: the events listed in `scrubbed` now hold the
 * placeholder payload; their id, seq, content hash and chain link stay, and the chain covers each
 * one's `payloadDigest` (SHA-256 of the original payload text) instead of its payload.
 */
export interface MessageRedactedEvent extends EventBase {
  readonly type: 'message_redacted'
  readonly messageId: MessageId
  readonly contentHash: null
  readonly payload: null
  readonly data: {
    readonly reason?: string
    /**
     * The events of this session scrubbed by this redaction: each one's seq, original content hash,
     * `payloadDigest` (SHA-256 of the original payload text) and `placeholderDigest` (SHA-256 of the
     * placeholder text that replaced it, see `placeholderDigest`). Records written before migration
     * 0009 lack the last two.
     */
    readonly scrubbed?: readonly {
      readonly seq: number
      readonly contentHash?: string
      readonly payloadDigest: string
      readonly placeholderDigest?: string
    }[]
    /** The session the redaction was requested in (a copy in a fork is scrubbed with it). */
    readonly origin?: SessionId
  }
}

/** Any stored event. */
export type StoredEvent =
  | MessageAppendedEvent
  | MessageRevisedEvent
  | MessageFinalizedEvent
  | MessagesRetractedEvent
  | MessagesCompactedEvent
  | SessionForkedEvent
  | MessageRedactedEvent
