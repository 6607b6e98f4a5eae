import {
  EVENT_TYPES,
  MAX_JSON_DEPTH,
  TurnlogError,
  isTurnlogError,
  jsonDepth,
  parseEventId,
  parseMessageId,
  parseSessionId,
  toFrozenJson,
  type ChainInput,
  type JsonValue,
  type SessionId,
} from '@turnlog/core'
import { guardInput, isIsoTimestamp, type ImportedSessionHead } from '@turnlog/core/internal'
import { checkSafeJson, checkSafeText } from '../safe-text.js'

/** An imported session's attributes, checked (the shape the export-file reader holds too). */
export type PreparedSessionHead = ImportedSessionHead

/**
 * An imported event, checked, with the JSON texts the store writes: the chain's input (the fields and
 * texts the link covers) plus where it came from and the link the source recorded.
 */
export interface PreparedEvent extends ChainInput {
  readonly line: number
  readonly sessionId: SessionId
  readonly recordedAt: string
  readonly hash: string
  readonly payloadDigest: string | null
  /** True for an original append (not a fork's copy): its message id must be new to every other session. */
  readonly originalAppend: boolean
}

/** A complete imported session, checked: what the import writer takes. */
export interface PreparedSession {
  readonly session: PreparedSessionHead
  readonly events: readonly PreparedEvent[]
  /** Payload, data and metadata text, in UTF-16 code units (the batch budget). */
  readonly size: number
}

const HEX64 = /^[0-9a-f]{64}$/
const TYPES = new Set<string>(EVENT_TYPES)
const MESSAGE_TYPES = new Set(['message_appended', 'message_revised'])

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function fail(line: number, message: string, details: Record<string, unknown> = {}, cause?: unknown): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, {
    details: { line, ...details },
    ...(cause === undefined ? {} : { cause }),
  })
}

/** Runs a check of one field; its `INVALID_INPUT` becomes `IMPORT_FAILED` naming the line. */
function field<T>(line: number, what: string, check: () => T): T {
  try {
    return check()
  } catch (error) {
    if (isTurnlogError(error, 'IMPORT_FAILED')) throw error
    throw fail(line, `${what}: ${error instanceof Error ? error.message : 'invalid'}`, { field: what }, error)
  }
}

function lineOf(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TurnlogError('INVALID_INPUT', `${what}.line must be a positive integer (where the record came from)`, {
      details: { field: `${what}.line` },
    })
  }
  return value
}

function iso(value: unknown, what: string, line: number): string {
  // a real date and time: Date.parse alone reads 2024-02-30 as March 1
  if (!isIsoTimestamp(value)) throw fail(line, `${what} must be an ISO-8601 timestamp of a real date and time`, { field: what })
  return value
}

function hex(value: unknown, what: string, line: number): string {
  if (typeof value !== 'string' || !HEX64.test(value)) throw fail(line, `${what} must be 64 lower-case hex digits`, { field: what })
  return value
}

function count(value: unknown, what: string, line: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw fail(line, `${what} must be a non-negative integer`, { field: what })
  return value
}

function prepareHead(s: Record<string, unknown>): PreparedSessionHead {
  const line = lineOf(s['line'], 'session')
  const id = field(line, 'session id', () => parseSessionId(s['id']))
  const rawTenant = s['tenantId']
  const tenantId =
    rawTenant === null || rawTenant === undefined ? null : field(line, 'tenantId', () => checkSafeText(rawTenant, 'tenantId'))
  const rawMetadata = s['metadata']
  // stored as its JSON text (json, not jsonb): NUL and lone surrogates are kept as the source has them
  const given = rawMetadata === undefined ? null : rawMetadata
  if (jsonDepth(given, MAX_JSON_DEPTH + 1) > MAX_JSON_DEPTH)
    throw fail(line, `session metadata is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`, { limit: MAX_JSON_DEPTH })
  // a JSON value (it is compared with a stored session's metadata and written as text)
  const metadata = given === null ? null : field(line, 'metadata', () => toFrozenJson(given))
  const rawParent = s['parent']
  let parent: PreparedSessionHead['parent'] = null
  if (rawParent !== null && rawParent !== undefined) {
    if (!isPlainObject(rawParent)) throw fail(line, 'parent must be an object or null', { field: 'parent' })
    parent = {
      sessionId: field(line, 'parent.sessionId', () => parseSessionId(rawParent['sessionId'])),
      version: count(rawParent['version'], 'parent.version', line),
      at: field(line, 'parent.at', () => parseMessageId(rawParent['at'])),
    }
  }
  return {
    line,
    id,
    tenantId,
    metadata,
    createdAt: iso(s['createdAt'], 'createdAt', line),
    updatedAt: iso(s['updatedAt'], 'updatedAt', line),
    parent,
  }
}

