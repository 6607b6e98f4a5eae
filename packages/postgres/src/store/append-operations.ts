import {
  TurnlogError,
  isRedactedPayload,
  newEventId,
  type AppendOptions,
  type AppendResult,
  type Message,
  type MessageId,
  type SessionId,
} from '@turnlog/core'
import { parseSessionIdArgument } from '@turnlog/core/internal'
import { BatchBudget, envelopeText } from '../batch-limits.js'
import { checkCallOptions, checkExpectedVersion, optionKeys, preview } from '../check-arguments.js'
import { customSqlState } from '../custom-sqlstates.js'
import { GroupCommit } from '../group-commit.js'
import { mapDatabaseError } from '../map-database-error.js'
import { retryableLostRace } from '../retryable-lost-race.js'
import { statementRolledBack } from '../statement-rolled-back.js'
import { checkBatch } from './check-batch.js'
import { FlushedList } from './flushed-list.js'
import { payloadText } from './payload-text.js'
import { placeholderCopies, storedPlaceholderHashes } from './placeholder-copies.js'
import { recordConflict, recordInBatchConflict } from './record-conflict.js'
import type { StoreContext } from './store-context.js'

/**
 * The append statements. Their names carry a version: a connection keeps a prepared statement by its
 * name, so a changed text needs a new one.
 */
const APPEND_MESSAGES = {
  name: 'turnlog_append_messages_1',
  text: `select version, appended::text[] as appended, duplicates::text[] as duplicates
           from turnlog.append_messages($1::uuid, $2::bigint, $3::json, $4::json, $5::json, $6::json, $7::json)`,
} as const
const APPEND_BATCHES = {
  name: 'turnlog_append_batches_1',
  text: `select batch, version, appended::text[] as appended, duplicates::text[] as duplicates
           from turnlog.append_batches($1::json, $2::json, $3::json, $4::json, $5::json, $6::json, $7::json, $8::json)`,
} as const

/** One session's append, validated and encoded, as the group commit queues it. */
interface PreparedAppend {
  readonly sessionId: SessionId
  /** The caller's `expectedVersion` (`null`: none). */
  readonly expected: number | null
  /**
   * A flush's own condition (see `#flush`): the version this store saw of the session when the call
   * began, when the caller gave no `expectedVersion` (`null`: no condition). The statement carries the
   * version the store last saw when it goes out (`#condition`): this one, or a later one that its own
   * writes recorded meanwhile.
   */
  readonly seen: number | null
  readonly batch: readonly Message[]
  readonly hashes: readonly string[]
  /** JSON texts, one per message. */
  readonly payloads: readonly string[]
  /** JSON texts of the events' data, one per message. */
  readonly data: readonly string[]
  readonly eventIds: readonly string[]
  /** Some messages travel without their content (`null` payload and data): this store saw them stored. */
  readonly withoutContent: boolean
}

/** A batch sent with some messages without their content met one that is new in the session (TLP01). */
class ContentNeeded extends Error {}

/**
 * A flush's own condition was refused (TLV01): the log was at `actual`, not at `sent`, a version this
 * store saw. Nothing was written. Never reaches a caller: `#flush` decides what it means.
 */
class LogMoved extends Error {
  constructor(
    readonly sent: number,
    readonly actual: number,
  ) {
    super(`the session is at version ${actual}, not at ${sent}`)
  }
}

/** A row of `append_messages` / `append_batches`. */
interface AppendRow {
  version: string | number
  appended: string[] | string
  duplicates: string[] | string
}

/** The options of `append` and `flush` (any other key is refused: a misspelt `expectedVersion` would be a lost update). */
const APPEND_OPTIONS = optionKeys<AppendOptions>({ expectedVersion: true })

/**
 * `append` and `flush`: the one-statement append (`turnlog.append_messages`), the group commit of
 * concurrent appends to different sessions (`turnlog.append_batches`), the flush cache, and the
 * classification of refused batches (conflict evidence).
 */
