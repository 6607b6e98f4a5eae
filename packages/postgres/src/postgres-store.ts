import type {
  AppendOptions,
  AppendResult,
  CompactInput,
  CompactResult,
  ConflictRecord,
  CreateSessionOptions,
  EventsOptions,
  ForkOptions,
  ListSessionsOptions,
  LoadOptions,
  LoadResult,
  Message,
  RebuildOptions,
  RebuildResult,
  RedactOptions,
  RedactResult,
  ReviseOptions,
  ReviseResult,
  RewindOptions,
  RewindResult,
  RewindTargetInput,
  SessionId,
  SessionInfo,
  SessionPage,
  SessionState,
  SessionStore,
  ImportSessionsOptions,
  ImportSessionsResult,
  ImportedSession,
  StoredEvent,
  SyncOptions,
  SyncResult,
  Transcript,
  WriteOptions,
} from '@turnlog/core'
import type { Kysely, Transaction } from 'kysely'
import type { FindSessionIdsOptions } from './lookups/find-session-ids.js'
import { runAtomically } from './run-atomically.js'
import type { OldestOpenTransactionOptions, OpenTransactionInfo } from './subscriptions/oldest-open-transaction.js'
import type { SubscribeOptions, SubscriptionConfig } from './subscriptions/subscribe.js'
import type { Subscription, SubscriptionHandler } from './subscriptions/subscription.js'
import { registerAdminStore } from './subscriptions/rebase-subscription.js'
import { AdminOperations } from './store/admin-operations.js'
import { AppendOperations } from './store/append-operations.js'
import { CompactOperations } from './store/compact-operations.js'
import { HistoryOperations } from './store/history-operations.js'
import type { PostgresStoreInit } from './store/postgres-store-init.js'
import { ReadOperations } from './store/read-operations.js'
import { RebuildOperations } from './store/rebuild-operations.js'
import { redactMessage } from './store/redact-message.js'
import { SessionOperations } from './store/session-operations.js'
import { StoreContext } from './store/store-context.js'
import { SyncOperations } from './store/sync-operations.js'
import { spanAttributes } from './telemetry/span-attributes.js'
import { StoreTelemetry } from './telemetry/store-telemetry.js'
import { traced, tracedIteration } from './telemetry/traced.js'

export type { GroupCommitSettings, PostgresStoreInit, PostgresStoreSettings } from './store/postgres-store-init.js'

/**
 * The Postgres (and PGlite) implementation of the {@link SessionStore} port. Every write is one
 * transaction; the common append is one round trip (`turnlog.append_messages`). Open one with
 * `openStore`.
 *
 * A thin facade: each method delegates to the module of its operation family (`src/store/`), which
 * parses the arguments and runs on the store's {@link StoreContext} (the store's own, or the one bound
 * to a caller's transaction by {@link PostgresStore.withTransaction}).
 */
export class PostgresStore implements SessionStore {
  readonly #ctx: StoreContext
  readonly #appends: AppendOperations
  readonly #reads: ReadOperations
  readonly #sessions: SessionOperations
  readonly #history: HistoryOperations
  readonly #compaction: CompactOperations
  readonly #rebuilds: RebuildOperations
  readonly #admin: AdminOperations
  readonly #syncs: SyncOperations

  constructor(init: PostgresStoreInit)
  constructor(init: PostgresStoreInit | StoreContext) {
    const ctx = StoreContext.isContext(init) ? init : StoreContext.open(init)
    this.#ctx = ctx
    this.#appends = new AppendOperations(ctx)
    this.#reads = new ReadOperations(ctx)
    this.#sessions = new SessionOperations(ctx)
    this.#history = new HistoryOperations(ctx)
    this.#compaction = new CompactOperations(ctx)
    this.#rebuilds = new RebuildOperations(ctx, this.#reads)
    this.#admin = new AdminOperations(ctx)
    this.#syncs = new SyncOperations(ctx)
    StoreTelemetry.attach(this, ctx.telemetry)
    // listSubscriptions, rebaseSubscription, …: STORE_CLOSED once closed, and close() waits for them
    registerAdminStore(this, (work) => ctx.track(work))
  }

  /** The largest batch this store accepts (see {@link PostgresStoreSettings.maxBatchBytes}). */
  get maxBatchBytes(): number {
    return this.#ctx.maxBatchBytes
  }

  /** `'postgres'` or `'pglite'`. */
  get flavor(): 'postgres' | 'pglite' {
    return this.#ctx.flavor
  }

