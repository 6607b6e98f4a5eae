import type { ContentHash } from './content-hash.js'
import { primeContentHash } from './content-hash.js'
import type { MessageEventData, StoredEvent } from './events.js'
import type { MessageId, SessionId } from './ids.js'
import { restoreMessage, type Message } from './message.js'
import { redactedPayload } from './redacted-payload.js'
import { z } from 'zod'
import { guardInput, parseInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/** Where a message stands in the session's history. */
export type MessageState = 'live' | 'retracted' | 'compacted' | 'pending' | 'redacted'

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

/** Something in the log the fold could not apply as written (reported by the audit). */
export interface FoldAnomaly {
  readonly seq: number
  readonly kind: 'unknown_message' | 'duplicate_append' | 'not_live' | 'bad_event'
  readonly explanation: string
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

interface MutableRecord {
  id: MessageId
  message: Message
  state: MessageState
  partial: boolean
  revisions: MessageRevision[]
  events: number[]
}

/** Options for {@link foldSession}. */
export interface FoldOptions {
  /** Stop after this seq (time travel): the state as of that version. */
  readonly at?: number
}

function toMessage(id: MessageId, payload: unknown, hash: string, data: MessageEventData, partial: boolean): Message {
  const message = restoreMessage({
    id,
    payload,
    createdAt: data.createdAt,
    externalId: data.externalId,
    externalScope: data.externalScope,
    status: partial ? 'partial' : undefined,
  })
  primeContentHash(message.payload, hash)
  return message
}

/**
 * The projection: a pure, deterministic fold of a session's events (in seq order) into its state.
 * The store's inline projection, `rebuild`, and `load({ at })` must all agree with it.
 * @example
 * ```ts
 * const events = []
 * for await (const e of store.events(session)) events.push(e)
 * const state = foldSession(events) // equals what store.load(session) projects
 * ```
 */
export function foldSession(events: Iterable<StoredEvent>, options: FoldOptions = {}): SessionState {
  const checked = parseInput(FoldOptionsSchema, options, 'options') as FoldOptions
  if (typeof events !== 'object' || events === null || !guardInput('events', () => typeof (events as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function')) {
    throw new TurnlogError('INVALID_INPUT', 'foldSession needs an iterable of stored events', { details: { field: 'events' } })
  }
  // a malformed event (not what a store returns) is the caller's input: INVALID_INPUT, never a TypeError
  return guardInput('foldSession', () => fold(events, checked))
}

const FoldOptionsSchema = z.object({ at: z.number().int().nonnegative().optional() })

function fold(events: Iterable<StoredEvent>, options: FoldOptions): SessionState {
  const records = new Map<MessageId, MutableRecord>()
  let live: MessageId[] = []
  let version = 0
  let sessionId: SessionId | null = null
  let forkedFrom: SessionState['forkedFrom'] = null
  const anomalies: FoldAnomaly[] = []
  const anomaly = (seq: number, kind: FoldAnomaly['kind'], explanation: string): void => {
    anomalies.push({ seq, kind, explanation })
  }

  for (const e of events) {
    if (options.at !== undefined && e.seq > options.at) break
    version = e.seq
    sessionId ??= e.sessionId
    switch (e.type) {
      case 'message_appended': {
        if (records.has(e.messageId)) {
          anomaly(e.seq, 'duplicate_append', `message ${e.messageId} appended again`)
          break
        }
        const partial = e.data.status === 'partial'
        const message = toMessage(e.messageId, e.payload, e.contentHash, e.data, partial)
        const deferred = e.data.deferred === true
        records.set(e.messageId, {
          id: e.messageId,
          message,
          state: deferred ? 'pending' : 'live',
          partial,
          revisions: [{ seq: e.seq, contentHash: e.contentHash, message }],
          events: [e.seq],
        })
        if (!deferred) live.push(e.messageId)
        break
      }
      case 'message_revised': {
        const r = records.get(e.messageId)
        if (!r) {
          anomaly(e.seq, 'unknown_message', `revision of unknown message ${e.messageId}`)
          break
        }
        if (r.state !== 'live') {
          anomaly(e.seq, 'not_live', `revision of ${e.messageId}, which is not live`)
          break
        }
        const partial = e.data.status === 'partial'
        const message = toMessage(e.messageId, e.payload, e.contentHash, e.data, partial)
        r.message = message
        r.partial = partial
        r.revisions.push({ seq: e.seq, contentHash: e.contentHash, message })
        r.events.push(e.seq)
        break
      }
      case 'message_finalized': {
        const r = records.get(e.messageId)
        if (!r) {
          anomaly(e.seq, 'unknown_message', `finalize of unknown message ${e.messageId}`)
          break
        }
        const last = r.revisions[r.revisions.length - 1]
        r.partial = false
        r.message = last ? toMessage(r.id, last.message.payload, last.contentHash, last.message, false) : r.message
        r.events.push(e.seq)
        break
      }
      case 'messages_retracted': {
        const gone = new Set<MessageId>()
        for (const id of e.data.ids) {
          const r = records.get(id)
          if (!r || r.state !== 'live') {
            anomaly(e.seq, r ? 'not_live' : 'unknown_message', `rewind names ${id}, which is not live`)
            continue
          }
          r.state = 'retracted'
          r.events.push(e.seq)
          gone.add(id)
        }
        live = live.filter((id) => !gone.has(id))
        break
      }
      case 'messages_compacted': {
        const covered = new Set<MessageId>()
        for (const c of e.data.covered) {
          const r = records.get(c.id)
          if (!r || r.state !== 'live') {
            anomaly(e.seq, r ? 'not_live' : 'unknown_message', `compaction covers ${c.id}, which is not live`)
            continue
          }
          r.state = 'compacted'
          r.events.push(e.seq)
          covered.add(c.id)
        }
        let at = live.findIndex((id) => covered.has(id))
        if (at < 0) at = live.length
        const summary: MessageId[] = []
        for (const id of e.data.summary) {
          const r = records.get(id)
          if (!r || r.state !== 'pending') {
            anomaly(e.seq, 'unknown_message', `compaction summary ${id} was not appended before it`)
            continue
          }
          r.state = 'live'
          r.events.push(e.seq)
          summary.push(id)
        }
        const kept = live.slice(0, at).filter((id) => !covered.has(id))
        const rest = live.slice(at).filter((id) => !covered.has(id))
        live = [...kept, ...summary, ...rest]
        break
      }
      case 'session_forked':
        forkedFrom = { sessionId: e.data.parentSessionId, version: e.data.parentVersion, at: e.data.at }
        break
      case 'message_redacted': {
        const r = records.get(e.messageId)
        if (!r) {
          anomaly(e.seq, 'unknown_message', `redaction of unknown message ${e.messageId}`)
          break
        }
        r.events.push(e.seq)
        // every content version shows the placeholder (role and pairing ids kept, see redactedPayload),
        // with its original content hash, as the store returns scrubbed rows
        const redact = (m: Message, hash: ContentHash): Message =>
          toMessage(m.id, redactedPayload(m.payload), hash, m, m.status === 'partial')
        r.revisions = r.revisions.map((v) => ({ ...v, message: redact(v.message, v.contentHash) }))
        const current = r.revisions[r.revisions.length - 1]
        if (current) r.message = redact(r.message, current.contentHash)
        break
      }
      default: {
        const unknown = e as { seq: number; type: string }
        anomaly(unknown.seq, 'bad_event', `unknown event type ${unknown.type}`)
      }
    }
  }
  return { sessionId, version, live, messages: records, forkedFrom, anomalies }
}

/** The live list of a folded state as messages, in order. */
export function liveMessages(state: SessionState): Message[] {
  checkState(state, 'liveMessages')
  return guardInput('liveMessages', () => liveOf(state))
}

function checkState(state: unknown, what: string): void {
  const s = state as { live?: unknown; messages?: unknown } | null
  if (typeof s !== 'object' || s === null || !guardInput(what, () => Array.isArray(s.live) && s.messages instanceof Map)) {
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
  return guardInput('transcriptOf', () => transcriptEntries(state))
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
