import { TurnlogError, type SessionId, type StoredEvent } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely'
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Pool, QueryResultRow } from 'pg'
import { checkMaxBatchBytes } from '../batch-limits.js'
import { KnownMessages, type LoadedPair } from '../known-messages.js'
import { mapDatabaseError, sqlState } from '../map-database-error.js'
import { parseStoreInit } from '../open-store-config.js'
import { StoreTelemetry } from '../telemetry/store-telemetry.js'
import type { SubscriptionHost } from '../subscriptions/open-consumer-session.js'
import { embeddedDatabaseOf } from '../subscriptions/subscription-lock.js'
import type { FlushedList } from './flushed-list.js'
import type { GroupCommitSettings, PostgresStoreInit } from './postgres-store-init.js'

/** One event a write inserts, encoded. */
export interface NewEvent {
  readonly eventId: string
  readonly type: StoredEvent['type']
  readonly messageId: string | null
  readonly contentHash: string | null
  /** `JSON.stringify` of the payload, or null. */
  readonly payloadText: string | null
  /** `JSON.stringify` of the data object (see `messageEnvelope` of core). */
  readonly dataText: string
}

/** A fixed statement of the store: a versioned name (for a named prepared statement) and its text. */
export interface NamedStatement {
  readonly name: string
  readonly text: string
}

const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/**
 * What every operation of a {@link PostgresStore} works with: where statements run, the store's
 * limits, its executors (`run`, `tx`, `lock`, `write`, named statements), the closed check and the
 * versions and messages it has seen committed. This class is a store that owns its transactions;
 * {@link StoreContext.bound} gives the variant bound to a caller's transaction, which begins none of
 * its own, caches nothing as durable, runs no retries and no group commit.
 */
export class StoreContext {
  /** Where statements run: the store's own Kysely, or the caller's transaction. */
  readonly db: Kysely<unknown>
  /** Runs independent work (conflict evidence) outside any caller's transaction. */
  readonly root: Kysely<unknown>
  /** `'postgres'` or `'pglite'`. */
  readonly flavor: 'postgres' | 'pglite'
  /** Largest accepted payload (JSON text, UTF-16 code units). */
  readonly maxMessageBytes: number
  /** Largest accepted batch (see `PostgresStoreSettings.maxBatchBytes`). */
  readonly maxBatchBytes: number
  /** Spans and metrics of this store's calls (`telemetry` setting; nothing when off or absent). */
  readonly telemetry: StoreTelemetry
  readonly #init: PostgresStoreInit
  readonly #known: KnownMessages
  readonly #closers: (() => Promise<void>)[] = []
  /** Set when named prepared statements do not survive between calls (a transaction-mode pooler). */
  #namedUnavailable = false
  #closed = false
  /** True once `close` let go of the database (after the running calls finished). */
  #released = false
  /** The database calls running now ({@link run}, {@link tx}, {@link statement}, {@link namedOr}): `close` waits for them. */
  readonly #running = new RunningCalls()

  /** True when `value` is a context (a brand check: never throws, not even on a revoked Proxy). */
  static isContext(value: unknown): value is StoreContext {
    return typeof value === 'object' && value !== null && #closed in value
  }

  /** Validates `init` and returns the context it describes (bound when `init.inTransaction`). */
  static open(init: PostgresStoreInit): StoreContext {
    const parsed = parseStoreInit(init)
    return parsed.inTransaction === true ? new BoundStoreContext(parsed) : new StoreContext(parsed)
  }

  protected constructor(init: PostgresStoreInit) {
    this.#init = init
    this.db = init.db
    this.root = init.root
    this.flavor = init.flavor
    this.#known = init.known ?? new KnownMessages(init.knownSessions ?? 10_000)
    this.maxMessageBytes = init.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    this.maxBatchBytes = checkMaxBatchBytes(init.maxBatchBytes)
    this.telemetry = new StoreTelemetry(init.telemetry)
  }

