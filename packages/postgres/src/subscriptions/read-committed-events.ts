import { EVENT_TYPES, TurnlogError, type EventType, type SessionId, type StoredEvent } from '@turnlog/core'
import { checkKnownKeys, guardInput, parseSessionIdArgument } from '@turnlog/core/internal'
import { toStoredEvent, type EventRow } from '../event-row.js'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { describeValue } from '../safe-text.js'
import { checkKysely, checkOptionsObject } from '../check-arguments.js'
import { checkpointFromRow, parseCheckpoint, type Checkpoint } from './checkpoint.js'
import { mapDatabaseError } from '../map-database-error.js'

/** Which events a subscription hands to its handler; the others are skipped (the checkpoint passes them). */
export interface SubscriptionFilter {
  /** Only these event types. */
  readonly types?: readonly EventType[]
  /** Only this session's events. */
  readonly sessionId?: string
}

/** A stored event with its place in the transaction-ordered log. */
export type SubscribedEvent = StoredEvent & {
  /** The inserting transaction's id (`xid8`, decimal). */
  readonly txId: string
  /** The event's `global_position` (insertion order; not commit order). */
  readonly globalPosition: number
}

/** Options of {@link readCommittedEvents}. */
export interface ReadCommittedEventsOptions {
  /** How many log rows to scan (matching or not), 1–10,000; default 100. */
  readonly limit?: number
  readonly filter?: SubscriptionFilter
}

/** One page of the transaction-ordered log. */
export interface ReadCommittedEventsResult {
  /** The scanned events that match the filter, in `(txId, globalPosition)` order. */
  readonly events: readonly SubscribedEvent[]
  /** How many rows were scanned (matching or not); fewer than `limit` means the visible end was reached. */
  readonly scanned: number
  /** The key of the last scanned row: the next page starts after it. Null when nothing was scanned. */
  readonly last: Checkpoint | null
}

interface Row extends EventRow {
  tx_id: string
  global_position: string | number
  matched: boolean
}

/** A validated filter: session id parsed, types checked against {@link EVENT_TYPES}. */
export interface NormalizedFilter {
  readonly types?: readonly EventType[]
  readonly sessionId?: SessionId
}

/** Checks a filter; throws `INVALID_INPUT`. */
export function normalizeFilter(filter: SubscriptionFilter | undefined): NormalizedFilter {
  if (filter === undefined) return {}
  if (typeof filter !== 'object' || filter === null)
    throw new TurnlogError('INVALID_INPUT', 'filter must be an object', { details: { field: 'filter' } })
  // a misspelt `sessionID` would hand the handler every session's events
  checkKnownKeys(filter, ['types', 'sessionId'], 'filter')
  const out: { types?: readonly EventType[]; sessionId?: SessionId } = {}
  if (filter.types !== undefined) {
    if (!Array.isArray(filter.types) || filter.types.length === 0) {
      throw new TurnlogError('INVALID_INPUT', 'filter.types must be a non-empty array of event types', {
        details: { field: 'filter.types' },
      })
    }
    // every slot, holes included (a sparse array's hole is undefined: filter() and map() would skip it)
    const types: unknown[] = Array.from(filter.types as readonly unknown[])
    // described, not String()ed: a symbol or a null-prototype object would throw a TypeError here
    const unknown = types
      .filter((t) => !(EVENT_TYPES as readonly unknown[]).includes(t))
      .map((t: unknown) => (typeof t === 'string' ? t : describeValue(t)))
    if (unknown.length > 0) {
      throw new TurnlogError('INVALID_INPUT', `filter.types has unknown event types: ${unknown.join(', ')}`, {
        details: { unknown, field: 'filter.types' },
      })
    }
    out.types = Object.freeze([...new Set(types as EventType[])])
  }
  if (filter.sessionId !== undefined) out.sessionId = parseSessionIdArgument(filter.sessionId, 'filter.sessionId')
  return Object.freeze(out)
}

function matchExpression(filter: NormalizedFilter): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = []
  if (filter.types !== undefined) parts.push(sql`e.type in (select json_array_elements_text(${JSON.stringify(filter.types)}::json))`)
  if (filter.sessionId !== undefined) parts.push(sql`e.session_id = ${filter.sessionId}::uuid`)
  if (parts.length === 0) return sql<boolean>`true`
  return sql<boolean>`(${sql.join(parts, sql` and `)})`
}