function prepareEvent(value: unknown, head: PreparedSessionHead, seq: number): PreparedEvent {
  if (!isPlainObject(value)) throw fail(head.line, `session ${head.id}: event ${seq} must be an object`, { sessionId: head.id, seq })
  const e = value
  const line = lineOf(e['line'], `event ${seq}`)
  if (e['seq'] !== seq)
    throw fail(line, `session ${head.id}: expected seq ${seq} (the log must be contiguous from 1)`, {
      sessionId: head.id,
      seq,
      field: 'seq',
    })
  const eventId = field(line, 'eventId', () => parseEventId(e['eventId']))
  const type = e['type']
  if (typeof type !== 'string' || !TYPES.has(type)) throw fail(line, 'unknown event type', { sessionId: head.id, seq, field: 'type' })
  const rawMessageId = e['messageId']
  const messageId =
    rawMessageId === null || rawMessageId === undefined ? null : field(line, 'messageId', () => parseMessageId(rawMessageId))
  const rawContentHash = e['contentHash']
  const contentHash = rawContentHash === null || rawContentHash === undefined ? null : hex(rawContentHash, 'contentHash', line)
  const hash = hex(e['hash'], 'hash', line)
  const rawDigest = e['payloadDigest']
  const payloadDigest = rawDigest === undefined || rawDigest === null ? null : hex(rawDigest, 'payloadDigest', line)
  const data = e['data']
  if (!isPlainObject(data)) throw fail(line, 'data must be an object', { sessionId: head.id, seq, field: 'data' })
  if (jsonDepth(data, MAX_JSON_DEPTH + 2) > MAX_JSON_DEPTH + 1)
    throw fail(line, 'data is nested too deep', { sessionId: head.id, seq, field: 'data' })
  field(line, 'data', () => checkSafeJson(data as JsonValue, 'event data'))
  // a fork's copy names the session's fork parent (the claim trigger refuses anything else, TLA01)
  if (
    type === 'message_appended' &&
    Object.hasOwn(data, 'inheritedFrom') &&
    (head.parent === null || data['inheritedFrom'] !== head.parent.sessionId)
  )
    throw fail(
      line,
      `session ${head.id}: event ${seq} is a fork's copy (data.inheritedFrom) that does not name the session's fork parent (${head.parent?.sessionId ?? 'none: the session is not a fork'})`,
      { sessionId: head.id, seq, field: 'data' },
    )
  const rawPayload = e['payload']
  const payload = rawPayload === undefined ? null : rawPayload
  if (payload !== null && !isPlainObject(payload))
    throw fail(line, 'payload must be an object or null', { sessionId: head.id, seq, field: 'payload' })
  if (payload !== null && jsonDepth(payload, MAX_JSON_DEPTH + 1) > MAX_JSON_DEPTH)
    throw fail(line, 'payload is nested too deep', { sessionId: head.id, seq, field: 'payload' })
  const isMessage = MESSAGE_TYPES.has(type)
  if (isMessage && (payload === null || messageId === null || contentHash === null))
    throw fail(line, `a ${type} event needs messageId, contentHash and payload`, { sessionId: head.id, seq })
  // the message's own creation time (its envelope): load returns it as the message's createdAt, so a
  // date that does not exist would be read back as another one (or as no date at all)
  if (isMessage && !isIsoTimestamp(data['createdAt']))
    throw fail(line, `session ${head.id}: event ${seq}: data.createdAt must be an ISO-8601 timestamp of a real date and time`, {
      sessionId: head.id,
      seq,
      field: 'data.createdAt',
    })
  if (!isMessage && (payload !== null || payloadDigest !== null))
    throw fail(line, `a ${type} event carries no payload`, { sessionId: head.id, seq })
  return {
    line,
    sessionId: head.id,
    seq,
    eventId,
    type,
    messageId,
    contentHash,
    recordedAt: iso(e['recordedAt'], 'recordedAt', line),
    hash,
    payloadDigest,
    payloadText: payload === null ? null : JSON.stringify(payload),
    dataText: JSON.stringify(data),
    originalAppend: type === 'message_appended' && !Object.hasOwn(data, 'inheritedFrom'),
  }
}

/**
 * Checks one session of an import source and makes the texts the writer sends: `INVALID_INPUT` for
 * something that is not a session record, `IMPORT_FAILED` naming the record's line for a malformed
 * field (the rules `turnlog.import_events` relies on: ids, safe texts, contiguous seqs, hex links, every
 * timestamp a real date and time: a session's `createdAt` and `updatedAt`, an event's `recordedAt`, a
 * message event's `data.createdAt`) and
 * for a message id appended twice in the session (original or a fork's copy: the store never writes it)
 * and for a fork's copy whose `data.inheritedFrom` is not the session's fork parent.
 */
export function prepareImportedSession(value: unknown): PreparedSession {
  return guardInput('sessions', () => {
    if (!isPlainObject(value))
      throw new TurnlogError('INVALID_INPUT', 'each imported session must be an object', { details: { field: 'sessions' } })
    const session = prepareHead(value)
    const rawEvents = value['events']
    if (!Array.isArray(rawEvents))
      throw fail(session.line, `session ${session.id}: events must be an array`, { sessionId: session.id, field: 'events' })
    let size = session.metadata === null ? 0 : JSON.stringify(session.metadata).length
    const events: PreparedEvent[] = []
    // the line of each message id's append: a session holds an id once (a second append, original or a fork's copy,
    // is the fold's duplicate_append; the database refuses only some of them, docs/schema.md "live_messages")
    const appended = new Map<string, number>()
    for (let i = 0; i < rawEvents.length; i++) {
      const event = prepareEvent(rawEvents[i], session, i + 1)
      if (event.type === 'message_appended' && event.messageId !== null) {
        const first = appended.get(event.messageId)
        if (first !== undefined)
          throw fail(
            event.line,
            `session ${session.id}: message ${event.messageId} is appended again (first at line ${first}); a session holds each message id once`,
            {
              sessionId: session.id,
              seq: event.seq,
              messageId: event.messageId,
              field: 'messageId',
            },
          )
        appended.set(event.messageId, event.line)
      }
      events.push(event)
      size += (event.payloadText?.length ?? 0) + event.dataText.length
    }
    return { session, events, size }
  })
}
