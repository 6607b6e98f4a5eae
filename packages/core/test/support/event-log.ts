/**
 * Builds hand-written StoredEvent lists for fold tests: seqs 1, 2, 3…, real event ids and a real hash
 * chain, so each test only states what happens.
 */
import {
  GENESIS_HASH,
  chainHash,
  contentHash,
  newEventId,
  type ChatMessage,
  type ContentHash,
  type Message,
  type MessageEventData,
  type MessageId,
  type RewindTarget,
  type SessionId,
  type StoredEvent,
} from '@turnlog/core'

type Body = StoredEvent extends infer E
  ? E extends StoredEvent
    ? Omit<E, 'sessionId' | 'seq' | 'eventId' | 'recordedAt' | 'hash'>
    : never
  : never

export class EventLog {
  readonly events: StoredEvent[] = []
  private prev = GENESIS_HASH

  constructor(readonly sessionId: SessionId) {}

  /** The seq the next event will get. */
  get nextSeq(): number {
    return this.events.length + 1
  }

  /** Adds any event body (also impossible ones, for anomaly tests). */
  push(body: Body): this {
    const seq = this.nextSeq
    const eventId = newEventId()
    const hash = chainHash(this.prev, {
      sessionId: this.sessionId,
      seq,
      eventId,
      type: body.type,
      messageId: body.messageId,
      contentHash: body.contentHash,
      dataText: JSON.stringify(body.data),
      payloadText: body.payload === null ? null : JSON.stringify(body.payload),
    })
    this.prev = hash
    this.events.push({
      ...body,
      sessionId: this.sessionId,
      seq,
      eventId,
      recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      hash,
    } as StoredEvent)
    return this
  }

  append(message: Message, data: Partial<MessageEventData> = {}): this {
    return this.push({
      type: 'message_appended',
      messageId: message.id,
      contentHash: contentHash(message),
      payload: JSON.parse(JSON.stringify(message.payload)) as ChatMessage,
      data: envelope(message, data),
    })
  }

  revise(message: Message, payload: ChatMessage, data: Partial<MessageEventData> = {}): this {
    return this.push({
      type: 'message_revised',
      messageId: message.id,
      contentHash: contentHash(payload),
      payload: JSON.parse(JSON.stringify(payload)) as ChatMessage,
      data: envelope(message, data),
    })
  }

  finalize(id: MessageId): this {
    return this.push({ type: 'message_finalized', messageId: id, contentHash: null, payload: null, data: {} })
  }

  retract(ids: readonly MessageId[], target: RewindTarget): this {
    return this.push({ type: 'messages_retracted', messageId: null, contentHash: null, payload: null, data: { ids, target } })
  }

  compact(covered: readonly { readonly id: MessageId; readonly contentHash: string }[], summary: readonly MessageId[]): this {
    return this.push({
      type: 'messages_compacted',
      messageId: null,
      contentHash: null,
      payload: null,
      data: { covered, summary, reason: 'test' },
    })
  }

  forked(parentSessionId: SessionId, parentVersion: number, at: MessageId, inherited: number): this {
    return this.push({
      type: 'session_forked',
      messageId: null,
      contentHash: null,
      payload: null,
      data: { parentSessionId, parentVersion, at, inherited },
    })
  }

  redact(id: MessageId): this {
    return this.push({ type: 'message_redacted', messageId: id, contentHash: null, payload: null, data: { reason: 'gdpr' } })
  }
}

function envelope(message: Message, data: Partial<MessageEventData>): MessageEventData {
  const out: { -readonly [K in keyof MessageEventData]: MessageEventData[K] } = { createdAt: message.createdAt }
  if (message.externalId !== undefined) out.externalId = message.externalId
  if (message.status !== undefined) out.status = message.status
  return { ...out, ...data }
}

/** `{ id, contentHash }` of messages, as a compaction names them. */
export function coverage(...messages: Message[]): { id: MessageId; contentHash: ContentHash }[] {
  return messages.map((m) => ({ id: m.id, contentHash: contentHash(m) }))
}
