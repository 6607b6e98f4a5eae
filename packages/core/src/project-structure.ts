import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import type { MessageId } from './ids.js'

/**
 * @packageDocumentation
 * The projection spec: which messages are live, in which order, which event holds each one's current
 * content, and whether it is still streaming. This module is THE written rule; everything else that
 * computes a live list is pinned to it:
 *
 * - `foldSession` (core) builds on {@link applyEvent} and materialises messages and payloads on top;
 * - the SQL projection (`turnlog.project_event`, the statement trigger `events_project` and the batch
 *   `turnlog.rebuild_sessions`) keeps `turnlog.live_messages` equal to {@link projectionRows}: the
 *   differential tests in `packages/postgres/test/projection-differential*.prop.test.ts` write
 *   histories through the store, event type by event type, and compare the table with this function.
 *
 * It reads only each event's `seq`, `type`, `messageId` and `data`: never payloads, hashes, ids of
 * events or clocks. It is pure and deterministic, and has no I/O.
 *
 * The rules, per event type, are written on {@link applyEvent}.
 */

/** Where a message stands in the session's history. */
export type MessageState = 'live' | 'retracted' | 'compacted' | 'pending' | 'redacted'

/** Something in the log the fold could not apply as written (reported by the audit). */
export interface FoldAnomaly {
  readonly seq: number
  readonly kind: 'unknown_message' | 'duplicate_append' | 'not_live' | 'bad_event'
  readonly explanation: string
}

/** What the projection reads of an event: its seq, type, message id and data (never its payload). */
export interface StructuralEvent {
  readonly seq: number
  readonly type: string
  readonly messageId: string | null
  readonly data: unknown
}

/** One row of the live list, as `turnlog.live_messages` holds it (its position is the row's index). */
export interface ProjectionRow {
  readonly messageId: MessageId
  /** The seq of the event holding the message's current content (its append or latest revision). */
  readonly eventSeq: number
  /** Still streaming. */
  readonly partial: boolean
}

/** What the projection knows of one message. */
export interface StructuralRecord {
  readonly id: MessageId
  readonly state: MessageState
  readonly partial: boolean
  /** The seq of the event holding the current content. */
  readonly eventSeq: number
  /** Seqs of every event that named this message and applied, in order. */
  readonly events: readonly number[]
}

/** The projection of a log prefix: the live list, every message known, and the anomalies met. */
export interface StructureState {
  /** The live list, in order. */
  readonly live: readonly MessageId[]
  /** Every message ever appended, by id, in append order. */
  readonly messages: ReadonlyMap<MessageId, StructuralRecord>
  readonly anomalies: readonly FoldAnomaly[]
}

interface MutableRecord {
  id: MessageId
  state: MessageState
  partial: boolean
  eventSeq: number
  events: number[]
}

/** A mutable projection state; {@link applyEvent} advances it. */
export class StructureBuilder implements StructureState {
  live: MessageId[] = []
  readonly messages = new Map<MessageId, MutableRecord>()
  readonly anomalies: FoldAnomaly[] = []
}

/** A new, empty projection (a session with no events). */
export function newStructure(): StructureBuilder {
  return new StructureBuilder()
}

interface DataFields {
  readonly status?: unknown
  readonly deferred?: unknown
  readonly ids?: Iterable<string>
  readonly covered?: Iterable<{ readonly id: string }>
  readonly summary?: Iterable<string>
}