  /** The Kysely instance statements run on (the store's own, or the caller's transaction). */
  get db(): Kysely<unknown> {
    return this.#ctx.db
  }

  /**
   * A store bound to the caller's Kysely transaction: every call runs inside it and commits or rolls
   * back with it. Nothing it writes is cached as durable (the caller may roll back). Conflict
   * evidence is still recorded outside the transaction. Throws `INVALID_INPUT` for anything but a
   * Kysely transaction (a plain Kysely instance would run each statement of a write on its own).
   */
  withTransaction<DB>(trx: Transaction<DB>): PostgresStore {
    return new PostgresStore(this.#ctx.bound(trx) as unknown as PostgresStoreInit)
  }

  async close(): Promise<void> {
    return this.#ctx.close()
  }

  @traced('createSession', spanAttributes.createSession)
  async createSession(options: CreateSessionOptions = {}): Promise<SessionId> {
    return this.#sessions.createSession(options)
  }

  @traced('getSession', spanAttributes.getSession)
  async getSession(sessionId: string): Promise<SessionInfo> {
    return this.#reads.getSession(sessionId)
  }

  @traced('sessions', spanAttributes.sessions)
  async sessions(options: ListSessionsOptions = {}): Promise<SessionPage> {
    return this.#reads.sessions(options)
  }

  @traced('append', spanAttributes.append)
  async append(sessionId: string, messages: readonly Message<unknown>[], options: AppendOptions = {}): Promise<AppendResult> {
    return this.#appends.append(sessionId, messages, options)
  }

  @traced('flush', spanAttributes.append)
  async flush(sessionId: string, live: readonly Message<unknown>[], options: AppendOptions = {}): Promise<AppendResult> {
    return this.#appends.flush(sessionId, live, options)
  }

  @traced('sync', spanAttributes.sync)
  async sync(sessionId: string, list: readonly Message<unknown>[], options: SyncOptions = {}): Promise<SyncResult> {
    return this.#syncs.sync(sessionId, list, options)
  }

  @traced('load', spanAttributes.load)
  async load(sessionId: string, options: LoadOptions = {}): Promise<LoadResult> {
    return this.#reads.load(sessionId, options)
  }

  @tracedIteration('events')
  events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<StoredEvent> {
    return this.#reads.events(sessionId, options)
  }

  @traced('state', spanAttributes.state)
  async state(sessionId: string, options: LoadOptions = {}): Promise<SessionState> {
    return this.#reads.state(sessionId, options)
  }

  @traced('transcript', spanAttributes.transcript)
  async transcript(sessionId: string): Promise<Transcript> {
    return this.#reads.transcript(sessionId)
  }

  @traced('rewind', spanAttributes.rewind)
  async rewind(sessionId: string, target: RewindTargetInput, options: RewindOptions = {}): Promise<RewindResult> {
    return this.#history.rewind(sessionId, target, options)
  }

  @traced('compact', spanAttributes.compact)
  async compact<S extends Message<unknown> = Message<unknown>>(sessionId: string, input: CompactInput<S>): Promise<CompactResult<S>> {
    return this.#compaction.compact(sessionId, input)
  }

  @traced('revise', spanAttributes.revise)
  async revise(sessionId: string, messageId: string, payload: unknown, options: ReviseOptions = {}): Promise<ReviseResult> {
    return this.#history.revise(sessionId, messageId, payload, options)
  }

  @traced('finalize', spanAttributes.revise)
  async finalize(sessionId: string, messageId: string, payload?: unknown, options: WriteOptions = {}): Promise<ReviseResult> {
    return this.#history.finalize(sessionId, messageId, payload, options)
  }

  @traced('fork', spanAttributes.fork)
  async fork(sessionId: string, options: ForkOptions): Promise<SessionId> {
    return this.#sessions.fork(sessionId, options)
  }

  /**
   * Recomputes (or, with `verify`, only checks) inline projections, in batches of sessions (at most
   * 200 sessions and, beyond the first one, 5,000 events), two batches in flight on Postgres. Payloads
   * are never read: the projection depends on ids, seqs, types and event data only.
   *
   * - `verify: true`: per batch, one statement reads every session's event metadata and projection
   *   rows in one snapshot, and the projection spec (core's `projectStructure`, which the fold is
   *   built on) is compared with them. Nothing is locked or written.
   * - otherwise one transaction per batch: lock the batch's session rows (in id order, as a redaction
   *   does, so they never deadlock), read log and projection (drift is reported against what was
   *   there), recompute every session's projection with `turnlog.rebuild_sessions` (what replaying the
   *   log through `turnlog.project_event` gives; rows already equal to it are not rewritten), and compare
   *   the rows it returns with the spec before committing. A projection that still differs throws
   *   `CORRUPT_LOG` and its batch rolls back (batches before it, and the one in flight beside it, stay
   *   committed). `rewritten` counts every session recomputed, drifted or not.
   *
   * Memory is bounded by two batches' event metadata (or the largest session's, when that alone is
   * larger); each batch holds its sessions' row locks for one transaction (~10–50 ms at 5,000 events).
   * A log the spec cannot read throws `CORRUPT_LOG` naming the session. See docs/performance.md.
   */
  @traced('rebuild', spanAttributes.rebuild)
  async rebuild(options: RebuildOptions = {}): Promise<RebuildResult> {
    return this.#rebuilds.rebuild(options)
  }

  @traced('redact', spanAttributes.redact)
  async redact(sessionId: string, messageId: string, options: RedactOptions = {}): Promise<RedactResult> {
    return redactMessage(this.#ctx, sessionId, messageId, options)
  }

  @traced('conflicts', spanAttributes.conflicts)
  async conflicts(sessionId: string): Promise<readonly ConflictRecord[]> {
    return this.#reads.conflicts(sessionId)
  }

  // --- subscriptions (docs/subscriptions.md) -----------------------------------------------------

  /**
   * Starts a catch-up subscription: `handler` gets every event of the log after the named durable
   * checkpoint, in transaction order (no event is ever skipped, whatever order transactions commit
   * in), at least once; the checkpoint moves after the handler succeeds. One consumer per name runs at
   * a time across processes. `close()` stops the store's subscriptions. On PGlite it polls within this
   * process. Throws `INVALID_INPUT` for bad arguments; later failures end the subscription.
   */
  subscribe(config: SubscriptionConfig, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    return this.#admin.subscribe(config, handler, options)
  }

  /**
   * The oldest open transaction that holds subscription readers back (it has a transaction id), or
   * null: its `ageMs` is how long events committed since it began may wait. Cluster-wide by default.
   */
  @traced('oldestOpenTransaction')
  async oldestOpenTransaction(options: OldestOpenTransactionOptions = {}): Promise<OpenTransactionInfo | null> {
    return this.#admin.oldestOpenTransaction(options)
  }

  // --- import, transactions, lookups (src/import, src/run-atomically.ts, src/lookups) ---------------

  /**
   * Restores complete sessions exactly as another store recorded them (an export file, read by
   * `importEvents` of `@turnlog/audit`): see {@link SessionStore.importSessions}. On a store bound to a
   * transaction, one session per batch, in that transaction.
   */
  @traced('importSessions', spanAttributes.importSessions)
  async importSessions(
    sessions: AsyncIterable<ImportedSession> | Iterable<ImportedSession>,
    options: ImportSessionsOptions = {},
  ): Promise<ImportSessionsResult> {
    return this.#admin.importSessions(sessions, options)
  }

  /**
   * Runs `work` with a store bound to one transaction (`withTransaction`): what it writes commits when it
   * resolves and rolls back when it throws (the error is rethrown). On a store already bound to a
   * transaction, `work` runs in that one. See {@link SessionStore.atomically}.
   */
  async atomically<T>(work: (store: PostgresStore) => Promise<T>): Promise<T> {
    return this.#ctx.track(() =>
      runAtomically(
        this.#ctx.db,
        this,
        (trx) => this.withTransaction(trx),
        // on PGlite the work's transaction holds the one connection: this store's own calls in it refuse
        typeof work === 'function' ? (store) => this.#ctx.holdingConnection(() => work(store)) : work,
      ),
    )
  }

  /**
   * The ids of the sessions whose id starts or ends with `fragment` (hex digits and hyphens), in id
   * order, at most `limit` (default 100): resolves a shortened id such as `…9c67eeb6`.
   */
  @traced('findSessionIds', spanAttributes.findSessionIds, { sessionArgument: false })
  async findSessionIds(fragment: string, options: FindSessionIdsOptions = {}): Promise<SessionId[]> {
    return this.#admin.findSessionIds(fragment, options)
  }

  /** How many `MESSAGE_CONFLICT` attempts the store has recorded across all sessions (see {@link conflicts}). */
  @traced('countConflicts', spanAttributes.countConflicts)
  async countConflicts(): Promise<number> {
    return this.#admin.countConflicts()
  }
}