export class AppendOperations {
  readonly #ctx: StoreContext
  readonly #group: GroupCommit<PreparedAppend, AppendResult> | null

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
    this.#group = this.#groupCommit()
    const group = this.#group
    // appends already accepted go out before the pool ends
    if (group !== null) ctx.onClose(() => group.drain())
  }

  #groupCommit(): GroupCommit<PreparedAppend, AppendResult> | null {
    const limits = this.#ctx.groupCommit
    if (limits === false) return null
    const limit = (value: number | undefined, fallback: number, name: string): number => {
      if (value === undefined) return fallback
      if (!Number.isSafeInteger(value) || value < 1)
        throw new TurnlogError('INVALID_INPUT', `groupCommit.${name} must be a positive integer, got ${preview(value)}`, {
          details: { field: `config.groupCommit.${name}` },
        })
      return value
    }
    return new GroupCommit<PreparedAppend, AppendResult>({
      maxBatches: limit(limits.maxBatches, 32, 'maxBatches'),
      maxInFlight: limit(limits.maxInFlight, 2, 'maxInFlight'),
      // the group's texts travel joined: together within one batch's limit (each batch alone is)
      maxWeight: this.#ctx.maxBatchBytes,
      weight: (p) => p.payloads.reduce((n, t) => n + t.length + 1, 0) + p.data.reduce((n, t) => n + t.length, 0),
      runGroup: (items) => this.#appendGroup(items),
      runAlone: (item) => this.#appendAlone(item),
      rolledBack: statementRolledBack,
      onGroup: (size) => this.#ctx.telemetry.groupSize(size),
      capture: () => this.#ctx.telemetry.captureContext(),
    })
  }

  /** See `SessionStore.append`. */
  async append(sessionId: string, messages: readonly Message<unknown>[], options: AppendOptions = {}): Promise<AppendResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'append options', APPEND_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const batch = checkBatch(messages, 'messages', false)
    const expected = checkExpectedVersion(options)
    if (batch.mismatch) throw await recordInBatchConflict(this.#ctx, id, batch.mismatch)
    return withCopies(await this.#appendValid(id, batch.unique, batch.hashes, expected, null), batch.unique, batch.repeated)
  }

  /**
   * See `SessionStore.flush`. The check of the list goes through the session's {@link FlushedList}:
   * when the list begins with the slots the last flush kept (it only grew), only its new slots are
   * checked and only the messages after the known-durable prefix are looked up in the flush cache.
   */
  async flush(sessionId: string, live: readonly Message<unknown>[], options: AppendOptions = {}): Promise<AppendResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'flush options', APPEND_OPTIONS)
    return this.#flush(parseSessionIdArgument(sessionId, 'sessionId'), live, options, false)
  }

  /**
   * {@link flush} of checked arguments; `rechecked`: the pass that checks the whole list again after
   * the log was found behind a version this store saw (once).
   *
   * A log behind what this store saw (a restore from an older backup, a failover to a replica that
   * missed commits) may lack messages the flush cache holds as stored. They must be written again,
   * before the list's new messages (a lost tool call before its new result), so the log must be found
   * behind before anything is written: a flush of a session this store saw, without the caller's
   * `expectedVersion`, sends its new messages on the condition that the log is at the version this
   * store last saw. Nobody else wrote (the common case): the same one statement. Refused below that
   * version: behind, nothing written, the whole list is checked and written in its order. Refused
   * above it: another writer moved the log; sent again without the condition.
   */
  async #flush(id: SessionId, live: readonly Message<unknown>[], options: AppendOptions, rechecked: boolean): Promise<AppendResult> {
    const scan = FlushedList.check(this.#ctx.flushedList(id), live)
    const expected = checkExpectedVersion(options)
    if (scan.mismatch) {
      this.#ctx.keepFlushed(id, undefined)
      throw await recordInBatchConflict(this.#ctx, id, scan.mismatch)
    }
    const seen = this.#ctx.durableVersion(id)
    if (!rechecked && seen !== undefined && expected !== undefined && expected < seen) {
      // only a log behind a version this store saw can take this call: check the whole list, so that
      // what it lost is written in the list's order (a stale caller gets VERSION_CONFLICT all the same)
      this.#ctx.forget(id)
      return this.#flush(id, live, options, true)
    }
    this.#ctx.keepFlushed(id, scan.list)
    const { unique, hashes, length } = scan
    const known = this.#ctx.durablePrefix(id, scan.list, length)
    const pending: Message[] = []
    const pendingHashes: string[] = []
    for (let i = known; i < length; i++) {
      const m = unique[i] as Message
      const hash = hashes[i] as string
      if (!this.#ctx.isDurable(id, m.id, hash)) {
        pending.push(m)
        pendingHashes.push(hash)
      }
    }
    // with expectedVersion, the database is asked (docs/guarantees.md: it forces a check), even when it
    // equals the version this store last saw: another writer may have moved it since
    if (pending.length === 0 && seen !== undefined && expected === undefined) {
      return { version: seen, appended: [], duplicates: listedIds(unique, length, length, () => true) }
    }
    const condition = seen !== undefined && expected === undefined && !rechecked ? seen : null
    let result: AppendResult
    try {
      result = await this.#appendValid(id, pending, pendingHashes, expected, condition)
    } catch (error) {
      if (!(error instanceof LogMoved)) throw error
      if (error.actual < error.sent) {
        // behind a version this store saw, and nothing written: the whole list again, in its order
        this.#ctx.forget(id)
        return this.#flush(id, live, options, true)
      }
      // another writer moved the log since this store saw it: append as without the condition
      result = await this.#appendValid(id, pending, pendingHashes, expected, null)
    }
    if (seen !== undefined && result.version - result.appended.length < seen && !rechecked) {
      // behind, found from the result: a batch of duplicates only (another writer stored them) is
      // answered whatever the version, so this pass wrote nothing; or the log lost commits again
      // after a refused condition. What it skipped as stored may be lost: check the whole list again
      this.#ctx.forget(id)
      this.#ctx.learn(id, zipPairs(pending, pendingHashes, result))
      this.#ctx.observe(id, result.version)
      // the caller's expectedVersion held for this call's first write; the second completes it
      const again = await this.#flush(id, live, {}, true)
      const first = new Set<string>(result.appended)
      return {
        version: again.version,
        appended: [...result.appended, ...again.appended],
        duplicates: again.duplicates.filter((mid) => !first.has(mid)),
      }
    }
    // the first flush of a session this store did not know: its cache entry exists now
    if (this.#ctx.flushedList(id) === undefined) this.#ctx.keepFlushed(id, scan.list)
    const appended = new Set<string>(result.appended)
    return {
      version: result.version,
      appended: result.appended,
      // every listed message this call did not write, and every message it wrote that was listed more than once
      // (none of the first `known`: they were not sent)
      duplicates: listedIds(unique, length, known, (mid) => !appended.has(mid) || scan.repeated.has(mid)),
    }
  }

  /**
   * `hashes`: the content hashes of `batch`, index for index, as {@link checkBatch} computed them;
   * `seen`: a flush's own condition ({@link PreparedAppend.seen}), whose refusal is {@link LogMoved}.
   */
  async #appendValid(
    id: SessionId,
    batch: readonly Message[],
    hashes: readonly string[],
    expected: number | undefined,
    seen: number | null,
  ): Promise<AppendResult> {
    let result: AppendResult
    try {
      result = await this.#submit(this.#prepare(id, batch, hashes, expected, seen, true))
    } catch (error) {
      if (!(error instanceof ContentNeeded)) throw error
      // the flush cache said stored, the database has not got it (restored from an older backup?)
      this.#ctx.forget(id)
      result = await this.#submit(this.#prepare(id, batch, hashes, expected, seen, false))
    }
    // every message the database reported stored (written now or before) is durable with its hash
    const stored = new Set<string>(result.appended)
    for (const mid of result.duplicates) stored.add(mid)
    const pairs: (readonly [string, string])[] = []
    for (let i = 0; i < batch.length; i++) {
      const mid = (batch[i] as Message).id
      if (stored.has(mid)) pairs.push([mid, hashes[i] as string])
    }
    // (the version was recorded as the result came in: see #appendAlone)
    this.#ctx.learn(id, pairs)
    return result
  }

  /**
   * Encodes a batch. With `leaveOutKnown`, a message this store saw stored in the session with the
   * same content hash travels as its id and hash alone (`null` payload and data): it can only be a
   * duplicate, the function refuses it otherwise (TLP01), and it is not counted in `maxBatchBytes`,
   * since it is not written (as `flush` counts only what it sends). A re-sent turn costs ids and hashes.
   */
  #prepare(
    id: SessionId,
    batch: readonly Message[],
    hashes: readonly string[],
    expected: number | undefined,
    seen: number | null,
    leaveOutKnown: boolean,
  ): PreparedAppend {
    const known = batch.map((m, i) => leaveOutKnown && this.#ctx.isDurable(id, m.id, hashes[i] as string))
    // sizes first: a batch over maxBatchBytes is refused before the rest of it is serialised
    const data = batch.map((m, i) => (known[i] === true ? 'null' : envelopeText(m)))
    const budget = new BatchBudget(this.#ctx.maxBatchBytes, batch.length)
    const payloads = batch.map((m, i) =>
      known[i] === true ? 'null' : budget.add(payloadText(m, this.#ctx.maxMessageBytes), m.id, (data[i] as string).length),
    )
    return {
      sessionId: id,
      expected: expected ?? null,
      seen,
      batch,
      hashes,
      payloads,
      data,
      eventIds: batch.map(() => newEventId()),
      withoutContent: known.includes(true),
    }
  }

  #submit(prepared: PreparedAppend): Promise<AppendResult> {
    return this.#group === null ? this.#appendAlone(prepared) : this.#group.submit(prepared)
  }

  /**
   * The version condition a batch goes out with: the caller's `expectedVersion`, or a flush's own
   * condition, the version this store last saw of the session at this moment (`seen` when it knows
   * none now: forgotten). Read when the statement is sent, not when the call began: the group commit
   * sends a session's next batch after the previous one returned, whose version was recorded then
   * (see `#observed`), so concurrent flushes of one session by this store do not refuse each other's
   * condition.
   */
  #condition(p: PreparedAppend): number | null {
    if (p.seen === null) return p.expected
    return this.#ctx.durableVersion(p.sessionId) ?? p.seen
  }

  /** Records the version of a batch's result as it comes in (before the group commit sends the session's next batch). */
  #observed(id: SessionId, result: AppendResult): AppendResult {
    this.#ctx.observe(id, result.version)
    return result
  }

  /**
   * One session's batch in one statement (`turnlog.append_messages`), with its own typed errors. A
   * batch refused only for copies of redacted messages as the store shows them (their placeholders:
   * `load`'s list after a JSON round trip) is sent once more with the hashes stored for them, which
   * makes them the duplicates they are (see {@link placeholderCopies}). Inside a caller's transaction,
   * which a refused statement would abort, the batch's placeholder-shaped payloads are looked up
   * before it is sent instead (one query, only when there is one).
   */
  async #appendAlone(p: PreparedAppend, placeholdersChecked = false): Promise<AppendResult> {
    const { sessionId: id, batch, hashes } = p
    if (this.#ctx.inTransaction && !placeholdersChecked) {
      const wanted = new Map<string, string>()
      batch.forEach((m, i) => {
        if (isRedactedPayload(m.payload, m.format)) wanted.set(m.id, hashes[i] as string)
      })
      const stored = wanted.size === 0 ? undefined : await storedPlaceholderHashes(this.#ctx, id, wanted)
      if (stored !== undefined && stored.size > 0)
        return this.#appendAlone({ ...p, hashes: batch.map((m, i) => stored.get(m.id) ?? (hashes[i] as string)) }, true)
    }
    const condition = this.#condition(p)
    const values = [
      id,
      condition,
      JSON.stringify(batch.map((m) => m.id)),
      JSON.stringify(hashes),
      JSON.stringify(p.eventIds),
      `[${p.payloads.join(',')}]`,
      `[${p.data.join(',')}]`,
    ]
    let rows: AppendRow[]
    try {
      // another writer stored some of these ids after the function classified them (the insert's
      // claim on turnlog.message_ids refused them): they are duplicates or conflicts now, so the same
      // call classifies them correctly (not inside a caller's transaction, which the failed statement
      // has aborted: there the caller retries, DB_TRANSIENT)
      rows = await this.#ctx.retry(5, retryableLostRace(), () => this.#ctx.statement<AppendRow>(APPEND_MESSAGES, values))
    } catch (error) {
      if (customSqlState(error) === 'TLM01' && !placeholdersChecked && !this.#ctx.inTransaction) {
        const stored = await placeholderCopies(this.#ctx, id, (error as { detail?: unknown }).detail)
        if (stored !== null)
          return this.#appendAlone({ ...p, hashes: batch.map((m, i) => stored.get(m.id) ?? (hashes[i] as string)) }, true)
      }
      if (p.seen !== null && condition !== null && customSqlState(error) === 'TLV01')
        throw new LogMoved(condition, Number((error as { detail?: unknown }).detail))
      if (customSqlState(error) === 'TLM01') throw await recordConflict(this.#ctx, id, batch, hashes, error)
      if (p.withoutContent && customSqlState(error) === 'TLP01') throw new ContentNeeded()
      throw mapDatabaseError(error)
    }
    const row = rows[0]
    if (!row) throw new TurnlogError('DB_ERROR', 'append returned no row')
    return this.#observed(id, toAppendResult(row))
  }

  /**
   * Several sessions' batches in one statement (`turnlog.append_batches`, one commit). A batch the
   * function leaves out (a conflict, a missing session, an unexpected version, an id new in an earlier
   * batch too) wrote nothing and comes back as `null`: the group commit runs it alone.
   */
  async #appendGroup(items: readonly PreparedAppend[]): Promise<(AppendResult | null)[]> {
    const flat = <K extends 'payloads' | 'data'>(key: K): string =>
      `[${items
        .map((p) => p[key].join(','))
        .filter((t) => t !== '')
        .join(',')}]`
    let rows: (AppendRow & { batch: number })[]
    try {
      rows = await this.#ctx.statement<AppendRow & { batch: number }>(APPEND_BATCHES, [
        JSON.stringify(items.map((p) => p.sessionId)),
        JSON.stringify(items.map((p) => this.#condition(p))),
        JSON.stringify(items.map((p) => p.batch.length)),
        JSON.stringify(items.flatMap((p) => p.batch.map((m) => m.id))),
        JSON.stringify(items.flatMap((p) => p.hashes)),
        JSON.stringify(items.flatMap((p) => p.eventIds)),
        flat('payloads'),
        flat('data'),
      ])
    } catch (error) {
      // a refusal that rolled the statement back stays raw: the group commit runs each batch alone;
      // anything else reaches every caller of the group as a lone append would report it
      throw statementRolledBack(error) ? error : mapDatabaseError(error)
    }
    const results: (AppendResult | null)[] = items.map(() => null)
    for (const row of rows) {
      const b = Number(row.batch) - 1
      results[b] = this.#observed((items[b] as PreparedAppend).sessionId, toAppendResult(row))
    }
    return results
  }
}

function toAppendResult(row: AppendRow): AppendResult {
  return {
    version: Number(row.version),
    appended: pgArray(row.appended) as MessageId[],
    duplicates: pgArray(row.duplicates) as MessageId[],
  }
}

/** node-postgres parses `text[]`; PGlite too, but be tolerant of the literal form. */
function pgArray(value: string[] | string | null | undefined): string[] {
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) return value
  const inner = value.replace(/^\{|\}$/g, '')
  return inner === '' ? [] : inner.split(',')
}

