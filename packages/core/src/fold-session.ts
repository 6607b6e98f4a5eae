import type { ContentHash } from './content-hash.js'
import type { MessageEventData, StoredEvent } from './events.js'
import type { MessageId, SessionId } from './ids.js'
import { restoreMessage, type Message } from './message.js'
import { redactedPayload } from './redacted-payload.js'
import { z } from 'zod'
import { checkKnownKeys } from './check-known-keys.js'
import { guardInput, parseInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import { applyEventUnchecked, newStructure, type FoldAnomaly, type MessageState } from './project-structure.js'

export type { FoldAnomaly, MessageState } from './project-structure.js'

/** One content version of a message. */
export interface MessageRevision {
  readonly seq: number
  readonly contentHash: ContentHash
  readonly message: Message
}

/** Everything the log says about one message. */
export interface MessageRecord {
  readonly id: MessageId
  /** The current content (latest revision), with `status: 'partial'` while streaming. */
  readonly message: Message
  readonly state: MessageState
  readonly partial: boolean
  /** Every content version in log order; the last is current. */
  readonly revisions: readonly MessageRevision[]
  /** Seqs of every event that named this message, in order. */
  readonly events: readonly number[]
}

/** The result of folding a session's events: its live list and the history of every message. */
export interface SessionState {
  readonly sessionId: SessionId | null
  readonly version: number
  /** The live list (what the model sees), in order. */
  readonly live: readonly MessageId[]
  /** Every message ever appended, by id. */
  readonly messages: ReadonlyMap<MessageId, MessageRecord>
  readonly forkedFrom: { readonly sessionId: SessionId; readonly version: number; readonly at: MessageId } | null
  readonly anomalies: readonly FoldAnomaly[]
}

/** A message record while folding: the content side is the fold's, `state` and `partial` are copied from the structure at the end. */
interface MutableRecord {
  id: MessageId
  message: Message
  state: MessageState
  partial: boolean
  revisions: MessageRevision[]
  events: readonly number[]
}

/** Options for {@link foldSession}. */
export interface FoldOptions {
  /** Stop after this seq (time travel): the state as of that version. */
  readonly at?: number
}

function toMessage(id: MessageId, payload: unknown, hash: string, data: MessageEventData, partial: boolean): Message {
  return restoreMessage({
    id,
    payload,
    createdAt: data.createdAt,
    externalId: data.externalId,
    externalScope: data.externalScope,
    status: partial ? 'partial' : undefined,
    format: data.format,
    meta: data.meta,
    // the event's hash, kept on the payload's mark; a hint only, like primeContentHash: anything but a
    // hex SHA-256 is left out and the hash is computed when asked
    contentHash: typeof hash === 'string' && SHA256_HEX.test(hash) ? hash : undefined,
  })
}

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * The fold: a pure, deterministic fold of a session's events (in seq order) into its state. The live
 * list, each message's state, partial flag and the seq of its current content, and the anomalies are
 * the structural projection ({@link applyEvent}, the written spec the store's SQL projection is
 * tested against); the fold adds what needs payloads on top: each message's content versions as
 * `Message` values (redacted ones show the placeholder), the version and the fork origin. The store's
 * inline projection, `rebuild`, and `load({ at })` all agree with it. It changes no event, with one
 * exception: the messages share the events' payload (and `meta`) objects, not copies, and a message's
 * payload is deep-frozen, so those objects of the events given are frozen in place (as the store's
 * own events are); pass copies of events whose payloads you mean to change afterwards.
 * @example
 * ```ts
 * const events = []
 * for await (const e of store.events(session)) events.push(e)
 * const state = foldSession(events) // equals what store.load(session) projects
 * ```
 */
export function foldSession(events: Iterable<StoredEvent>, options: FoldOptions = {}): SessionState {
  const checked = parseInput(FoldOptionsSchema, options, 'options') as FoldOptions
  checkKnownKeys(checked, ['at'], 'options', 'foldSession')
  if (
    typeof events !== 'object' ||
    events === null ||
    !guardInput('events', () => typeof (events as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function')
  ) {
    throw new TurnlogError('INVALID_INPUT', 'foldSession needs an iterable of stored events', { details: { field: 'events' } })
  }
  // a malformed event (not what a store returns) is the caller's input: INVALID_INPUT, never a TypeError
  return guardInput('events', () => fold(events, checked))
}

const FoldOptionsSchema = z.looseObject({ at: z.number().int().nonnegative().optional() })

function fold(events: Iterable<StoredEvent>, options: FoldOptions): SessionState {
  const structure = newStructure()
  const records = new Map<MessageId, MutableRecord>()
  let version = 0
  let sessionId: SessionId | null = null
  let forkedFrom: SessionState['forkedFrom'] = null

  for (const e of events) {
    if (options.at !== undefined && e.seq > options.at) break
    version = e.seq
    sessionId ??= e.sessionId
    // the structure first; an event that did not apply (an anomaly) changes no content either
    const applied = applyEventUnchecked(structure, e)
    switch (e.type) {
      case 'message_appended': {
        if (!applied) break
        const partial = e.data.status === 'partial'
        const message = toMessage(e.messageId, e.payload, e.contentHash, e.data, partial)
        // events: the structure's own list of the seqs naming the message (it keeps appending to it)
        const events = structure.messages.get(e.messageId)?.events ?? [e.seq]
        records.set(e.messageId, {
          id: e.messageId,
          message,
          state: 'live',
          partial,
          revisions: [{ seq: e.seq, contentHash: e.contentHash, message }],
          events,
        })
        break
      }
      case 'message_revised': {
        const c = records.get(e.messageId)
        if (!applied || !c) break
        const message = toMessage(e.messageId, e.payload, e.contentHash, e.data, e.data.status === 'partial')
        c.message = message
        c.revisions.push({ seq: e.seq, contentHash: e.contentHash, message })
        break
      }
      case 'message_finalized': {
        const c = records.get(e.messageId)
        if (!applied || !c) break
        const last = c.revisions[c.revisions.length - 1]
        c.message = last ? toMessage(e.messageId, last.message.payload, last.contentHash, last.message, false) : c.message
        break
      }
      case 'session_forked':
        forkedFrom = { sessionId: e.data.parentSessionId, version: e.data.parentVersion, at: e.data.at }
        break
      case 'message_redacted': {
        const c = records.get(e.messageId)
        if (!applied || !c) break
        // every content version shows the placeholder (role and pairing ids kept, see redactedPayload),
        // with its original content hash, as the store returns scrubbed rows
        const redact = (m: Message, hash: ContentHash): Message =>
          toMessage(m.id, redactedPayload(m.payload, m.format), hash, m, m.status === 'partial')
        c.revisions = c.revisions.map((v) => ({ ...v, message: redact(v.message, v.contentHash) }))
        const current = c.revisions[c.revisions.length - 1]
        if (current) c.message = redact(c.message, current.contentHash)
        break
      }
      default:
        break
    }
  }
  for (const r of records.values()) {
    const s = structure.messages.get(r.id)
    if (s) {
      r.state = s.state
      r.partial = s.partial
    }
  }
  return { sessionId, version, live: structure.live, messages: records, forkedFrom, anomalies: structure.anomalies }
}

/** The live list of a folded state as messages, in order. */
export function liveMessages(state: SessionState): Message[] {
  checkState(state, 'liveMessages')
  return guardInput('state', () => liveOf(state))
}

function checkState(state: unknown, what: string): void {
  const s = state as { live?: unknown; messages?: unknown } | null
  if (typeof s !== 'object' || s === null || !guardInput('state', () => Array.isArray(s.live) && s.messages instanceof Map)) {
    throw new TurnlogError('INVALID_INPUT', `${what} needs a folded SessionState`, { details: { field: 'state' } })
  }
}

function liveOf(state: SessionState): Message[] {
  const out: Message[] = []
  for (const id of state.live) {
    const r = state.messages.get(id)
    if (r) out.push(r.message)
  }
  return out
}

/** A transcript entry's status. */
export type TranscriptStatus = 'live' | 'retracted' | 'compacted' | 'superseded-revision' | 'partial'

/** One content version of one message, in log order, with what happened to it. */
export interface TranscriptEntry {
  readonly seq: number
  readonly message: Message
  /** 0 for the original content, 1.. for revisions. */
  readonly revision: number
  readonly status: TranscriptStatus
  /** Seqs of the events that changed this message after this version was written. */
  readonly changedBy: readonly number[]
}

/**
 * The full transcript: every content version of every message ever appended, in log order, with its
 * status. Pure; computed from a folded state.
 */
export function transcriptOf(state: SessionState): TranscriptEntry[] {
  checkState(state, 'transcriptOf')
  return guardInput('state', () => transcriptEntries(state))
}

function transcriptEntries(state: SessionState): TranscriptEntry[] {
  const entries: TranscriptEntry[] = []
  for (const r of state.messages.values()) {
    r.revisions.forEach((rev, i) => {
      const current = i === r.revisions.length - 1
      let status: TranscriptStatus
      if (!current) status = 'superseded-revision'
      else if (r.state === 'retracted') status = 'retracted'
      else if (r.state === 'compacted') status = 'compacted'
      else if (r.partial) status = 'partial'
      else status = 'live'
      entries.push({
        seq: rev.seq,
        message: current ? r.message : rev.message,
        revision: i,
        status,
        changedBy: r.events.filter((s) => s > rev.seq),
      })
    })
  }
  return entries.sort((a, b) => a.seq - b.seq)
}
