import {
  TurnlogError,
  newEventId,
  type Message,
  type MessageId,
  type SessionId,
  type SyncCompactionOptions,
  type SyncOptions,
  type SyncResult,
} from '@turnlog/core'
import { guardInput, messageEnvelope, parseMessageIdArgument, parseSessionIdArgument } from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { BatchBudget, envelopeText } from '../batch-limits.js'
import { checkCallOptions, checkExpectedVersion, optionKeys } from '../check-arguments.js'
import { customSqlState } from '../custom-sqlstates.js'
import { retryableLostRace } from '../retryable-lost-race.js'
import { checkSafeText } from '../safe-text.js'
import { checkBatch, type CheckedBatch } from './check-batch.js'
import { checkVersion } from './check-version.js'
import { liveRows, type LiveRow } from './live-rows.js'
import { payloadText } from './payload-text.js'
import { recordConflict, recordInBatchConflict } from './record-conflict.js'
import type { NewEvent, StoreContext } from './store-context.js'

/** A message of the caller's list with its content hash. */
interface Hashed {
  readonly message: Message
  readonly hash: string
}

/** One compaction `sync` records: a run of summary messages and the live rows they replace. */
interface PlannedCompaction {
  readonly summary: Hashed[]
  readonly covered: readonly LiveRow[]
}

/** What one `sync` has to write, computed from the locked live rows and the caller's list. */
interface SyncPlan {
  readonly retracted: MessageId[]
  readonly revised: (Hashed & { readonly row: LiveRow })[]
  readonly finalized: MessageId[]
  readonly compactions: PlannedCompaction[]
  readonly appended: Hashed[]
}

/** The checked `compaction` option: summary ids and the reason, or none. */
interface CheckedCompaction {
  readonly summaryIds: ReadonlySet<string>
  readonly reason: string | undefined
}

/** The options of `sync` and of its `compaction` (any other key is refused, naming it). */
const SYNC_OPTIONS = optionKeys<SyncOptions>({ expectedVersion: true, compaction: true })
const SYNC_COMPACTION_OPTIONS = optionKeys<SyncCompactionOptions>({ summaryIds: true, reason: true })