  /**
   * The variant bound to the caller's Kysely transaction `trx`: every call runs inside it and commits
   * or rolls back with it. Throws `STORE_CLOSED` on a closed store, `INVALID_INPUT` for anything but a
   * Kysely transaction (a plain Kysely instance would run each statement of a write on its own).
   */
  bound<DB>(trx: Transaction<DB>): StoreContext {
    this.assertOpen()
    // by shape, not instanceof: the caller's kysely may be another copy of the package
    const t = trx as { isTransaction?: unknown; getExecutor?: unknown } | null
    if (typeof t !== 'object' || t === null || !guardInput('trx', () => t.isTransaction === true && typeof t.getExecutor === 'function')) {
      throw new TurnlogError('INVALID_INPUT', 'withTransaction needs a Kysely transaction (db.transaction().execute(trx => …))', {
        details: { field: 'trx' },
      })
    }
    return new BoundStoreContext(
      parseStoreInit({ ...this.#init, db: trx as Transaction<unknown>, inTransaction: true, onClose: async () => {} }),
    )
  }

  /** The group commit settings, or false when appends go alone (PGlite, a caller's transaction, or turned off). */
  get groupCommit(): false | GroupCommitSettings {
    const setting = this.#init.groupCommit ?? true
    if (setting === false || this.flavor !== 'postgres') return false
    return setting === true ? {} : setting
  }

  /** How many rebuild batches may be in flight at once. */
  get parallelism(): number {
    return this.flavor === 'postgres' ? 2 : 1
  }

  /** True for the variant bound to a caller's transaction (see {@link bound}). */
  get inTransaction(): boolean {
    return false
  }

  /** Throws `STORE_CLOSED` once the store is closed. */
  assertOpen(): void {
    if (this.#closed) throw new TurnlogError('STORE_CLOSED', 'the store is closed')
  }

  /** Registers work `close` awaits before releasing the store's resources (in registration order). */
  onClose(fn: () => Promise<void>): void {
    this.#closers.push(fn)
  }

  /**
   * Closes the store once: later calls get `STORE_CLOSED`; registered work is awaited, then the calls
   * already running finish (as a `pg` pool's `end` lets its checked-out clients finish; PGlite would
   * refuse their statements once closing), then the resources go.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    // from inside a call close() would wait for (the caller's atomically(), an import, a subscription
    // handler): it would wait for itself, and that call for it, forever
    if (this.#running.callerInside)
      throw new TurnlogError(
        'INVALID_INPUT',
        "close() was called inside this store's atomically(), import or subscription handler, which close() waits for: close the store after that call returns",
        { details: { field: 'close' } },
      )
    this.#closed = true
    for (const fn of this.#closers) await fn()
    await this.#running.settled()
    this.#released = true
    await this.#init.onClose?.()
  }

  /** Runs `fn` on the store's database (no transaction of its own); database errors are mapped. */
  async run<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    this.assertOpen()
    this.#assertConnectionFree()
    return this.#tracked(fn(this.db))
  }

  /** Runs `fn` in one transaction (the store's own, or the caller's); database errors are mapped. */
  async tx<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    this.assertOpen()
    this.#assertConnectionFree()
    return this.#tracked(this.transaction(fn))
  }

  /**
   * `work()`, marked as running inside a transaction of this store that holds its only connection
   * (embedded PGlite: `atomically()` work, a transactional subscription handler). A call of this store,
   * or of another store on the same PGlite instance (`openStore({ pglite })` twice), from there would
   * wait for that transaction, which waits for the call: {@link run}, {@link tx}, {@link track} and
   * {@link namedOr} refuse it instead of never returning. The mark is the database (the PGlite
   * instance, see `embeddedDatabaseOf`), not the store. Elsewhere (a server's pool, a bound store) just `work()`.
   */
  holdingConnection<T>(work: () => Promise<T>): Promise<T> {
    if (this.flavor !== 'pglite' || this.inTransaction) return work()
    const marks = new Set(holdingOf.getStore())
    marks.add(this.#database)
    return holdingOf.run(marks, work)
  }

  /**
   * What {@link holdingConnection} marks: the store's embedded database, i.e. the PGlite instance it
   * was opened on (shared by every store opened on it), or its own Kysely instance.
   */
  get #database(): object {
    return embeddedDatabaseOf(this.db)
  }

  /**
   * Refuses a call made inside a transaction that holds the only connection of this store's embedded
   * database (see {@link holdingConnection}).
   */
  #assertConnectionFree(): void {
    if (holdingOf.getStore()?.has(this.#database) !== true) return
    throw new TurnlogError(
      'INVALID_INPUT',
      "a store call inside atomically() work or a transactional subscription handler on PGlite, whose transaction holds the one connection of the database (this store's, or another store's on the same PGlite instance), would wait for itself forever: use the store atomically() hands to the work (or the handler's context.transaction)",
      { details: { reason: 'pglite-connection-held' } },
    )
  }

  /**
   * Runs `work` (which uses the database through its own statements: an import, a caller's
   * `atomically`) once the store is checked open; `close` waits for it while it runs. Its errors are
   * passed as they are.
   */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.assertOpen()
    this.#assertConnectionFree()
    return this.#running.track(this.#running.inside(work))
  }

  /** `work`'s result, its database error mapped; `close` waits for it while it runs. */
  async #tracked<T>(work: Promise<T>): Promise<T> {
    try {
      return await this.#running.track(work)
    } catch (error) {
      throw mapDatabaseError(error)
    }
  }