function toSubscribedEvent(row: Row): SubscribedEvent {
  return {
    ...toStoredEvent(row),
    txId: row.tx_id,
    globalPosition: Number(row.global_position),
  } as SubscribedEvent
}

/**
 * Reads the log in transaction order after `after`: the rows whose inserting transaction ended before
 * every transaction still running (`tx_id < pg_snapshot_xmin(pg_current_snapshot())`), ordered by
 * `(tx_id, global_position)`. No row can ever appear behind such a page later, so a reader that keeps
 * the last key skips nothing, whatever order transactions commit in. One index range scan on
 * `events_tx_order_idx`.
 *
 * Rows that do not match the filter are scanned but not returned (their payloads are not fetched);
 * `last` still moves past them. A database failure is a {@link TurnlogError} (`mapDatabaseError`).
 */
export async function readCommittedEvents(
  db: Kysely<unknown>,
  after: Checkpoint,
  options: ReadCommittedEventsOptions = {},
): Promise<ReadCommittedEventsResult> {
  checkKysely(db, 'db')
  after = parseCheckpoint(after, 'after')
  options = checkOptionsObject(options, 'options', ['limit', 'filter'], 'readCommittedEvents')
  const limit = guardInput('options', () => options.limit) ?? 100
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) {
    throw new TurnlogError('INVALID_INPUT', `limit must be an integer from 1 to 10000, got ${describeValue(limit)}`, {
      details: { field: 'options.limit' },
    })
  }
  const match = matchExpression(normalizeFilter(options.filter))
  const { rows } = await sql<Row>`
    select e.tx_id::text as tx_id, e.global_position, ${match} as matched,
           e.session_id::text as session_id, e.seq, e.event_id::text as event_id, e.type, e.message_id::text as message_id,
           encode(e.content_hash, 'hex') as content_hash,
           case when ${match} then e.payload end as payload,
           case when ${match} then e.data end as data,
           e.recorded_at, encode(e.hash, 'hex') as hash, encode(e.payload_digest, 'hex') as payload_digest
      from turnlog.events e
     where (e.tx_id, e.global_position) > (${after.txId}::xid8, ${after.globalPosition}::bigint)
       and e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
     order by e.tx_id, e.global_position
     limit ${limit}`
    .execute(db)
    .catch((error: unknown) => {
      throw mapDatabaseError(error)
    })
  const events: SubscribedEvent[] = []
  for (const row of rows) if (row.matched) events.push(toSubscribedEvent(row))
  const tail = rows[rows.length - 1]
  return { events, scanned: rows.length, last: tail === undefined ? null : checkpointFromRow(tail.tx_id, tail.global_position) }
}

/** What {@link probeUndelivered} found after a checkpoint. */
export interface UndeliveredProbe {
  /** Committed events readers can see now (a reader that found none a moment ago raced a commit). */
  readonly visible: boolean
  /** Committed events an older open transaction (anywhere in the cluster) still holds back. */
  readonly heldBack: boolean
}

/**
 * Looks past `after` once a page came back empty. Both answers come from one snapshot, so a commit (or a
 * holder ending) between the page and this probe is never missed: it shows as `visible`. Cheap: index
 * range scans from the checkpoint and from the horizon.
 */
export async function probeUndelivered(db: Kysely<unknown>, after: Checkpoint): Promise<UndeliveredProbe> {
  const { rows } = await sql<{ visible: boolean; held_back: boolean }>`
    select exists (
             select 1 from turnlog.events e
              where (e.tx_id, e.global_position) > (${after.txId}::xid8, ${after.globalPosition}::bigint)
                and e.tx_id < pg_snapshot_xmin(pg_current_snapshot())) as visible,
           exists (
             select 1 from turnlog.events e
              where e.tx_id >= pg_snapshot_xmin(pg_current_snapshot())
                and (e.tx_id, e.global_position) > (${after.txId}::xid8, ${after.globalPosition}::bigint)) as held_back`.execute(db)
  return { visible: rows[0]?.visible === true, heldBack: rows[0]?.held_back === true }
}