/** `sync`: makes the live list equal to the caller's list in one transaction (see `SessionStore.sync`). */
export class SyncOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.sync`. */
  async sync(sessionId: string, list: readonly Message<unknown>[], options: SyncOptions = {}): Promise<SyncResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'sync options', SYNC_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const batch = checkBatch(list, 'list', true)
    const expected = checkExpectedVersion(options)
    const compaction = checkCompaction(options, batch)
    if (batch.mismatch) throw await recordInBatchConflict(this.#ctx, id, batch.mismatch)
    // a summary's claim on its id (turnlog.message_ids) may lose a race with another writer: the call
    // runs again and then finds the id stored (a conflict), as `compact` does
    const result = await this.#ctx.retry(5, retryableLostRace(), () => this.#syncOnce(id, batch, expected, compaction))
    this.#ctx.learn(id, [...writtenPairs(result, batch.unique, batch.hashes)])
    return this.#ctx.observed(id, result)
  }

  /** One attempt of {@link sync}: one transaction; a refused append becomes `MESSAGE_CONFLICT` with its evidence. */
  async #syncOnce(id: SessionId, batch: CheckedBatch, expected: number | undefined, compaction: CheckedCompaction): Promise<SyncResult> {
    let refused: { error: unknown; batch: Message[]; hashes: string[] } | null = null
    try {
      return await this.#ctx.tx(async (db) => {
        const version = await this.#ctx.lock(db, id)
        const live = await liveRows(db, id)
        // a replay of a sync already in effect (say its commit's acknowledgement was lost) succeeds
        // whatever the version, writing nothing, as a replayed append of duplicates does; any other
        // list under a stale version is VERSION_CONFLICT before anything else about it is judged
        if (expected !== undefined && expected !== version && inEffect(id, live, batch, compaction)) return nothingDone(version)
        checkVersion(expected, version)
        const plan = planSync(id, live, batch.unique, batch.hashes, compaction.summaryIds)
        const summaries = plan.compactions.flatMap((c) => c.summary)
        await checkSummariesNew(db, id, summaries)
        const budget = new BatchBudget(this.#ctx.maxBatchBytes, summaries.length + plan.appended.length)
        const events: NewEvent[] = []
        if (plan.retracted.length > 0) {
          const data = { ids: plan.retracted, target: { from: plan.retracted[0] }, sync: true }
          events.push(structural('messages_retracted', data))
        }
        for (const r of plan.revised) {
          const revisions = await countVersions(db, id, r.message.id)
          // a final message stays final: the list's 'partial' only keeps a streaming message streaming
          const partial = r.row.partial && r.message.status === 'partial'
          const dataText = JSON.stringify(messageEnvelope(r.row.data, partial, { revision: revisions }))
          events.push({
            eventId: newEventId(),
            type: 'message_revised',
            messageId: r.message.id,
            contentHash: r.hash,
            payloadText: payloadText(r.message, this.#ctx.maxMessageBytes),
            dataText,
          })
        }
        for (const mid of plan.finalized) {
          events.push({
            eventId: newEventId(),
            type: 'message_finalized',
            messageId: mid,
            contentHash: null,
            payloadText: null,
            dataText: '{}',
          })
        }
        for (const c of plan.compactions) {
          // the events `compact` writes: the summaries appended deferred, then the compaction that places them
          for (const s of c.summary) {
            const envelope = JSON.stringify(messageEnvelope(s.message, s.message.status === 'partial', { deferred: true }))
            events.push({
              eventId: newEventId(),
              type: 'message_appended',
              messageId: s.message.id,
              contentHash: s.hash,
              payloadText: budget.add(payloadText(s.message, this.#ctx.maxMessageBytes), s.message.id, envelope.length),
              dataText: envelope,
            })
          }
          const data: Record<string, unknown> = {
            covered: c.covered.map((r) => ({ id: r.message_id, contentHash: r.content_hash })),
            summary: c.summary.map((s) => s.message.id),
          }
          if (compaction.reason !== undefined) data['reason'] = compaction.reason
          data['sync'] = true
          events.push(structural('messages_compacted', data))
        }
        let next = await this.#ctx.write(db, id, version, events)
        if (plan.appended.length > 0) {
          const messages = plan.appended.map((a) => a.message)
          const hashes = plan.appended.map((a) => a.hash)
          const data = messages.map((m) => envelopeText(m))
          const payloads = messages.map((m, i) => budget.add(payloadText(m, this.#ctx.maxMessageBytes), m.id, (data[i] as string).length))
          const [ids, hashList, eventIds] = [messages.map((m) => m.id), hashes, messages.map(() => newEventId())].map((v) =>
            JSON.stringify(v),
          )
          let rows: { version: string | number; duplicates: string[] | string }[]
          try {
            ;({ rows } = await sql<{ version: string | number; duplicates: string[] | string }>`
              select version, appended::text[] as appended, duplicates::text[] as duplicates
                from turnlog.append_messages(${id}::uuid, ${next}::bigint, ${ids}::json, ${hashList}::json, ${eventIds}::json,
                                             ${`[${payloads.join(',')}]`}::json, ${`[${data.join(',')}]`}::json)`.execute(db))
          } catch (error) {
            if (customSqlState(error) === 'TLM01') refused = { error, batch: messages, hashes }
            throw error
          }
          const row = rows[0]
          if (!row) throw new TurnlogError('DB_ERROR', 'append returned no row')
          const again = pgArray(row.duplicates)
          if (again.length > 0) throw notLive(id, again[0] as string)
          next = Number(row.version)
        }
        return {
          version: next,
          appended: plan.appended.map((a) => a.message.id),
          retracted: plan.retracted,
          revised: plan.revised.map((r) => r.message.id),
          finalized: plan.finalized,
          compacted: plan.compactions.map((c) => ({
            summary: c.summary.map((s) => s.message.id),
            covered: c.covered.map((r) => r.message_id as MessageId),
          })),
        }
      })
    } catch (error) {
      const r = refused as { error: unknown; batch: Message[]; hashes: string[] } | null
      if (r !== null) throw await recordConflict(this.#ctx, id, r.batch, r.hashes, r.error)
      throw error
    }
  }
}

/** Whether syncing `batch` would write nothing: its plan is empty (false when it would be refused). */
function inEffect(id: SessionId, live: readonly LiveRow[], batch: CheckedBatch, compaction: CheckedCompaction): boolean {
  let plan: SyncPlan
  try {
    plan = planSync(id, live, batch.unique, batch.hashes, compaction.summaryIds)
  } catch {
    return false
  }
  return (
    plan.appended.length === 0 &&
    plan.retracted.length === 0 &&
    plan.revised.length === 0 &&
    plan.finalized.length === 0 &&
    plan.compactions.length === 0
  )
}

/** The result of a sync that wrote nothing, at `version`. */
function nothingDone(version: number): SyncResult {
  return { version, appended: [], retracted: [], revised: [], finalized: [], compacted: [] }
}

/** An event that names messages in its data only (a retraction, a compaction). */
function structural(type: 'messages_retracted' | 'messages_compacted', data: Readonly<Record<string, unknown>>): NewEvent {
  return { eventId: newEventId(), type, messageId: null, contentHash: null, payloadText: null, dataText: JSON.stringify(data) }
}

/**
 * Checks `options.compaction` before any statement: absent, or `{ summaryIds, reason? }` whose ids the
 * list holds (`INVALID_INPUT`, `details.reason: 'summary_not_listed'` otherwise).
 */
function checkCompaction(options: SyncOptions, batch: CheckedBatch): CheckedCompaction {
  const value: unknown = guardInput('sync options', () => options.compaction)
  if (value === undefined) return { summaryIds: new Set(), reason: undefined }
  const input = checkCallOptions(value as SyncCompactionOptions, 'compaction', SYNC_COMPACTION_OPTIONS, 'compaction') as {
    summaryIds?: unknown
    reason?: unknown
  }
  const [raw, reason] = guardInput('compaction', () => [input.summaryIds, input.reason] as const)
  if (!guardInput('compaction.summaryIds', () => Array.isArray(raw))) {
    throw new TurnlogError('INVALID_INPUT', 'compaction.summaryIds must be an array of message ids', {
      details: { field: 'compaction.summaryIds' },
    })
  }
  const summaryIds = new Set(
    guardInput('compaction.summaryIds', () =>
      [...(raw as readonly unknown[])].map((v, i) => parseMessageIdArgument(v, `compaction.summaryIds[${i}]`)),
    ),
  )
  const listed = new Set<string>(batch.unique.map((m) => m.id))
  for (const sid of summaryIds) {
    if (!listed.has(sid)) {
      throw new TurnlogError(
        'INVALID_INPUT',
        `compaction names summary ${sid}, which the list does not hold (ephemeral messages are skipped)`,
        {
          details: { messageId: sid, reason: 'summary_not_listed', field: 'compaction.summaryIds' },
        },
      )
    }
  }
  return { summaryIds, reason: reason === undefined ? undefined : checkSafeText(reason, 'compaction.reason') }
}

/**
 * Compares the live rows with the caller's list: kept messages must be live rows in their stored
 * order, new ones follow them all; a run of new summary messages may stand between kept ones (before
 * any other new message) and replaces the live rows missing between its neighbours. Throws
 * `INVALID_INPUT` (`details.reason: 'reorder'`, `'summary_covers_nothing'`) otherwise.
 */
function planSync(
  id: SessionId,
  live: readonly LiveRow[],
  list: readonly Message[],
  hashes: readonly string[],
  summaryIds: ReadonlySet<string>,
): SyncPlan {
  const at = new Map(live.map((r, i) => [r.message_id, i]))
  const plan: SyncPlan = { retracted: [], revised: [], finalized: [], compactions: [], appended: [] }
  let last = -1
  // the open run of summaries: the messages and the live index of the kept message before it
  let run: { summary: Hashed[]; after: number } | null = null
  const closeRun = (before: number): void => {
    if (run === null) return
    const covered = live.slice(run.after + 1, before)
    if (covered.length === 0) {
      const first = run.summary[0]?.message.id
      throw new TurnlogError(
        'INVALID_INPUT',
        `sync cannot record summary ${first ?? ''} of session ${id} as a compaction: no live message is missing where it stands (append it as an ordinary message instead)`,
        { details: { sessionId: id, messageId: first, reason: 'summary_covers_nothing' } },
      )
    }
    plan.compactions.push({ summary: run.summary, covered })
    run = null
  }
  const reorder = (m: Message, why: string): TurnlogError =>
    new TurnlogError('INVALID_INPUT', `sync cannot reorder session ${id}: message ${m.id} ${why}`, {
      details: { sessionId: id, messageId: m.id, reason: 'reorder' },
    })
  list.forEach((m, i) => {
    const hash = hashes[i] as string
    const index = at.get(m.id)
    if (index === undefined) {
      if (!summaryIds.has(m.id)) {
        plan.appended.push({ message: m, hash })
        return
      }
      if (plan.appended.length > 0)
        throw reorder(m, 'is a summary listed after a new message (summaries take the place of what they replace; new messages go last)')
      run ??= { summary: [], after: last }
      run.summary.push({ message: m, hash })
      return
    }
    if (index < last || plan.appended.length > 0) {
      throw reorder(m, 'is listed after a message that follows it in the log (the live list keeps log order; new messages go last)')
    }
    closeRun(index)
    last = index
    const row = live[index] as LiveRow
    // a redacted message keeps its place: its stored content is scrubbed, the caller's copy is not
    if (row.scrubbed) return
    if (row.content_hash !== hash) plan.revised.push({ message: m, hash, row })
    else if (row.partial && m.status !== 'partial') plan.finalized.push(m.id)
  })
  closeRun(live.length)
  const listed = new Set<string>(list.map((m) => m.id))
  const covered = new Set<string>(plan.compactions.flatMap((c) => c.covered.map((r) => r.message_id)))
  plan.retracted.push(...live.filter((r) => !listed.has(r.message_id) && !covered.has(r.message_id)).map((r) => r.message_id as MessageId))
  return plan
}

/**
 * A new summary's id must be new to the store: stored in this session (retracted or compacted before)
 * is `INVALID_INPUT` (`not_live`), stored in another session `MESSAGE_CONFLICT` (`foreign_session`),
 * as for `compact` (no conflict evidence: the summary is not an append).
 */
async function checkSummariesNew(db: Kysely<unknown>, id: SessionId, summaries: readonly Hashed[]): Promise<void> {
  if (summaries.length === 0) return
  const { rows } = await sql<{ message_id: string; session_id: string }>`
    select distinct message_id::text, session_id::text from turnlog.events
     where message_id = any (array(select value::uuid from json_array_elements_text(${JSON.stringify(summaries.map((s) => s.message.id))}::json)))
       and content_hash is not null`.execute(db)
  for (const s of summaries) {
    const stored = rows.filter((r) => r.message_id === s.message.id)
    if (stored.some((r) => r.session_id === id)) throw notLive(id, s.message.id)
    const foreign = stored[0]
    if (foreign) {
      throw new TurnlogError(
        'MESSAGE_CONFLICT',
        `summary message ${s.message.id} is already stored in session ${foreign.session_id}; nothing was written`,
        { details: { sessionId: id, messageId: s.message.id, reason: 'foreign_session', otherSessionId: foreign.session_id } },
      )
    }
  }
}

/** The `INVALID_INPUT` for a new message of the list whose id the session retracted or compacted before. */
function notLive(id: SessionId, messageId: string): TurnlogError {
  return new TurnlogError(
    'INVALID_INPUT',
    `message ${messageId} was retracted or compacted from session ${id}; sync cannot bring it back (append it under a new id)`,
    { details: { sessionId: id, messageId, reason: 'not_live' } },
  )
}

/** How many content versions the message has (1 + its revisions). */
async function countVersions(db: Kysely<unknown>, id: SessionId, mid: string): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from turnlog.events where session_id = ${id} and message_id = ${mid} and content_hash is not null`.execute(db)
  return Number(rows[0]?.n ?? 1)
}

/** The (id, content hash) pairs a committed sync made durable: its appended, revised and summary messages. */
function* writtenPairs(result: SyncResult, list: readonly Message[], hashes: readonly string[]): Iterable<readonly [string, string]> {
  const written = new Set<string>([...result.appended, ...result.revised, ...result.compacted.flatMap((c) => c.summary)])
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as Message
    if (written.has(m.id)) yield [m.id, hashes[i] as string]
  }
}

/** node-postgres parses `text[]`; PGlite too, but be tolerant of the literal form. */
function pgArray(value: string[] | string | null | undefined): string[] {
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) return value
  const inner = value.replace(/^\{|\}$/g, '')
  return inner === '' ? [] : inner.split(',')
}