  /** Begins the store's own transaction around `fn`. */
  protected transaction<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn)
  }

  /**
   * Runs `fn` again (at most `attempts` times in all) while its error satisfies `retryable`: a race
   * lost to another writer, whose retry classifies correctly. The bound variant runs it once (the
   * failed statement aborted the caller's transaction: the caller retries).
   */
  async retry<T>(attempts: number, retryable: (error: unknown) => boolean, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn()
      } catch (error) {
        if (attempt >= attempts || !retryable(error)) throw error
      }
    }
  }

  /**
   * Runs best-effort work on {@link root} (outside any caller's transaction) and waits for it; its
   * failure is ignored.
   */
  async aside(fn: (root: Kysely<unknown>) => Promise<void>): Promise<void> {
    await fn(this.root).catch(() => {})
  }

  /** True when the store saw `messageId` committed in the session with this content hash (the flush cache). */
  isDurable(sessionId: SessionId, messageId: string, hash: string): boolean {
    return this.#known.has(sessionId, messageId as never, hash)
  }

  /** The list the session's last flush checked, kept for the next one (see `FlushedList`), if any. */
  flushedList(sessionId: SessionId): FlushedList | undefined {
    return this.#known.flushedList(sessionId)
  }

  /** Keeps `list` for the session's next flush (`undefined`: keeps none). */
  keepFlushed(sessionId: SessionId, list: FlushedList | undefined): void {
    this.#known.keepFlushed(sessionId, list)
  }

  /** How many of the first `length` messages of `list`'s check, from the first, are known durable (see {@link isDurable}). */
  durablePrefix(sessionId: SessionId, list: FlushedList, length: number): number {
    return this.#known.durablePrefix(sessionId, list, length)
  }

  /** The session's version after the last committed write or load this store saw, if any. */
  durableVersion(sessionId: SessionId): number | undefined {
    return this.#known.version(sessionId)
  }

  /** Records messages (id, stored content hash) seen committed in the session. */
  learn(sessionId: SessionId, pairs: Iterable<readonly [string, string]>): void {
    this.#known.addAll(sessionId, pairs)
  }

  /** Records the messages a committed load at `version` returned (entered lazily: `KnownMessages.addLoaded`). */
  learnLoaded(sessionId: SessionId, version: number, rows: readonly LoadedPair[]): void {
    this.#known.addLoaded(sessionId, version, rows)
  }

  /** Forgets what the flush cache holds of the session (the database disagreed with it). */
  forget(sessionId: SessionId): void {
    this.#known.forget(sessionId)
  }

  /** Records the version a committed write (or a load) of this store saw: a later no-op flush reports it. */
  observe(sessionId: SessionId, version: number): void {
    this.#known.setVersion(sessionId, version)
  }

  /** {@link observe}s `result.version` and returns `result`. */
  observed<T extends { readonly version: number }>(sessionId: SessionId, result: T): T {
    this.observe(sessionId, result.version)
    return result
  }

  /** The store's own database for a subscription; the bound variant refuses (`INVALID_INPUT`). */
  subscriptionHost(): SubscriptionHost {
    return {
      db: this.db,
      flavor: this.flavor,
      dedicatedConnection: this.#init.dedicatedConnection,
      // close() waits for the subscription, so a handler is inside the store's calls too
      inside: (fn, holdsConnection) => this.#running.inside(holdsConnection === true ? () => this.holdingConnection(fn) : fn),
    }
  }

  /** The pool named prepared statements run on: the one a `directConnection` store opened, else none. */
  protected get pool(): Pool | undefined {
    return this.#init.ownPool
  }

  /** Locks the session row for the rest of the transaction and returns its version. */
  async lock(db: Kysely<unknown>, sessionId: SessionId): Promise<number> {
    const { rows } = await sql<{ version: string | number }>`
      select version from turnlog.sessions where session_id = ${sessionId} for update`.execute(db)
    const row = rows[0]
    if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `session ${sessionId} not found`, { details: { sessionId } })
    return Number(row.version)
  }

  /** Inserts events after `version` and moves the session's version; returns the new version. */
  async write(db: Kysely<unknown>, sessionId: SessionId, version: number, events: readonly NewEvent[]): Promise<number> {
    if (events.length === 0) return version
    await sql`
      insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
      select ${sessionId}::uuid, ${version}::bigint + t.ord, t.event_id::uuid, t.type, nullif(t.message_id, '')::uuid,
             decode(nullif(t.content_hash, ''), 'hex'), nullif(t.payload::text, 'null')::json, t.data
        from rows from (
               json_array_elements_text(${JSON.stringify(events.map((e) => e.eventId))}::json),
               json_array_elements_text(${JSON.stringify(events.map((e) => e.type))}::json),
               json_array_elements_text(${JSON.stringify(events.map((e) => e.messageId ?? ''))}::json),
               json_array_elements_text(${JSON.stringify(events.map((e) => e.contentHash ?? ''))}::json),
               json_array_elements(${`[${events.map((e) => e.payloadText ?? 'null').join(',')}]`}::json),
               json_array_elements(${`[${events.map((e) => e.dataText).join(',')}]`}::json)
             ) with ordinality as t(event_id, type, message_id, content_hash, payload, data, ord)
       order by t.ord`.execute(db)
    const next = version + events.length
    await sql`update turnlog.sessions set version = ${next}, updated_at = now() where session_id = ${sessionId}`.execute(db)
    return next
  }

  /**
   * Runs one of the store's fixed hot statements: on the pool of a `directConnection` store, as a named prepared
   * statement (parsed and planned once per connection: ≈ 0.06 ms less per call, measured); otherwise
   * (a caller's pool or Kysely, a transaction, PGlite) through Kysely as an unnamed statement.
   * Driver errors are thrown as they are.
   */
  async statement<R>(statement: NamedStatement, values: readonly unknown[]): Promise<R[]> {
    return this.namedOr(
      async (pool) => (await pool.query<R & QueryResultRow>({ name: statement.name, text: statement.text, values: [...values] })).rows,
      async () => [...(await this.db.executeQuery<R>(CompiledQuery.raw(statement.text, [...values]))).rows],
    )
  }

  /**
   * `named(pool)` on the pool of a `directConnection` store (see `PostgresStoreInit.ownPool`),
   * outside a caller's transaction; `unnamed()` otherwise. When a prepared statement went missing or
   * already existed on the server connection (`26000`, `42P05`: a pooler in transaction mode, PgBouncer
   * before 1.21 or without `max_prepared_statements`, hands each statement another server connection),
   * named statements are off for this store from then on and the call runs `unnamed()`: both errors are
   * raised before the statement runs.
   */
  async namedOr<T>(named: (pool: Pool) => Promise<T>, unnamed: () => Promise<T>): Promise<T> {
    // work accepted before `close` (a group commit's queue) still runs while it drains; once the
    // resources are gone, a statement would wait for a connection that never comes
    if (this.#released) throw new TurnlogError('STORE_CLOSED', 'the store is closed')
    this.#assertConnectionFree()
    return this.#running.track(this.#namedOr(named, unnamed))
  }

  async #namedOr<T>(named: (pool: Pool) => Promise<T>, unnamed: () => Promise<T>): Promise<T> {
    const pool = this.#namedUnavailable ? undefined : this.pool
    if (pool !== undefined) {
      try {
        return await named(pool)
      } catch (error) {
        const state = sqlState(error)
        if (state !== '26000' && state !== '42P05') throw error
        this.#namedUnavailable = true
      }
    }
    return unnamed()
  }
}