/**
 * An append's result for a batch that listed some messages more than once (identical copies): each
 * such id is reported in `duplicates` too (once, in batch order), whether its first copy was written
 * or already stored.
 */
function withCopies(result: AppendResult, unique: readonly Message[], repeated: ReadonlySet<MessageId>): AppendResult {
  if (repeated.size === 0) return result
  const duplicates = new Set<string>([...result.duplicates, ...repeated])
  return { ...result, duplicates: unique.map((m) => m.id).filter((mid) => duplicates.has(mid)) }
}

/** The ids of `messages[0..length)`: every one before `from`, and from there on those `keep` accepts. */
function listedIds(messages: readonly Message[], length: number, from: number, keep: (messageId: MessageId) => boolean): MessageId[] {
  const ids: MessageId[] = []
  for (let i = 0; i < length; i++) {
    const mid = (messages[i] as Message).id
    if (i < from || keep(mid)) ids.push(mid)
  }
  return ids
}

/** The (id, hash) pairs of `batch` that `result` reports stored (written now or before). */
function zipPairs(batch: readonly Message[], hashes: readonly string[], result: AppendResult): (readonly [string, string])[] {
  const stored = new Set<string>([...result.appended, ...result.duplicates])
  return batch.flatMap((m, i) => (stored.has(m.id) ? [[m.id, hashes[i] as string] as const] : []))
}