/**
 * Applies one event (the next in seq order) to `state`, in place, and returns whether it applied as
 * written (false: it caused at least one anomaly, appended to `state.anomalies`). This is the projection rule, written once.
 *
 * An event that breaks a rule's precondition changes nothing and is
 * reported as a {@link FoldAnomaly}; the store never writes one):
 *
 * - `message_appended`: the message becomes known, with `eventSeq = seq` and `partial` when
 *   `data.status === 'partial'`. Unless `data.deferred` is present and not `null` (a compaction summary,
 *   *pending* until its compaction; the store writes `true`) it joins the end of the live list. A fork's inherited copies are ordinary appends
 *   (`data.inheritedFrom` changes nothing here), so a fork's live list is its inherited prefix in the
 *   parent's order, then its own events. Precondition: the id is not known yet (`duplicate_append`).
 * - `message_revised`: the message's current content is this event: `eventSeq = seq`, `partial` from
 *   `data.status`; its place in the list does not move. Precondition: the message is live
 *   (`unknown_message`, `not_live`).
 * - `message_finalized`: `partial = false`; `eventSeq` and the place stay. Precondition: the message is
 *   known (`unknown_message`); a retracted or compacted message is finalized all the same (it has no
 *   live row; the store only finalizes live ones).
 * - `messages_retracted` (rewind): every id of `data.ids` leaves the live list (state `retracted`); the
 *   others keep their order. Each id that is not live is skipped (`unknown_message`, `not_live`).
 * - `messages_compacted`: every id of `data.covered[].id` leaves the live list (state `compacted`);
 *   each one not live is skipped (`unknown_message`, `not_live`). The messages of `data.summary`, in
 *   that order, become live where the first covered message stood (the lowest place among the covered
 *   ones that were live; at the end of the list when none was), keeping the `eventSeq` of their own
 *   (deferred) append and its `partial` (false when a `message_finalized` came while the summary was
 *   pending). Each summary id that is not pending is skipped (`unknown_message`).
 * - `session_forked`: nothing (the copies that follow carry the inheritance).
 * - `message_redacted`: nothing structural: the message keeps its place, `eventSeq` and `partial`
 *   (only payloads change, which this spec does not read). Precondition: the message is known
 *   (`unknown_message`).
 * - any other type: nothing (`bad_event`).
 *
 * `turnlog.live_messages` holds one row per live message, `(message_id, event_seq, partial)`, plus a
 * `position` whose only meaning is the order of the rows: {@link projectionRows} is that table in
 * position order.
 *
 * A malformed event (a `data` list that is not iterable, no object at all) or a `state` that is not a
 * {@link StructureBuilder} throws `INVALID_INPUT`; the store never writes one (`rebuild` reports it as
 * `CORRUPT_LOG`).
 */
export function applyEvent(state: StructureBuilder, e: StructuralEvent): boolean {
  if (!guardInput('state', () => state instanceof StructureBuilder))
    throw new TurnlogError('INVALID_INPUT', 'applyEvent needs the state newStructure() made', { details: { field: 'state' } })
  if (typeof e !== 'object' || e === null)
    throw new TurnlogError('INVALID_INPUT', 'applyEvent needs an event object', { details: { field: 'e' } })
  return guardInput('applyEvent', () => applyEventUnchecked(state, e))
}