/**
 * A {@link StoreContext} bound to a caller's transaction: statements run in it, it begins no transaction
 * of its own, nothing it writes or reads is cached as durable (the caller may roll back), it runs no
 * retries (a failed statement aborted the transaction), no group commit, no named statements, no
 * parallel batches and no subscriptions.
 */
class BoundStoreContext extends StoreContext {
  constructor(init: PostgresStoreInit) {
    super(init)
  }

  override get groupCommit(): false {
    return false
  }

  override get inTransaction(): boolean {
    return true
  }

  override get parallelism(): number {
    return 1
  }

  protected override transaction<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    return fn(this.db)
  }

  override async retry<T>(_attempts: number, _retryable: (error: unknown) => boolean, fn: () => Promise<T>): Promise<T> {
    return fn()
  }

  /**
   * PGlite has one connection, which the caller's transaction holds: awaiting work on `root` would wait
   * forever, so it is queued to run once that transaction ends.
   */
  override async aside(fn: (root: Kysely<unknown>) => Promise<void>): Promise<void> {
    if (this.flavor === 'pglite') void fn(this.root).catch(() => {})
    else await super.aside(fn)
  }

  override isDurable(): boolean {
    return false
  }

  override durableVersion(): number | undefined {
    return undefined
  }

  override flushedList(): undefined {
    return undefined
  }

  override keepFlushed(): void {}

  override durablePrefix(): number {
    return 0
  }

  override learn(): void {}

  override learnLoaded(): void {}

  override observe(): void {}

  override subscriptionHost(): SubscriptionHost {
    throw new TurnlogError('INVALID_INPUT', 'subscribe on the store itself, not on a transaction-bound store')
  }

  protected override get pool(): Pool | undefined {
    return undefined
  }
}

/** The {@link RunningCalls} whose work the current code runs inside (through `inside`). */
const insideOf = new AsyncLocalStorage<ReadonlySet<RunningCalls>>()

/**
 * The embedded databases (PGlite instances, see `embeddedDatabaseOf`) whose only connection a
 * transaction the current code runs inside holds (see `holdingConnection`).
 */
const holdingOf = new AsyncLocalStorage<ReadonlySet<object>>()

/** Promises in flight, which {@link RunningCalls.settled} waits for (those that start meanwhile too). */
class RunningCalls {
  readonly #calls = new Set<Promise<unknown>>()

  /** `work()`, run marked as inside this store's calls (see {@link callerInside}). */
  inside<T>(work: () => Promise<T>): Promise<T> {
    const marks = new Set(insideOf.getStore())
    marks.add(this)
    return insideOf.run(marks, work)
  }

  /** True when the current code runs inside work given to {@link inside}. */
  get callerInside(): boolean {
    return insideOf.getStore()?.has(this) === true
  }

  /** `work` itself, counted until it settles. */
  async track<T>(work: Promise<T>): Promise<T> {
    this.#calls.add(work)
    try {
      return await work
    } finally {
      this.#calls.delete(work)
    }
  }

  /** Resolves once no call is running (never rejects). */
  async settled(): Promise<void> {
    while (this.#calls.size > 0) await Promise.allSettled([...this.#calls])
  }
}