/** {@link applyEvent} without its argument checks: the fold's loop, which guards the whole fold once. */
export function applyEventUnchecked(state: StructureBuilder, e: StructuralEvent): boolean {
  const before = state.anomalies.length
  const records = state.messages
  const data = e.data as DataFields
  const mid = e.messageId as MessageId
  switch (e.type) {
    case 'message_appended': {
      if (records.has(mid)) {
        report(state, e.seq, 'duplicate_append', `message ${mid} appended again`)
        break
      }
      // present and not null, as the SQL projection reads it (`data->>'deferred' is not null`); the store writes `true`
      const deferred = data.deferred !== undefined && data.deferred !== null
      records.set(mid, {
        id: mid,
        state: deferred ? 'pending' : 'live',
        partial: data.status === 'partial',
        eventSeq: e.seq,
        events: [e.seq],
      })
      if (!deferred) state.live.push(mid)
      break
    }
    case 'message_revised': {
      const r = known(state, e.seq, mid, 'revision')
      if (!r) break
      if (r.state !== 'live') {
        report(state, e.seq, 'not_live', `revision of ${mid}, which is not live`)
        break
      }
      r.partial = data.status === 'partial'
      r.eventSeq = e.seq
      r.events.push(e.seq)
      break
    }
    case 'message_finalized': {
      const r = known(state, e.seq, mid, 'finalize')
      if (!r) break
      r.partial = false
      r.events.push(e.seq)
      break
    }
    case 'messages_retracted': {
      const gone = new Set<MessageId>()
      for (const id of data.ids as Iterable<MessageId>) {
        const r = records.get(id)
        if (!r || r.state !== 'live') {
          report(state, e.seq, r ? 'not_live' : 'unknown_message', `rewind names ${id}, which is not live`)
          continue
        }
        r.state = 'retracted'
        r.events.push(e.seq)
        gone.add(id)
      }
      state.live = state.live.filter((id) => !gone.has(id))
      break
    }
    case 'messages_compacted': {
      const covered = new Set<MessageId>()
      for (const c of data.covered as Iterable<{ readonly id: MessageId }>) {
        const r = records.get(c.id)
        if (!r || r.state !== 'live') {
          report(state, e.seq, r ? 'not_live' : 'unknown_message', `compaction covers ${c.id}, which is not live`)
          continue
        }
        r.state = 'compacted'
        r.events.push(e.seq)
        covered.add(c.id)
      }
      let at = state.live.findIndex((id) => covered.has(id))
      if (at < 0) at = state.live.length
      const summary: MessageId[] = []
      for (const id of data.summary as Iterable<MessageId>) {
        const r = records.get(id)
        if (!r || r.state !== 'pending') {
          report(state, e.seq, 'unknown_message', `compaction summary ${id} was not appended before it`)
          continue
        }
        r.state = 'live'
        r.events.push(e.seq)
        summary.push(id)
      }
      const kept = state.live.slice(0, at).filter((id) => !covered.has(id))
      const rest = state.live.slice(at).filter((id) => !covered.has(id))
      state.live = [...kept, ...summary, ...rest]
      break
    }
    case 'session_forked':
      break
    case 'message_redacted': {
      const r = known(state, e.seq, mid, 'redaction')
      if (!r) break
      r.events.push(e.seq)
      break
    }
    default:
      report(state, e.seq, 'bad_event', `unknown event type ${e.type}`)
  }
  return state.anomalies.length === before
}

/** The record of `id`, or undefined after reporting `unknown_message` for the `what` at `seq`. */
function known(state: StructureBuilder, seq: number, id: MessageId, what: string): MutableRecord | undefined {
  const r = state.messages.get(id)
  if (!r) report(state, seq, 'unknown_message', `${what} of unknown message ${id}`)
  return r
}

function report(state: StructureBuilder, seq: number, kind: FoldAnomaly['kind'], explanation: string): void {
  state.anomalies.push({ seq, kind, explanation })
}

/** The live list of a projection as `turnlog.live_messages` rows, in position order. */
export function projectionRows(state: StructureState): ProjectionRow[] {
  if (typeof state !== 'object' || state === null)
    throw new TurnlogError('INVALID_INPUT', 'projectionRows needs a projection state', { details: { field: 'state' } })
  return guardInput('projectionRows', () => rowsOf(state))
}

function rowsOf(state: StructureState): ProjectionRow[] {
  return state.live.map((id) => {
    const r = state.messages.get(id)
    return { messageId: id, eventSeq: r?.eventSeq ?? 0, partial: r?.partial ?? false }
  })
}

/**
 * The projection of a session's events (in seq order): every event applied with {@link applyEvent},
 * and the live list as `turnlog.live_messages` rows (`rows`, in position order). Pure.
 */
export function projectStructure(events: Iterable<StructuralEvent>): StructureState & { readonly rows: readonly ProjectionRow[] } {
  if (
    typeof events !== 'object' ||
    events === null ||
    !guardInput('events', () => typeof (events as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function')
  ) {
    throw new TurnlogError('INVALID_INPUT', 'projectStructure needs an iterable of events', { details: { field: 'events' } })
  }
  return guardInput('projectStructure', () => {
    const state = newStructure()
    for (const e of events) {
      if (typeof e !== 'object' || e === null)
        throw new TurnlogError('INVALID_INPUT', 'projectStructure needs event objects', { details: { field: 'events' } })
      applyEventUnchecked(state, e)
    }
    return { live: state.live, messages: state.messages, anomalies: state.anomalies, rows: rowsOf(state) }
  })
}
