import {
  TurnlogError,
  guardInput,
  applyCompact,
  applyRevision,
  applyRewind,
  withApplyTo,
  contentHash,
  isTurnlogError,
  foldSession,
  liveMessages,
  newEventId,
  newSessionId,
  parseChatMessage,
  parseMessageId,
  parseSessionId,
  redactedPayload,
  restoreMessage,
  toFrozenJson,
  toMessage,
  toolPairing,
  transcriptOf,
  type AppendOptions,
  type AppendResult,
  type ChatMessage,
  type CompactInput,
  type CompactResult,
  type ConflictRecord,
  type CreateSessionOptions,
  type EventsOptions,
  type ForkOptions,
  type JsonValue,
  type ListSessionsOptions,
  type LoadOptions,
  type LoadResult,
  type Message,
  type MessageId,
  type ProjectionDrift,
  type RebuildOptions,
  type RedactOptions,
  type RedactResult,
  type RebuildResult,
  type ReviseOptions,
  type ReviseResult,
  type RewindOptions,
  type RewindResult,
  type RewindTarget,
  type SessionId,
  type SessionInfo,
  type SessionPage,
  type SessionState,
  type SessionStore,
  type StoredEvent,
  type Transcript,
  type WriteOptions,
} from '@turnlog/core'
import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely'
import type { Pool, QueryResultRow } from 'pg'
import { BatchBudget, checkMaxBatchBytes, envelopeText, jsonTextWithin } from './batch-limits.js'
import { EVENT_COLUMNS, iso, toStoredEvent, type EventRow } from './event-row.js'
import { GroupCommit } from './group-commit.js'
import { parseStoreInit } from './open-store-config.js'
import { KnownMessages } from './known-messages.js'
import { loadLiveRows, loadLiveRowsPrepared } from './load-live-rows.js'
import { lostMessageIdRace, mapDatabaseError, sqlState } from './map-database-error.js'
import { checkSafeText, checkSafeJson } from './safe-text.js'
import { statementRolledBack } from './statement-rolled-back.js'
import type { DedicatedConnectionFactory } from './subscriptions/dedicated-connection.js'
import { oldestOpenTransaction, type OldestOpenTransactionOptions, type OpenTransactionInfo } from './subscriptions/oldest-open-transaction.js'
import { subscribe, type SubscribeOptions, type SubscriptionConfig } from './subscriptions/subscribe.js'
import type { Subscription, SubscriptionHandler } from './subscriptions/subscription.js'
import { spanAttributes } from './telemetry/span-attributes.js'
import { StoreTelemetry } from './telemetry/store-telemetry.js'
import type { TelemetryConfig } from './telemetry/telemetry-config.js'
import { traced, tracedIteration } from './telemetry/traced.js'

/** Settings shared by every way of opening a store. */
export interface PostgresStoreSettings {
  /** Largest accepted payload, in UTF-16 code units of its JSON text; default 16 MiB. */
  readonly maxMessageBytes?: number
  /**
   * Largest accepted batch: the JSON texts of one call's messages together (`append`, `flush`,
   * `compact`'s summary), in UTF-16 code units; default 128 MiB, at most 256 MiB. A larger batch is
   * refused up front with `BATCH_TOO_LARGE` (nothing written); see docs/errors.md.
   */
  readonly maxBatchBytes?: number
  /** How many sessions the flush cache remembers; default 10,000. */
  readonly knownSessions?: number
  /**
   * Group commit of concurrent appends to different sessions (one statement and one commit for every
   * batch waiting while earlier ones are in flight; each batch still all-or-nothing and isolated from
   * the others' errors). Default on for a Postgres server (`{ maxBatches: 32, maxInFlight: 2 }`); `false`
   * sends every append on its own. Not used by PGlite or inside a caller's transaction. See
   * docs/performance.md.
   */
  readonly groupCommit?: boolean | GroupCommitSettings
  /**
   * OpenTelemetry spans and metrics of every store call (docs/operations.md, "Tracing and metrics").
   * Default: the global providers of `@opentelemetry/api` (an optional peer) when it is installed and
   * a provider is registered, otherwise nothing at all. `false`: none. `{ tracer, meter }`: these.
   */
  readonly telemetry?: false | TelemetryConfig
}

/** Limits of the append group commit; see {@link PostgresStoreSettings.groupCommit}. */
export interface GroupCommitSettings {
  /** Most sessions' batches in one group statement; default 32. */
  readonly maxBatches?: number
  /** Most append statements in flight at once (each holds a pooled connection); default 2. */
  readonly maxInFlight?: number
}

/** Internal wiring of a {@link PostgresStore}; use `openStore` to make one. */
export interface PostgresStoreInit extends PostgresStoreSettings {
  /** Where statements run: the store's own Kysely, or a caller's transaction. */
  readonly db: Kysely<unknown>
  /** Runs independent work (conflict evidence) outside any caller transaction. */
  readonly root: Kysely<unknown>
  /** True when `db` is a caller's transaction: the store must not begin its own or cache results. */
  readonly inTransaction?: boolean
  /** Releases what the store owns; called once by `close`. */
  readonly onClose?: () => Promise<void>
  /** The flush cache to share (a transaction-bound store gets a private one). */
  readonly known?: KnownMessages
  /** `'postgres'` or `'pglite'`, for diagnostics. */
  readonly flavor: 'postgres' | 'pglite'
  /** Opens a subscription consumer's own Postgres session (its lock and LISTEN); see `subscribe`. */
  readonly dedicatedConnection?: DedicatedConnectionFactory
  /**
   * The pool behind `db` when the store created it with `directConnection: true`: `load` and the
   * appends run named prepared statements on it (planned once per connection). Its connections run
   * with `jit = off` and no parallel workers.
   */
  readonly ownPool?: Pool
}


/** A live projection row joined with the event holding its current content. */
interface LiveRow {
  message_id: string
  event_seq: number
  partial: boolean
  content_hash: string
  data: Record<string, unknown>
  scrubbed: boolean
}

interface SessionRow {
  session_id: string
  tenant_id: string | null
  version: string | number
  live_count: string | number
  created_at: Date | string
  updated_at: Date | string
  metadata: unknown
  parent_session_id: string | null
  parent_version: string | number | null
  fork_at: string | null
}

interface NewEvent {
  readonly eventId: string
  readonly type: StoredEvent['type']
  readonly messageId: string | null
  readonly contentHash: string | null
  /** `JSON.stringify` of the payload, or null. */
  readonly payloadText: string | null
  /** `JSON.stringify` of the data object. */
  readonly dataText: string
}


const PAGE = 500
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024



function toSessionInfo(row: SessionRow): SessionInfo {
  return {
    sessionId: row.session_id as SessionId,
    tenantId: row.tenant_id,
    version: Number(row.version),
    liveCount: Number(row.live_count),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    metadata: (row.metadata ?? null) as JsonValue | null,
    parent:
      row.parent_session_id === null
        ? null
        : {
            sessionId: row.parent_session_id as SessionId,
            version: Number(row.parent_version),
            at: row.fork_at as MessageId,
          },
  }
}

/** `UNKNOWN_MESSAGE` for a revise or finalize of a message that is not live in the session. */
function unknownLiveMessage(id: SessionId, mid: MessageId): TurnlogError {
  return new TurnlogError('UNKNOWN_MESSAGE', `message ${mid} is not live in session ${id}`, { details: { sessionId: id, messageId: mid } })
}

function checkVersion(expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) {
    throw new TurnlogError('VERSION_CONFLICT', `expected version ${expected}, but the session is at ${actual}`, {
      details: { expectedVersion: expected, actualVersion: actual },
    })
  }
}

/**
 * A short description of an untrusted value for an error message. Never throws: `String()` does, on
 * an object without a prototype or with a throwing `toString`.
 */
function preview(value: unknown): string {
  if (typeof value === 'object') {
    if (value === null) return 'null'
    try {
      return Array.isArray(value) ? 'an array' : 'an object'
    } catch {
      return 'an unreadable object' // a revoked Proxy (found by the hostile-value property)
    }
  }
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)
}

function checkExpectedVersion(options: WriteOptions | undefined): number | undefined {
  const v = options?.expectedVersion
  if (v === undefined) return undefined
  if (!Number.isSafeInteger(v) || v < 0) {
    throw new TurnlogError('INVALID_INPUT', `expectedVersion must be a non-negative integer, got ${preview(v)}`)
  }
  return v
}

/**
 * An options argument must be absent or an object: a default parameter (`options = {}`) does not
 * replace `null`, and reading a field of `null` or calling a non-function would escape as a raw
 * TypeError instead of `INVALID_INPUT`.
 */
function checkOptions<T>(value: T, what: string): T {
  if (value !== undefined && (typeof value !== 'object' || value === null || guardInput(what, () => Array.isArray(value)))) {
    throw new TurnlogError('INVALID_INPUT', `${what} must be an object, got ${value === null ? 'null' : guardInput(what, () => Array.isArray(value)) ? 'an array' : typeof value}`, { details: { field: what } })
  }
  return value === undefined ? value : copyOf(value as T & object, what)
}

/**
 * A shallow copy of a caller's options object, its fields read once: a throwing getter or Proxy trap is
 * `INVALID_INPUT` here, instead of a raw error wherever a field is read later.
 */
function copyOf<T extends object>(value: T, what: string): T {
  return guardInput(what, () => ({ ...value }))
}

/**
 * The Postgres (and PGlite) implementation of the {@link SessionStore} port. Every write is one
 * transaction; the common append is one round trip (`turnlog.append_messages`). Open one with
 * `openStore`.
 */
export class PostgresStore implements SessionStore {
  readonly #init: PostgresStoreInit
  readonly #known: KnownMessages
  readonly #maxBytes: number
  readonly #maxBatchBytes: number
  readonly #group: GroupCommit<PreparedAppend, AppendResult> | null
  readonly #telemetry: StoreTelemetry
  /** Set when the database has no `append_batches` (a schema older than 0005): appends go alone. */
  #groupUnavailable = false
  /** Set when named prepared statements do not survive between calls (a transaction-mode pooler). */
  #namedUnavailable = false
  #closed = false

  constructor(init: PostgresStoreInit) {
    init = parseStoreInit(init)
    this.#init = init
    this.#known = init.known ?? new KnownMessages(init.knownSessions ?? 10_000)
    this.#maxBytes = init.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    this.#maxBatchBytes = checkMaxBatchBytes(init.maxBatchBytes)
    this.#group = this.#groupCommit(init)
    this.#telemetry = new StoreTelemetry(init.telemetry)
    StoreTelemetry.attach(this, this.#telemetry)
  }

  #groupCommit(init: PostgresStoreInit): GroupCommit<PreparedAppend, AppendResult> | null {
    const setting = init.groupCommit ?? true
    if (setting === false || init.flavor !== 'postgres' || init.inTransaction === true) return null
    const limits = setting === true ? {} : setting
    const limit = (value: number | undefined, fallback: number, name: string): number => {
      if (value === undefined) return fallback
      if (!Number.isSafeInteger(value) || value < 1) throw new TurnlogError('INVALID_INPUT', `groupCommit.${name} must be a positive integer, got ${preview(value)}`)
      return value
    }
    return new GroupCommit<PreparedAppend, AppendResult>({
      maxBatches: limit(limits.maxBatches, 32, 'maxBatches'),
      maxInFlight: limit(limits.maxInFlight, 2, 'maxInFlight'),
      // the group's texts travel joined: together within one batch's limit (each batch alone is)
      maxWeight: this.#maxBatchBytes,
      weight: (p) => p.payloads.reduce((n, t) => n + t.length + 1, 0) + p.data.reduce((n, t) => n + t.length, 0),
      runGroup: (items) => this.#appendGroup(items),
      runAlone: (item) => this.#appendAlone(item),
      rolledBack: statementRolledBack,
      onGroup: (size) => this.#telemetry.groupSize(size),
    })
  }

  /** The largest batch this store accepts (see {@link PostgresStoreSettings.maxBatchBytes}). */
  get maxBatchBytes(): number {
    return this.#maxBatchBytes
  }

  /** `'postgres'` or `'pglite'`. */
  get flavor(): 'postgres' | 'pglite' {
    return this.#init.flavor
  }

  /** The Kysely instance statements run on (the store's own, or the caller's transaction). */
  get db(): Kysely<unknown> {
    return this.#init.db
  }

  /**
   * A store bound to the caller's Kysely transaction: every call runs inside it and commits or rolls
   * back with it. Nothing it writes is cached as durable (the caller may roll back). Conflict
   * evidence is still recorded outside the transaction. Throws `INVALID_INPUT` for anything but a
   * Kysely transaction (a plain Kysely instance would run each statement of a write on its own).
   */
  withTransaction(trx: Transaction<unknown>): PostgresStore {
    this.#assertOpen()
    // by shape, not instanceof: the caller's kysely may be another copy of the package
    const t = trx as { isTransaction?: unknown; getExecutor?: unknown } | null
    if (typeof t !== 'object' || t === null || !guardInput('trx', () => t.isTransaction === true && typeof t.getExecutor === 'function')) {
      throw new TurnlogError('INVALID_INPUT', 'withTransaction needs a Kysely transaction (db.transaction().execute(trx => …))')
    }
    return new PostgresStore({
      ...this.#init,
      db: trx,
      inTransaction: true,
      known: new KnownMessages(1000),
      onClose: async () => {},
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // appends already accepted go out before the pool ends
    await this.#group?.drain()
    await Promise.all([...this.#subscriptions].map((s) => s.stop()))
    await this.#init.onClose?.()
  }

  #assertOpen(): void {
    if (this.#closed) throw new TurnlogError('STORE_CLOSED', 'the store is closed')
  }

  async #run<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    this.#assertOpen()
    try {
      return await fn(this.#init.db)
    } catch (error) {
      throw mapDatabaseError(error)
    }
  }

  async #tx<T>(fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
    this.#assertOpen()
    try {
      if (this.#init.inTransaction === true) return await fn(this.#init.db)
      return await this.#init.db.transaction().execute(fn)
    } catch (error) {
      throw mapDatabaseError(error)
    }
  }

  /** Records the version a committed write of this store produced: a later no-op flush reports it. */
  #observed<T extends { readonly version: number }>(id: SessionId, result: T): T {
    if (this.#init.inTransaction !== true) this.#known.setVersion(id, result.version)
    return result
  }

  /** Locks the session row for the rest of the transaction and returns its version. */
  async #lock(db: Kysely<unknown>, sessionId: SessionId): Promise<number> {
    const { rows } = await sql<{ version: string | number }>`
      select version from turnlog.sessions where session_id = ${sessionId} for update`.execute(db)
    const row = rows[0]
    if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `session ${sessionId} not found`, { details: { sessionId } })
    return Number(row.version)
  }

  /** Inserts events after `version` and moves the session's version; returns the new version. */
  async #write(db: Kysely<unknown>, sessionId: SessionId, version: number, events: readonly NewEvent[]): Promise<number> {
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
   * Validates a batch (an `append` batch, a live list for `flush`, a compaction's summary) and folds
   * identical copies of one message (same id, same content hash: a redelivery, a message pushed twice,
   * a copy next to its original) into one, keeping the first occurrence's position. Two different
   * contents under one id are returned as `mismatch` (the caller reports `MESSAGE_CONFLICT`). With
   * `skipEphemeral` (flush) scaffolding is left out; otherwise it is refused.
   */
  #checkBatch(messages: readonly unknown[], what: string, skipEphemeral: boolean): CheckedBatch {
    if (!guardInput(what, () => Array.isArray(messages))) throw new TurnlogError('INVALID_INPUT', `${what} must be an array of messages`, { details: { field: what } })
    const unique: Message[] = []
    const hashes: string[] = []
    const index = new Map<string, number>()
    const repeated = new Set<MessageId>()
    let mismatch: CheckedBatch['mismatch'] = null
    for (const value of messages as readonly unknown[]) {
      const m = toMessage(value)
      if (m.ephemeral === true) {
        if (skipEphemeral) continue
        throw new TurnlogError('INVALID_MESSAGE', `message ${m.id} is ephemeral (scaffolding); use flush(), which skips it`, {
          details: { messageId: m.id },
        })
      }
      const hash = contentHash(m)
      const at = index.get(m.id)
      if (at !== undefined) {
        if (hashes[at] === hash) repeated.add(m.id)
        else mismatch ??= { first: unique[at] as Message, firstHash: hashes[at] as string, other: m, otherHash: hash }
        continue
      }
      index.set(m.id, unique.length)
      unique.push(m)
      hashes.push(hash)
      if (m.externalId !== undefined) checkSafeText(m.externalId, 'externalId')
      if (m.externalScope !== undefined) checkSafeText(m.externalScope, 'externalScope')
    }
    return { unique, hashes, repeated, mismatch }
  }

  /** A checked batch without its copies; two contents under one id are `MESSAGE_CONFLICT` (no evidence: compaction). */
  #validateForAppend(messages: readonly unknown[], what: string): Message[] {
    const batch = this.#checkBatch(messages, what, false)
    if (batch.mismatch) throw inBatchConflictError(null, batch.mismatch, null)
    return batch.unique
  }

  /**
   * Two different contents under one id in one call: `MESSAGE_CONFLICT` (reason `content_mismatch`,
   * `storedHash` the first copy's hash), recorded as conflict evidence like any other, nothing written.
   */
  async #inBatchConflict(id: SessionId, mismatch: NonNullable<CheckedBatch['mismatch']>): Promise<TurnlogError> {
    const conflict = { messageId: mismatch.other.id, reason: 'content_mismatch', storedHash: mismatch.firstHash, incomingHash: mismatch.otherHash, otherSessionId: null }
    const error = inBatchConflictError(id, mismatch, [conflict])
    // the evidence goes the way of every conflict's (outside a caller's transaction, best effort)
    await this.#conflict(id, [mismatch.other], [mismatch.otherHash], Object.assign(new Error(error.message), { detail: JSON.stringify([conflict]) }))
    return error
  }

  #payloadText(message: { readonly id?: string; readonly payload: ChatMessage }): string {
    let text: string
    try {
      text = JSON.stringify(message.payload)
    } catch (cause) {
      // longer than the longest string JavaScript can hold (the depth of a payload is bounded)
      if (!(cause instanceof RangeError)) throw cause
      throw new TurnlogError('MESSAGE_TOO_LARGE', `message ${message.id ?? ''} is longer than the longest string JavaScript can hold; the limit is ${this.#maxBytes}`, {
        details: { messageId: message.id ?? null, size: null, limit: this.#maxBytes },
        cause,
      })
    }
    if (text.length > this.#maxBytes) {
      throw new TurnlogError('MESSAGE_TOO_LARGE', `message ${message.id ?? ''} is ${text.length} bytes of JSON; the limit is ${this.#maxBytes}`, {
        details: { messageId: message.id ?? null, size: text.length, limit: this.#maxBytes },
      })
    }
    return text
  }

  @traced('createSession', spanAttributes.createSession)
  async createSession(options: CreateSessionOptions = {}): Promise<SessionId> {
    this.#assertOpen()
    options = checkOptions(options, 'createSession options')
    const id = options.id === undefined ? newSessionId() : parseSessionId(options.id)
    const tenant = options.tenantId ?? null
    if (tenant !== null) checkSafeText(tenant, 'tenantId')
    const metadata = options.metadata === undefined ? null : jsonTextWithin(toFrozenJson(options.metadata), this.#maxBatchBytes, 'metadata')
    return this.#run(async (db) => {
      const { rows } = await sql<{ session_id: string }>`
        insert into turnlog.sessions (session_id, tenant_id, metadata)
        values (${id}, ${tenant}, ${metadata}::json)
        on conflict (session_id) do nothing
        returning session_id::text`.execute(db)
      if (rows.length === 0) {
        const existing = await sql<{ tenant_id: string | null }>`
          select tenant_id from turnlog.sessions where session_id = ${id}`.execute(db)
        const row = existing.rows[0]
        // no visible row: the id is taken by a session of another tenant (row level security hides it)
        if (!row || row.tenant_id !== tenant) {
          throw new TurnlogError('SESSION_EXISTS', `session ${id} exists with another tenant`, { details: { sessionId: id } })
        }
      }
      return id
    })
  }

  @traced('getSession', spanAttributes.getSession)
  async getSession(sessionId: string): Promise<SessionInfo> {
    this.#assertOpen()
    const id = parseSessionId(sessionId)
    return this.#run(async (db) => {
      const { rows } = await sql<SessionRow>`
        select s.session_id::text, s.tenant_id, s.version, s.created_at, s.updated_at, s.metadata,
               s.parent_session_id::text, s.parent_version, s.fork_at::text,
               (select count(*) from turnlog.live_messages l where l.session_id = s.session_id) as live_count
          from turnlog.sessions s where s.session_id = ${id}`.execute(db)
      const row = rows[0]
      if (!row) throw new TurnlogError('SESSION_NOT_FOUND', `session ${id} not found`, { details: { sessionId: id } })
      return toSessionInfo(row)
    })
  }

  @traced('sessions', spanAttributes.sessions)
  async sessions(options: ListSessionsOptions = {}): Promise<SessionPage> {
    this.#assertOpen()
    options = checkOptions(options, 'sessions options')
    const limit = options.limit ?? 100
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
      throw new TurnlogError('INVALID_INPUT', `limit must be an integer from 1 to 1000, got ${preview(limit)}`)
    }
    const after = options.after === undefined ? null : parseSessionId(options.after)
    // the same rule as createSession's tenant: a NUL would reach Postgres as a text parameter (DB_ERROR)
    const tenant = options.tenantId === undefined ? null : checkSafeText(options.tenantId, 'tenantId')
    return this.#run(async (db) => {
      const { rows } = await sql<SessionRow>`
        select s.session_id::text, s.tenant_id, s.version, s.created_at, s.updated_at, s.metadata,
               s.parent_session_id::text, s.parent_version, s.fork_at::text,
               (select count(*) from turnlog.live_messages l where l.session_id = s.session_id) as live_count
          from turnlog.sessions s
         where (${after}::uuid is null or s.session_id > ${after}::uuid)
           and (${tenant}::text is null or s.tenant_id = ${tenant}::text)
         order by s.session_id
         limit ${limit + 1}`.execute(db)
      const page = rows.slice(0, limit).map(toSessionInfo)
      const last = page[page.length - 1]
      return { sessions: page, next: rows.length > limit && last ? last.sessionId : null }
    })
  }

  @traced('append', spanAttributes.append)
  async append(sessionId: string, messages: readonly Message[], options: AppendOptions = {}): Promise<AppendResult> {
    this.#assertOpen()
    options = checkOptions(options, 'append options')
    const id = parseSessionId(sessionId)
    const batch = this.#checkBatch(messages, 'messages', false)
    const expected = checkExpectedVersion(options)
    if (batch.mismatch) throw await this.#inBatchConflict(id, batch.mismatch)
    return withCopies(await this.#appendValid(id, batch.unique, expected), batch.unique, batch.repeated)
  }

  async #appendValid(id: SessionId, batch: readonly Message[], expected: number | undefined): Promise<AppendResult> {
    // sizes first: a batch over maxBatchBytes is refused before the rest of it is serialised or hashed
    const data = batch.map((m) => envelopeText(m))
    const budget = new BatchBudget(this.#maxBatchBytes, batch.length)
    const payloads = batch.map((m, i) => budget.add(this.#payloadText(m), m.id, (data[i] as string).length))
    const hashes = batch.map((m) => contentHash(m))
    const prepared: PreparedAppend = {
      sessionId: id,
      expected: expected ?? null,
      batch,
      hashes,
      payloads,
      data,
      eventIds: batch.map(() => newEventId()),
    }
    const result = this.#group === null || this.#groupUnavailable ? await this.#appendAlone(prepared) : await this.#group.submit(prepared)
    if (this.#init.inTransaction !== true) {
      const byId = new Map(batch.map((m, i) => [m.id as string, hashes[i] as string]))
      this.#known.addAll(id, [...result.appended, ...result.duplicates].map((mid) => [mid, byId.get(mid) ?? ''] as const))
      this.#known.setVersion(id, result.version)
    }
    return result
  }

  /** One session's batch in one statement (`turnlog.append_messages`), with its own typed errors. */
  async #appendAlone(p: PreparedAppend): Promise<AppendResult> {
    const { sessionId: id, batch, hashes } = p
    const ids = JSON.stringify(batch.map((m) => m.id))
    const hashesText = JSON.stringify(hashes)
    const eventIds = JSON.stringify(p.eventIds)
    const payloadsText = `[${p.payloads.join(',')}]`
    const dataText = `[${p.data.join(',')}]`
    let row: AppendRow | undefined
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await this.#statement<AppendRow>(APPEND_MESSAGES, [id, p.expected, ids, hashesText, eventIds, payloadsText, dataText])
        row = rows[0]
        break
      } catch (error) {
        const state = sqlState(error)
        if (state === 'TLM01') throw await this.#conflict(id, batch, hashes, error)
        // another writer stored some of these ids after the function classified them (the insert's
        // claim on turnlog.message_ids refused them): they are duplicates or conflicts now, so the same
        // call classifies them correctly (not inside a caller's transaction, which the failed statement
        // has aborted: there the caller retries, DB_TRANSIENT)
        if (lostMessageIdRace(error) && attempt < 5 && this.#init.inTransaction !== true) continue
        throw mapDatabaseError(error)
      }
    }
    if (!row) throw new TurnlogError('DB_ERROR', 'append returned no row')
    return toAppendResult(row)
  }

  /**
   * Several sessions' batches in one statement (`turnlog.append_batches`, one commit). A batch the
   * function leaves out (a conflict, a missing session, an unexpected version, an id new in an earlier
   * batch too) wrote nothing and comes back as `null`: the group commit runs it alone.
   */
  async #appendGroup(items: readonly PreparedAppend[]): Promise<(AppendResult | null)[]> {
    const flat = <K extends 'payloads' | 'data'>(key: K): string => `[${items.map((p) => p[key].join(',')).filter((t) => t !== '').join(',')}]`
    let rows: (AppendRow & { batch: number })[]
    try {
      rows = await this.#statement<AppendRow & { batch: number }>(APPEND_BATCHES, [
        JSON.stringify(items.map((p) => p.sessionId)), JSON.stringify(items.map((p) => p.expected)),
        JSON.stringify(items.map((p) => p.batch.length)), JSON.stringify(items.flatMap((p) => p.batch.map((m) => m.id))),
        JSON.stringify(items.flatMap((p) => p.hashes)), JSON.stringify(items.flatMap((p) => p.eventIds)),
        flat('payloads'), flat('data'),
      ])
    } catch (error) {
      // undefined_function: the schema predates 0005 (code deployed before its migration ran);
      // these batches and every later append go alone
      if (sqlState(error) === '42883') this.#groupUnavailable = true
      // a refusal that rolled the statement back stays raw: the group commit runs each batch alone;
      // anything else reaches every caller of the group as a lone append would report it
      throw statementRolledBack(error) ? error : mapDatabaseError(error)
    }
    const results: (AppendResult | null)[] = items.map(() => null)
    for (const row of rows) results[Number(row.batch) - 1] = toAppendResult(row)
    return results
  }

  /**
   * Runs one of the store's fixed hot statements: on the pool of a `directConnection` store, as a named prepared
   * statement (parsed and planned once per connection: ≈ 0.06 ms less per call, measured); otherwise
   * (a caller's pool or Kysely, a transaction, PGlite) through Kysely as an unnamed statement.
   * Driver errors are thrown as they are.
   */
  async #statement<R>(statement: { readonly name: string; readonly text: string }, values: readonly unknown[]): Promise<R[]> {
    return this.#namedOr(
      async (pool) => (await pool.query<R & QueryResultRow>({ name: statement.name, text: statement.text, values: [...values] })).rows,
      async () => [...(await this.#init.db.executeQuery<R>(CompiledQuery.raw(statement.text, [...values]))).rows],
    )
  }

  /**
   * `named(pool)` on the pool of a `directConnection` store (see {@link PostgresStoreInit.ownPool}),
   * outside a caller's transaction; `unnamed()` otherwise. When a prepared statement went missing or
   * already existed on the server connection (`26000`, `42P05`: a pooler in transaction mode, PgBouncer
   * before 1.21 or without `max_prepared_statements`, hands each statement another server connection),
   * named statements are off for this store from then on and the call runs `unnamed()`: both errors are
   * raised before the statement runs.
   */
  async #namedOr<T>(named: (pool: Pool) => Promise<T>, unnamed: () => Promise<T>): Promise<T> {
    const pool = this.#init.inTransaction === true || this.#namedUnavailable ? undefined : this.#init.ownPool
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

  /** Records conflict evidence outside any caller transaction and builds the `MESSAGE_CONFLICT` error. */
  async #conflict(id: SessionId, batch: readonly Message[], hashes: readonly string[], error: unknown): Promise<TurnlogError> {
    const detail = (error as { detail?: unknown }).detail
    let conflicts: { messageId: string; reason: string; storedHash: string | null; incomingHash: string; otherSessionId: string | null }[] = []
    try {
      conflicts = JSON.parse(String(detail)) as typeof conflicts
    } catch {
      // keep the empty list; the cause has the raw detail
    }
    const first = conflicts[0]
    // one row per conflicting message, all in one statement: an attempt's evidence is complete or absent,
    // and its rows share detected_at
    const rows = conflicts.flatMap((c) => {
      const i = batch.findIndex((m) => m.id === c.messageId)
      const message = batch[i]
      if (!message) return []
      return [sql`(${id}::uuid, ${newEventId()}::uuid, ${c.messageId}::uuid, ${c.reason}, decode(${c.storedHash ?? ''}, 'hex'),
                   decode(${hashes[i] ?? ''}, 'hex'), ${c.otherSessionId}::uuid, ${JSON.stringify(message.payload)}::json)`]
    })
    const record = async (): Promise<void> => {
      if (rows.length === 0) return
      await sql`
        insert into turnlog.conflicts (session_id, conflict_id, message_id, reason, stored_hash, incoming_hash, other_session_id, incoming_payload)
        values ${sql.join(rows)}`.execute(this.#init.root)
    }
    // evidence is best effort; the conflict itself is still reported to the caller. PGlite has one
    // connection, which the caller's transaction holds: awaiting the insert would wait forever, so it is
    // queued to run once that transaction ends.
    if (this.#init.inTransaction === true && this.#init.flavor === 'pglite') void record().catch(() => {})
    else await record().catch(() => {})
    const what = first?.reason === 'foreign_session'
      ? `message ${first.messageId} belongs to session ${first.otherSessionId ?? '?'}`
      : `message ${first?.messageId ?? '?'} is stored with different content (stored ${first?.storedHash?.slice(0, 12) ?? '?'}…, incoming ${first?.incomingHash.slice(0, 12) ?? '?'}…)`
    return new TurnlogError('MESSAGE_CONFLICT', `${what}; nothing of the batch was written`, {
      details: {
        sessionId: id,
        messageId: first?.messageId ?? null,
        reason: first?.reason ?? null,
        storedHash: first?.storedHash ?? null,
        incomingHash: first?.incomingHash ?? null,
        otherSessionId: first?.otherSessionId ?? null,
        conflicts,
      },
      cause: error,
    })
  }

  @traced('flush', spanAttributes.append)
  async flush(sessionId: string, live: readonly Message[], options: AppendOptions = {}): Promise<AppendResult> {
    this.#assertOpen()
    options = checkOptions(options, 'flush options')
    const id = parseSessionId(sessionId)
    const batch = this.#checkBatch(live, 'live', true)
    const expected = checkExpectedVersion(options)
    if (batch.mismatch) throw await this.#inBatchConflict(id, batch.mismatch)
    const durable: Message[] = []
    const pending: Message[] = []
    batch.unique.forEach((m, i) => (this.#known.has(id, m.id, batch.hashes[i] ?? '') ? durable : pending).push(m))
    const cachedVersion = this.#known.version(id)
    // with expectedVersion, the database is asked (docs/guarantees.md: it forces a check), even when it
    // equals the version this store last saw: another writer may have moved it since
    if (pending.length === 0 && cachedVersion !== undefined && expected === undefined) {
      return { version: cachedVersion, appended: [], duplicates: durable.map((m) => m.id) }
    }
    const result = await this.#appendValid(id, pending, expected)
    const appended = new Set<string>(result.appended)
    return {
      version: result.version,
      appended: result.appended,
      // every listed message this call did not write, and every message it wrote that was listed more than once
      duplicates: batch.unique.map((m) => m.id).filter((mid) => !appended.has(mid) || batch.repeated.has(mid)),
    }
  }

  @traced('load', spanAttributes.load)
  async load(sessionId: string, options: LoadOptions = {}): Promise<LoadResult> {
    this.#assertOpen()
    options = checkOptions(options, 'load options')
    const id = parseSessionId(sessionId)
    if (options.at !== undefined) {
      const state = await this.state(id, options)
      const messages = liveMessages(state)
      return { sessionId: id, version: state.version, messages, pairing: toolPairing(messages) }
    }
    return this.#run(async (db) => {
      const { version, rows } = await this.#namedOr(
        (pool) => loadLiveRowsPrepared(pool, id),
        () => loadLiveRows(db, this.#init.root, id, this.#init.inTransaction === true),
      )
      const cache = this.#init.inTransaction !== true
      const messages: Message[] = []
      for (const row of rows) {
        const message = restoreMessage({
          id: row.message_id as MessageId,
          payload: row.payload,
          createdAt: row.data.createdAt,
          externalId: row.data.externalId,
          externalScope: row.data.externalScope,
          status: row.partial === true ? 'partial' : undefined,
          contentHash: row.content_hash,
        })
        messages.push(message)
      }
      // the pairs the flush cache learns are (id, stored hash): the hashes memoised above for these payloads
      if (cache) {
        this.#known.addAll(id, rows.map((row) => [row.message_id, row.content_hash] as const))
        this.#known.setVersion(id, version)
      }
      return { sessionId: id, version, messages, pairing: toolPairing(messages) }
    })
  }

  @tracedIteration('events')
  async *events(sessionId: string, options: EventsOptions = {}): AsyncGenerator<StoredEvent> {
    this.#assertOpen()
    options = checkOptions(options, 'events options')
    const id = parseSessionId(sessionId)
    let from = options.fromSeq ?? 1
    const to = options.toSeq ?? Number.MAX_SAFE_INTEGER
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new TurnlogError('INVALID_INPUT', 'fromSeq/toSeq must be integers')
    await this.#run(async (db) => {
      const { rows } = await sql`select 1 from turnlog.sessions where session_id = ${id}`.execute(db)
      if (rows.length === 0) throw new TurnlogError('SESSION_NOT_FOUND', `session ${id} not found`, { details: { sessionId: id } })
    })
    for (;;) {
      const rows = await this.#run(async (db) => {
        const result = await sql<EventRow>`
          select ${EVENT_COLUMNS} from turnlog.events
           where session_id = ${id} and seq >= ${from} and seq <= ${to}
           order by seq limit ${PAGE}`.execute(db)
        return result.rows
      })
      for (const row of rows) yield toStoredEvent(row)
      if (rows.length < PAGE) return
      from = Number(rows[rows.length - 1]?.seq) + 1
    }
  }

  @traced('state', spanAttributes.state)
  async state(sessionId: string, options: LoadOptions = {}): Promise<SessionState> {
    this.#assertOpen()
    options = checkOptions(options, 'state options')
    const id = parseSessionId(sessionId)
    const at = options.at
    if (at !== undefined) {
      if (!Number.isSafeInteger(at) || at < 0) throw new TurnlogError('INVALID_INPUT', `at must be a non-negative integer, got ${preview(at)}`)
      const info = await this.getSession(id)
      if (at > info.version) {
        throw new TurnlogError('INVALID_INPUT', `at ${at} is beyond the session's version ${info.version}`, {
          details: { at, version: info.version },
        })
      }
    }
    const events: StoredEvent[] = []
    for await (const e of this.events(id, at === undefined ? {} : { toSeq: at })) events.push(e)
    const state = foldSession(events)
    return state.sessionId === null ? { ...state, sessionId: id } : state
  }

  @traced('transcript', spanAttributes.transcript)
  async transcript(sessionId: string): Promise<Transcript> {
    const state = await this.state(sessionId)
    const id = parseSessionId(sessionId)
    const other: StoredEvent[] = []
    for await (const e of this.events(id)) {
      if (e.type !== 'message_appended' && e.type !== 'message_revised') other.push(e)
    }
    return {
      sessionId: id,
      version: state.version,
      entries: transcriptOf(state),
      events: other,
      pairing: toolPairing(liveMessages(state)),
    }
  }

  async #liveRows(db: Kysely<unknown>, id: SessionId): Promise<LiveRow[]> {
    const { rows } = await sql<{ message_id: string; event_seq: string | number; partial: boolean; content_hash: string; data: Record<string, unknown>; scrubbed: boolean }>`
      select l.message_id::text, l.event_seq, l.partial, encode(e.content_hash, 'hex') as content_hash, e.data,
             e.payload_digest is not null as scrubbed
        from turnlog.live_messages l
        join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
       where l.session_id = ${id}
       order by l.position`.execute(db)
    return rows.map((r) => ({ ...r, event_seq: Number(r.event_seq) }))
  }

  @traced('rewind', spanAttributes.rewind)
  async rewind(sessionId: string, target: RewindTarget, options: RewindOptions = {}): Promise<RewindResult> {
    this.#assertOpen()
    options = checkOptions(options, 'rewind options')
    const id = parseSessionId(sessionId)
    const expected = checkExpectedVersion(options)
    if (typeof target !== 'object' || target === null) throw new TurnlogError('INVALID_INPUT', 'rewind target must be { after } or { from }')
    const hasAfter = 'after' in target
    const hasFrom = 'from' in target
    if (hasAfter === hasFrom) throw new TurnlogError('INVALID_INPUT', 'rewind target must have exactly one of after / from')
    const targetId = parseMessageId(hasAfter ? (target as { after: string }).after : (target as { from: string }).from)
    if (options.reason !== undefined) checkSafeText(options.reason, 'reason')
    return rewound(this.#observed(id, await this.#tx(async (db) => {
      const version = await this.#lock(db, id)
      checkVersion(expected, version)
      const live = await this.#liveRows(db, id)
      const index = live.findIndex((r) => r.message_id === targetId)
      if (index < 0) {
        throw new TurnlogError('UNKNOWN_MESSAGE', `rewind target ${targetId} is not a live message of session ${id}`, {
          details: { sessionId: id, messageId: targetId },
        })
      }
      const retracted = live.slice(hasAfter ? index + 1 : index).map((r) => r.message_id as MessageId)
      if (retracted.length === 0) return { version, retracted }
      const data: Record<string, unknown> = { ids: retracted, target: hasAfter ? { after: targetId } : { from: targetId } }
      if (options.reason !== undefined) data['reason'] = options.reason
      const next = await this.#write(db, id, version, [
        { eventId: newEventId(), type: 'messages_retracted', messageId: null, contentHash: null, payloadText: null, dataText: JSON.stringify(data) },
      ])
      return { version: next, retracted }
    })))
  }

  @traced('compact', spanAttributes.compact)
  async compact(sessionId: string, input: CompactInput): Promise<CompactResult> {
    this.#assertOpen()
    const id = parseSessionId(sessionId)
    if (typeof input !== 'object' || input === null) throw new TurnlogError('INVALID_INPUT', 'compact needs { covered, summary }')
    input = copyOf(input, 'compact input')
    const expected = checkExpectedVersion(input)
    if (!Array.isArray(input.covered) || input.covered.length === 0) {
      throw new TurnlogError('INVALID_INPUT', 'covered must be a non-empty array of message ids')
    }
    const covered = input.covered.map((c) => parseMessageId(c))
    if (new Set(covered).size !== covered.length) throw new TurnlogError('INVALID_INPUT', 'covered names a message twice')
    const summary = this.#validateForAppend(Array.isArray(input.summary) ? (input.summary as Message[]) : [input.summary as Message], 'summary')
    if (summary.length === 0) throw new TurnlogError('INVALID_INPUT', 'summary must hold at least one message')
    for (const s of summary) {
      if (covered.includes(s.id)) throw new TurnlogError('INVALID_INPUT', `summary message ${s.id} is also covered`)
    }
    if (input.reason !== undefined) checkSafeText(input.reason, 'reason')
    const metadata = input.metadata === undefined ? undefined : checkSafeJson(toFrozenJson(input.metadata), 'metadata')
    if (metadata !== undefined) jsonTextWithin(metadata, this.#maxBatchBytes, 'metadata')
    const summaryBudget = new BatchBudget(this.#maxBatchBytes, summary.length)
    const summaryPayloads = summary.map((m) => summaryBudget.add(this.#payloadText(m), m.id, envelopeText(m).length + 16))
    const summaryHashes = summary.map((m) => contentHash(m))
    // the summary's claim on its ids (turnlog.message_ids) is the cross-session check: a compaction that
    // lost the race for one runs again and then finds it stored (a replay of itself, or a conflict)
    for (let attempt = 1; ; attempt++) {
      try {
        return compacted(covered, summary, this.#observed(id, await this.#tx((db) => this.#compactOnce(db, id, expected, covered, summary, summaryHashes, summaryPayloads, input.reason, metadata))))
      } catch (error) {
        if (attempt < 5 && this.#init.inTransaction !== true && isTurnlogError(error, 'DB_TRANSIENT') && lostMessageIdRace(error.cause)) continue
        throw error
      }
    }
  }

  /** One attempt of {@link compact} in transaction `db`; the order of its checks is the contract's (docs/guarantees.md). */
  async #compactOnce(db: Kysely<unknown>, id: SessionId, expected: number | undefined, covered: readonly MessageId[], summary: readonly Message[],
    summaryHashes: readonly string[], summaryPayloads: readonly string[], reason: string | undefined, metadata: JsonValue | undefined): Promise<Omit<CompactResult, 'applyTo'>> {
    const version = await this.#lock(db, id)
    // a retry of a compaction that already committed is a no-op, whatever the version now
    const existing = await sql<{ session_id: string; content_hash: string; type: string }>`
      select session_id::text, encode(content_hash, 'hex') as content_hash, type from turnlog.events
       where message_id = ${summary[0]?.id ?? null}::uuid and content_hash is not null`.execute(db)
    // any stored version of it may come first (a revision of the summary, say): look for the original content
    const own = existing.rows.find((r) => r.session_id === id && r.content_hash === summaryHashes[0]) ?? existing.rows.find((r) => r.session_id === id)
    if (own && own.content_hash === summaryHashes[0]) {
      const placed = await sql<{ n: string | number }>`
        select count(*) as n from turnlog.events
         where session_id = ${id} and type = 'messages_compacted'
           and (data->'summary'->>0) = ${summary[0]?.id ?? ''}`.execute(db)
      if (Number(placed.rows[0]?.n ?? 0) > 0) return { version, summary: summary.map((m) => m.id) }
    }
    // then the version, before anything else about the session's state
    checkVersion(expected, version)
    const others = await sql<{ message_id: string; session_id: string }>`
      select distinct message_id::text, session_id::text from turnlog.events
       where message_id = any (array(select value::uuid from json_array_elements_text(${JSON.stringify(summary.map((m) => m.id))}::json)))
         and content_hash is not null`.execute(db)
    if (others.rows.length > 0) {
      const first = summary.map((m) => others.rows.filter((r) => r.message_id === m.id)).find((rows) => rows.length > 0) ?? []
      const mine = first.find((r) => r.session_id === id)
      const foreign = first.find((r) => r.session_id !== id)
      const messageId = first[0]?.message_id ?? null
      throw new TurnlogError('MESSAGE_CONFLICT', `summary message ${messageId ?? ''} is already stored${mine ? '' : ` in session ${foreign?.session_id ?? '?'}`}; nothing was written`, {
        details: {
          sessionId: id,
          messageId,
          reason: mine ? 'content_mismatch' : 'foreign_session',
          otherSessionId: mine ? null : (foreign?.session_id ?? null),
        },
      })
    }
    const live = await this.#liveRows(db, id)
    const byId = new Map(live.map((r) => [r.message_id, r]))
    const missing = covered.filter((c) => !byId.has(c))
    if (missing.length > 0) {
      throw new TurnlogError('UNKNOWN_MESSAGE', `compaction covers ${missing.length} message(s) that are not live: ${missing.slice(0, 3).join(', ')}`, {
        details: { sessionId: id, missing },
      })
    }
    const events: NewEvent[] = summary.map((m, i) => {
      const d: Record<string, unknown> = { createdAt: m.createdAt }
      if (m.externalId !== undefined) d['externalId'] = m.externalId
      if (m.externalScope !== undefined) d['externalScope'] = m.externalScope
      if (m.status === 'partial') d['status'] = 'partial'
      d['deferred'] = true
      return {
        eventId: newEventId(),
        type: 'message_appended',
        messageId: m.id,
        contentHash: summaryHashes[i] ?? null,
        payloadText: summaryPayloads[i] ?? null,
        dataText: JSON.stringify(d),
      }
    })
    const data: Record<string, unknown> = {
      covered: covered.map((c) => ({ id: c, contentHash: byId.get(c)?.content_hash ?? '' })),
      summary: summary.map((m) => m.id),
    }
    if (reason !== undefined) data['reason'] = reason
    if (metadata !== undefined) data['metadata'] = metadata
    events.push({ eventId: newEventId(), type: 'messages_compacted', messageId: null, contentHash: null, payloadText: null, dataText: JSON.stringify(data) })
    const next = await this.#write(db, id, version, events)
    return { version: next, summary: summary.map((m) => m.id) }
  }

  @traced('revise', spanAttributes.revise)
  async revise(sessionId: string, messageId: string, payload: unknown, options: ReviseOptions = {}): Promise<ReviseResult> {
    this.#assertOpen()
    options = checkOptions(options, 'revise options')
    const id = parseSessionId(sessionId)
    const mid = parseMessageId(messageId)
    const expected = checkExpectedVersion(options)
    if (options.status !== undefined && options.status !== 'partial' && options.status !== 'final') {
      throw new TurnlogError('INVALID_INPUT', `status must be 'partial' or 'final'`)
    }
    const parsed = parseChatMessage(payload)
    const hash = contentHash(parsed)
    const payloadText = this.#payloadText({ id: mid, payload: parsed })
    const partial = options.status === 'partial'
    let envelope: LiveRow['data'] = {}
    return revised(mid, parsed, partial, () => envelope, this.#observed(id, await this.#tx(async (db) => {
      const { version, row, revisions } = await this.#lockLiveMessage(db, id, mid)
      if (row !== undefined) envelope = row.data
      // a replay of what is already in effect is a no-op whatever the version; anything else checks the
      // version before the message's state (a stale writer gets VERSION_CONFLICT, not UNKNOWN_MESSAGE)
      if (row !== undefined && row.content_hash === hash && row.partial === partial) return { version, revision: revisions - 1, unchanged: true }
      checkVersion(expected, version)
      if (row === undefined) throw unknownLiveMessage(id, mid)
      if (row.content_hash === hash) {
        // same content: only the streaming status changes
        if (partial) {
          throw new TurnlogError('INVALID_INPUT', `message ${mid} is final; a final message cannot become partial again`, {
            details: { sessionId: id, messageId: mid },
          })
        }
        const next = await this.#write(db, id, version, [
          { eventId: newEventId(), type: 'message_finalized', messageId: mid, contentHash: null, payloadText: null, dataText: '{}' },
        ])
        return { version: next, revision: revisions - 1, unchanged: false }
      }
      const next = await this.#write(db, id, version, [
        { eventId: newEventId(), type: 'message_revised', messageId: mid, contentHash: hash, payloadText, dataText: this.#messageData(row.data, partial, revisions) },
      ])
      return { version: next, revision: revisions, unchanged: false }
    })))
  }

  /**
   * Locks the session and returns its version, the live projection row of `mid` (undefined when it is
   * not live: the caller checks the version first, then throws {@link unknownLiveMessage}) and how many
   * content versions the message has (1 + its revisions).
   */
  async #lockLiveMessage(db: Kysely<unknown>, id: SessionId, mid: MessageId): Promise<{
    version: number
    row: LiveRow | undefined
    revisions: number
  }> {
    const version = await this.#lock(db, id)
    const live = await this.#liveRows(db, id)
    const row = live.find((r) => r.message_id === mid)
    if (!row) return { version, row, revisions: 0 }
    const count = await sql<{ n: string | number }>`
      select count(*) as n from turnlog.events
       where session_id = ${id} and message_id = ${mid} and content_hash is not null`.execute(db)
    return { version, row, revisions: Number(count.rows[0]?.n ?? 1) }
  }

  #messageData(original: Record<string, unknown>, partial: boolean, revision: number): string {
    const d: Record<string, unknown> = { createdAt: original['createdAt'] }
    if (original['externalId'] !== undefined) d['externalId'] = original['externalId']
    if (original['externalScope'] !== undefined) d['externalScope'] = original['externalScope']
    if (partial) d['status'] = 'partial'
    d['revision'] = revision
    return JSON.stringify(d)
  }

  @traced('finalize', spanAttributes.revise)
  async finalize(sessionId: string, messageId: string, payload?: unknown, options: WriteOptions = {}): Promise<ReviseResult> {
    this.#assertOpen()
    options = checkOptions(options, 'finalize options')
    if (payload !== undefined) return this.revise(sessionId, messageId, payload, { ...options, status: 'final' })
    const id = parseSessionId(sessionId)
    const mid = parseMessageId(messageId)
    const expected = checkExpectedVersion(options)
    let current: { payload: unknown; data: LiveRow['data'] } = { payload: null, data: {} }
    const result = this.#observed(id, await this.#tx(async (db) => {
      const { version, row, revisions } = await this.#lockLiveMessage(db, id, mid)
      if (row !== undefined) current = { payload: await this.#payloadAt(db, id, row.event_seq), data: row.data }
      const revision = revisions - 1
      // as revise: a replay (the message is final already) is a no-op, then the version, then the state
      if (row !== undefined && !row.partial) return { version, revision, unchanged: true }
      checkVersion(expected, version)
      if (row === undefined) throw unknownLiveMessage(id, mid)
      const next = await this.#write(db, id, version, [
        { eventId: newEventId(), type: 'message_finalized', messageId: mid, contentHash: null, payloadText: null, dataText: '{}' },
      ])
      return { version: next, revision, unchanged: false }
    }))
    return revised(mid, current.payload, false, () => current.data, result)
  }

  /** The payload of one event (the current content of a live message), as stored. */
  async #payloadAt(db: Kysely<unknown>, id: SessionId, seq: number): Promise<unknown> {
    const { rows } = await sql<{ payload: unknown }>`select payload from turnlog.events where session_id = ${id} and seq = ${seq}`.execute(db)
    return rows[0]?.payload ?? null
  }

  @traced('fork', spanAttributes.fork)
  async fork(sessionId: string, options: ForkOptions): Promise<SessionId> {
    this.#assertOpen()
    const parent = parseSessionId(sessionId)
    if (typeof options !== 'object' || options === null) throw new TurnlogError('INVALID_INPUT', 'fork needs { at }')
    options = copyOf(options, 'fork options')
    const at = parseMessageId(options.at)
    const child = options.id === undefined ? newSessionId() : parseSessionId(options.id)
    if (child === parent) throw new TurnlogError('INVALID_INPUT', 'a fork needs a new session id')
    const metadata = options.metadata === undefined ? null : jsonTextWithin(toFrozenJson(options.metadata), this.#maxBatchBytes, 'metadata')
    return this.#tx(async (db) => {
      const existing = await sql<{ parent_session_id: string | null; fork_at: string | null }>`
        select parent_session_id::text, fork_at::text from turnlog.sessions where session_id = ${child}`.execute(db)
      const prior = existing.rows[0]
      if (prior) {
        if (prior.parent_session_id === parent && prior.fork_at === at) return child
        throw new TurnlogError('SESSION_EXISTS', `session ${child} already exists`, { details: { sessionId: child } })
      }
      const version = await this.#lock(db, parent)
      const tenant = await sql<{ tenant_id: string | null }>`select tenant_id from turnlog.sessions where session_id = ${parent}`.execute(db)
      const tenantId = tenant.rows[0]?.tenant_id ?? null
      if (options.tenantId !== undefined && options.tenantId !== tenantId) {
        throw new TurnlogError('INVALID_INPUT', 'a fork belongs to its parent session\'s tenant')
      }
      const live = await this.#liveRows(db, parent)
      const index = live.findIndex((r) => r.message_id === at)
      if (index < 0) {
        throw new TurnlogError('UNKNOWN_MESSAGE', `fork point ${at} is not a live message of session ${parent}`, {
          details: { sessionId: parent, messageId: at },
        })
      }
      const inherited = live.slice(0, index + 1)
      // a concurrent fork (or createSession) with the same id: wait for it, then this call is its replay
      // (same parent, same point: the id is returned) or SESSION_EXISTS; an id another tenant holds is
      // invisible here (row level security) and taken all the same
      const created = await sql<{ session_id: string }>`
        insert into turnlog.sessions (session_id, tenant_id, metadata, parent_session_id, parent_version, fork_at)
        values (${child}, ${tenantId}, ${metadata}::json, ${parent}, ${version}, ${at})
        on conflict (session_id) do nothing
        returning session_id::text`.execute(db)
      if (created.rows.length === 0) {
        const taken = await sql<{ parent_session_id: string | null; fork_at: string | null }>`
          select parent_session_id::text, fork_at::text from turnlog.sessions where session_id = ${child}`.execute(db)
        const row = taken.rows[0]
        if (row && row.parent_session_id === parent && row.fork_at === at) return child
        throw new TurnlogError('SESSION_EXISTS', `session ${child} already exists`, { details: { sessionId: child } })
      }
      const forked = JSON.stringify({ parentSessionId: parent, parentVersion: version, at, inherited: inherited.length })
      const next = await this.#write(db, child, 0, [
        { eventId: newEventId(), type: 'session_forked', messageId: null, contentHash: null, payloadText: null, dataText: forked },
      ])
      // copies of the inherited messages (current content, same ids): the payload text is copied in SQL, byte for byte
      const datas = inherited.map((r) => {
        const d: Record<string, unknown> = { createdAt: r.data['createdAt'] }
        if (r.data['externalId'] !== undefined) d['externalId'] = r.data['externalId']
        if (r.data['externalScope'] !== undefined) d['externalScope'] = r.data['externalScope']
        if (r.partial) d['status'] = 'partial'
        d['inheritedFrom'] = parent
        // a copy of a redacted message carries the placeholder, never content (the audit must know)
        if (r.scrubbed || r.data['redacted'] === true) d['redacted'] = true
        return JSON.stringify(d)
      })
      if (inherited.length > 0) {
        await sql`
          insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
          select ${child}::uuid, ${next}::bigint + t.ord, t.event_id::uuid, 'message_appended', e.message_id, e.content_hash, e.payload, t.data
            from rows from (
                   json_array_elements_text(${JSON.stringify(inherited.map((r) => r.event_seq))}::json),
                   json_array_elements_text(${JSON.stringify(inherited.map(() => newEventId()))}::json),
                   json_array_elements(${`[${datas.join(',')}]`}::json)
                 ) with ordinality as t(src_seq, event_id, data, ord)
            join turnlog.events e on e.session_id = ${parent}::uuid and e.seq = t.src_seq::bigint
           order by t.ord`.execute(db)
        await sql`update turnlog.sessions set version = ${next + inherited.length}, updated_at = now() where session_id = ${child}`.execute(db)
      }
      return child
    })
  }

  /**
   * Recomputes (or, with `verify`, only checks) inline projections, in batches of sessions (at most
   * 200 sessions and, beyond the first one, 5,000 events), two batches in flight on Postgres. Payloads
   * are never read: the projection depends on ids, seqs, types and event data only.
   *
   * - `verify: true`: per batch, one statement reads every session's event metadata and projection
   *   rows in one snapshot, and the TypeScript fold is compared with them. Nothing is locked or written.
   * - otherwise one transaction per batch: lock the batch's session rows (in id order, as a redaction
   *   does, so they never deadlock), read log and projection (drift is reported against what was
   *   there), recompute every session's projection with `turnlog.rebuild_sessions` (what replaying the
   *   log through `turnlog.project_event` gives; rows already equal to it are not rewritten), and compare
   *   the rows it returns with the fold before committing. A projection that still differs throws
   *   `CORRUPT_LOG` and its batch rolls back (batches before it, and the one in flight beside it, stay
   *   committed). `rewritten` counts every session recomputed, drifted or not.
   *
   * Memory is bounded by two batches' event metadata (or the largest session's, when that alone is
   * larger); each batch holds its sessions' row locks for one transaction (~10–50 ms at 5,000 events).
   * A log the fold cannot read throws `CORRUPT_LOG` naming the session. See docs/performance.md.
   */
  @traced('rebuild', spanAttributes.rebuild)
  async rebuild(options: RebuildOptions = {}): Promise<RebuildResult> {
    this.#assertOpen()
    options = checkOptions(options, 'rebuild options')
    if (options.verify !== undefined && typeof options.verify !== 'boolean') throw new TurnlogError('INVALID_INPUT', 'rebuild: verify must be a boolean')
    if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
      throw new TurnlogError('INVALID_INPUT', 'rebuild: onProgress must be a function')
    }
    const verify = options.verify === true
    let single: SessionId | null = null
    let total = 1
    if (options.sessionId !== undefined) {
      single = parseSessionId(options.sessionId)
      await this.getSession(single)
    } else {
      const { rows } = await this.#run((db) => sql<{ n: string | number }>`select count(*) as n from turnlog.sessions`.execute(db))
      total = Number(rows[0]?.n ?? 0)
    }
    // two batches in flight: while Postgres works on one, this process folds the other
    const concurrency = this.#init.flavor === 'postgres' && this.#init.inTransaction !== true && single === null ? 2 : 1
    type Outcome = { ok: true; ids: SessionId[]; drift: ProjectionDrift[] } | { ok: false; error: unknown }
    const inFlight: Promise<Outcome>[] = []
    const drift: ProjectionDrift[] = []
    let rewritten = 0
    let done = 0
    let after: SessionId | null = null
    let exhausted = false
    try {
      for (;;) {
        while (!exhausted && inFlight.length < concurrency) {
          const ids: SessionId[] = single !== null ? [single] : await this.#rebuildPage(after)
          exhausted = single !== null || ids.length === 0
          if (ids.length === 0) break
          after = ids[ids.length - 1] ?? null
          const batch = verify ? this.#verifyBatch(ids) : this.#rebuildBatch(ids)
          inFlight.push(batch.then((b) => ({ ok: true as const, ...b }), (error: unknown) => ({ ok: false as const, error })))
        }
        const next = inFlight.shift()
        if (next === undefined) break
        const outcome = await next
        if (!outcome.ok) throw outcome.error
        drift.push(...outcome.drift)
        if (!verify) rewritten += outcome.ids.length
        for (const id of outcome.ids) {
          done++
          options.onProgress?.({ done, total, sessionId: id })
        }
      }
    } finally {
      // never leave a batch running (or its failure unobserved) behind a throw
      await Promise.all(inFlight)
    }
    return { sessions: done, drift, rewritten }
  }

  /** Most sessions in one rebuild batch. */
  static readonly #REBUILD_SESSIONS = 200
  /** Events in one rebuild batch before its last session: bounds its memory and how long it holds locks. */
  static readonly #REBUILD_EVENTS = 5000
  /**
   * Stands in for every payload in the rebuild's fold: the live list, each message's current revision
   * and its partial flag follow from ids, seqs, types and event data only, so rebuild never reads
   * payloads, by far the bulk of the log.
   */
  static readonly #NO_PAYLOAD: object = Object.freeze({ role: 'user', content: '' })

  /**
   * The next rebuild batch: the sessions after `after` in id order, at most 200, and only while the
   * ones before the last hold fewer than 5,000 events (always at least one session when any is left).
   */
  async #rebuildPage(after: SessionId | null): Promise<SessionId[]> {
    const { rows } = await this.#run((db) =>
      sql<{ session_id: string }>`
        select c.session_id from (
          select s.session_id, sum(s.version) over (order by s.session_id) - s.version as before
            from (select s.session_id, s.version from turnlog.sessions s
                   where (${after}::uuid is null or s.session_id > ${after}::uuid)
                   order by s.session_id limit ${PostgresStore.#REBUILD_SESSIONS}) s) c
         where c.before < ${PostgresStore.#REBUILD_EVENTS}
         order by c.session_id`.execute(db),
    )
    return rows.map((r) => r.session_id as SessionId)
  }

  /**
   * One statement, so one snapshot: each session of `ids` that exists (in id order), with its events'
   * metadata in seq order (payloads stand in as `#NO_PAYLOAD`) and its projection rows in position order.
   */
  async #readBatch(db: Kysely<unknown>, ids: readonly SessionId[]): Promise<{ id: SessionId; events: StoredEvent[]; live: { message_id: string; event_seq: number; partial: boolean }[] }[]> {
    // per session one row, its events and projection rows as JSON arrays: far cheaper to receive than a row each
    const { rows } = await sql<{ session_id: string; events: [number, string, string | null, unknown][] | null; live: [string, number, boolean][] | null }>`
      select r.session_id, r.events, r.live
        from turnlog.rebuild_read(array(select value::uuid from json_array_elements_text(${JSON.stringify(ids)}::json))) r`.execute(db)
    return rows.map((r) => {
      const id = r.session_id as SessionId
      // what the fold reads; event ids, hashes and timestamps do not decide the live list
      const events = (r.events ?? []).map(
        ([seq, type, messageId, data]) =>
          ({ sessionId: id, seq, eventId: '', type, messageId, contentHash: '', payload: PostgresStore.#NO_PAYLOAD, data: data ?? {}, recordedAt: '', hash: '' }) as unknown as StoredEvent,
      )
      return { id, events, live: PostgresStore.#projectionRows(r.live) }
    })
  }

  /** Projection rows from `[message_id, event_seq, partial]` JSON arrays. */
  static #projectionRows(live: readonly (readonly [string, number, boolean])[] | null): { message_id: string; event_seq: number; partial: boolean }[] {
    return (live ?? []).map(([message_id, event_seq, partial]) => ({ message_id, event_seq, partial }))
  }

  async #verifyBatch(ids: readonly SessionId[]): Promise<{ ids: SessionId[]; drift: ProjectionDrift[] }> {
    const sessions = await this.#run((db) => this.#readBatch(db, ids))
    const drift: ProjectionDrift[] = []
    for (const s of sessions) {
      const found = this.#driftOf(s.id, this.#foldForRebuild(s.id, s.events), s.live)
      if (found) drift.push(found)
    }
    return { ids: sessions.map((s) => s.id), drift }
  }

  async #rebuildBatch(ids: readonly SessionId[]): Promise<{ ids: SessionId[]; drift: ProjectionDrift[] }> {
    return this.#tx(async (db) => {
      // lock, then read: the read's snapshot comes after every writer of these sessions is done
      const idsJson = JSON.stringify(ids)
      await sql`
        select s.session_id from turnlog.sessions s
         where s.session_id = any (array(select value::uuid from json_array_elements_text(${idsJson}::json)))
         order by s.session_id for update of s`.execute(db)
      const sessions = await this.#readBatch(db, ids)
      if (sessions.length === 0) return { ids: [], drift: [] }
      const drift: ProjectionDrift[] = []
      const folds: [SessionId, SessionState][] = []
      for (const s of sessions) {
        const state = this.#foldForRebuild(s.id, s.events)
        folds.push([s.id, state])
        const found = this.#driftOf(s.id, state, s.live)
        if (found) drift.push(found)
      }
      // recompute (migration 0004); it returns every session's rows in position order
      const { rows } = await sql<{ session_id: string; live: [string, number, boolean][] | null }>`
        select r.session_id, r.live
          from turnlog.rebuild_sessions(array(select value::uuid from json_array_elements_text(${JSON.stringify(sessions.map((s) => s.id))}::json))) r`.execute(db)
      const rebuilt = new Map(rows.map((r) => [r.session_id, PostgresStore.#projectionRows(r.live)]))
      // the verification: the recomputed projection equals the fold, or the batch rolls back
      for (const [id, state] of folds) {
        const still = this.#driftOf(id, state, rebuilt.get(id) ?? [])
        if (still) {
          throw new TurnlogError('CORRUPT_LOG', `rebuilt projection of ${id} still differs from the fold of its log: ${still.explanation}`, {
            details: { sessionId: id },
          })
        }
      }
      return { ids: sessions.map((s) => s.id), drift }
    })
  }

  /** The fold of one session's events; a log it cannot read is `CORRUPT_LOG`, not a TypeError. */
  #foldForRebuild(id: SessionId, events: readonly StoredEvent[]): SessionState {
    try {
      return foldSession(events)
    } catch (error) {
      // a malformed event (written around the store)
      throw new TurnlogError('CORRUPT_LOG', `the log of session ${id} cannot be folded: ${error instanceof Error ? error.message : String(error)}`, {
        details: { sessionId: id },
        cause: error,
      })
    }
  }

  /** Compares a session's projection rows (in position order) with the fold of its log; null when they agree. */
  #driftOf(id: SessionId, state: SessionState, live: readonly { message_id: string; event_seq: number; partial: boolean }[]): ProjectionDrift | null {
    const expected = state.live
    const actual = live.map((r) => r.message_id as MessageId)
    const sameOrder = expected.length === actual.length && expected.every((m, i) => m === actual[i])
    if (!sameOrder) {
      return { sessionId: id, expected, actual, explanation: `live list differs: fold has ${expected.length} message(s), projection ${actual.length}` }
    }
    for (const r of live) {
      const rec = state.messages.get(r.message_id as MessageId)
      const current = rec?.revisions[rec.revisions.length - 1]
      if (!rec || current?.seq !== r.event_seq || rec.partial !== r.partial) {
        return { sessionId: id, expected, actual, explanation: `message ${r.message_id} points at the wrong revision or status` }
      }
    }
    return null
  }

  @traced('redact', spanAttributes.redact)
  async redact(sessionId: string, messageId: string, options: RedactOptions = {}): Promise<RedactResult> {
    this.#assertOpen()
    const id = parseSessionId(sessionId)
    const mid = parseMessageId(messageId)
    if (typeof options !== 'object' || options === null) throw new TurnlogError('INVALID_INPUT', 'redact options must be an object')
    options = copyOf(options, 'redact options')
    if (options.reason !== undefined) checkSafeText(options.reason, 'reason')
    const result = await this.#redactRetrying(() => this.#tx(async (db) => {
      await this.#lock(db, id)
      // every session of the tenant holding the message, locked, forks committed meanwhile included: a
      // fork copies only under its parent's lock, so what is read below is every copy there will be
      await sql`select turnlog.lock_message_sessions(${id}::uuid, ${mid}::uuid)`.execute(db)
      // what turnlog.redact_message scrubs: the unscrubbed content events and the conflict evidence of
      // the message in every session of this session's tenant; it checks that this is exactly the set
      const sameTenant = sql`(select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from
                               (select t.tenant_id from turnlog.sessions t where t.session_id = ${id}))`
      const events = await sql<{ session_id: string; seq: string | number; payload: ChatMessage }>`
        select e.session_id::text, e.seq, e.payload from turnlog.events e
         where e.message_id = ${mid} and e.content_hash is not null and e.payload_digest is null
           and (e.data->>'redacted') is null and e.session_id in ${sameTenant}`.execute(db)
      const conflicts = await sql<{ session_id: string; conflict_id: string; incoming_payload: ChatMessage }>`
        select c.session_id::text, c.conflict_id::text, c.incoming_payload from turnlog.conflicts c
         where c.message_id = ${mid} and c.session_id in ${sameTenant}`.execute(db)
      // placeholders go apart from the keys: they may keep pairing ids with NUL or lone surrogates, which
      // Postgres JSON operators refuse (the function only ever splits them with json_array_elements)
      const targets = events.rows.map((r) => ({ sessionId: r.session_id, seq: Number(r.seq) }))
      const placeholders = `[${events.rows.map((r) => JSON.stringify(redactedPayload(r.payload))).join(',')}]`
      const evidence = conflicts.rows.map((r) => ({ sessionId: r.session_id, conflictId: r.conflict_id }))
      const evidencePlaceholders = `[${conflicts.rows.map((r) => JSON.stringify(redactedPayload(r.incoming_payload))).join(',')}]`
      const eventIds = Object.fromEntries([...new Set([id as string, ...targets.map((t) => t.sessionId)])].map((s) => [s, newEventId()]))
      try {
        const { rows } = await sql<{ session_id: string; version: string | number; scrubbed: number }>`
          select session_id::text, version, scrubbed
            from turnlog.redact_message(${id}::uuid, ${mid}::uuid, ${JSON.stringify(targets)}::json, ${placeholders}::json,
                                        ${JSON.stringify(evidence)}::json, ${evidencePlaceholders}::json,
                                        ${JSON.stringify(eventIds)}::json, ${options.reason === undefined ? null : JSON.stringify(options.reason)}::json)`.execute(db)
        return rows.map((r) => ({ sessionId: r.session_id as SessionId, version: Number(r.version), scrubbed: Number(r.scrubbed) }))
      } catch (error) {
        if (sqlState(error) === 'TLU01') {
          throw new TurnlogError('UNKNOWN_MESSAGE', `message ${mid} is not in session ${id}`, { details: { sessionId: id, messageId: mid }, cause: error })
        }
        throw error
      }
    }))
    if (this.#init.inTransaction !== true) for (const s of result) this.#known.setVersion(s.sessionId, s.version)
    const own = result.find((s) => s.sessionId === id)
    if (!own) throw new TurnlogError('DB_ERROR', 'redact_message did not report the session')
    return { version: own.version, sessions: result }
  }

  /**
   * Runs a redaction transaction again (at most 5 times) when it lost a race: a deadlock between two
   * redactions locking overlapping sessions (40P01), or targets changed under it (40001). A redaction is
   * idempotent, so a retry scrubs only what is still unscrubbed. Inside a caller's transaction the error
   * goes to the caller (the transaction is aborted).
   */
  async #redactRetrying<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run()
      } catch (error) {
        const state = sqlState((error as { cause?: unknown } | null)?.cause) ?? sqlState(error)
        if (attempt >= 5 || this.#init.inTransaction === true || (state !== '40P01' && state !== '40001')) throw error
      }
    }
  }

  @traced('conflicts', spanAttributes.conflicts)
  async conflicts(sessionId: string): Promise<readonly ConflictRecord[]> {
    this.#assertOpen()
    const id = parseSessionId(sessionId)
    return this.#run(async (db) => {
      const { rows } = await sql<{
        message_id: string
        reason: ConflictRecord['reason']
        stored_hash: string | null
        incoming_hash: string
        other_session_id: string | null
        incoming_payload: ChatMessage
        detected_at: Date | string
      }>`
        select message_id::text, reason, nullif(encode(stored_hash, 'hex'), '') as stored_hash,
               encode(incoming_hash, 'hex') as incoming_hash, other_session_id::text, incoming_payload, detected_at
          from turnlog.conflicts where session_id = ${id} order by detected_at, conflict_id`.execute(db)
      return rows.map((r) => ({
        sessionId: id,
        messageId: r.message_id as MessageId,
        reason: r.reason,
        storedHash: r.stored_hash,
        incomingHash: r.incoming_hash,
        otherSessionId: r.other_session_id as SessionId | null,
        incomingPayload: r.incoming_payload,
        detectedAt: iso(r.detected_at),
      }))
    })
  }

  // --- subscriptions (docs/subscriptions.md) -----------------------------------------------------

  readonly #subscriptions = new Set<Subscription>()

  /**
   * Starts a catch-up subscription: `handler` gets every event of the log after the named durable
   * checkpoint, in transaction order (no event is ever skipped, whatever order transactions commit
   * in), at least once; the checkpoint moves after the handler succeeds. One consumer per name runs at
   * a time across processes. `close()` stops the store's subscriptions. On PGlite it polls within this
   * process. Throws `INVALID_INPUT` for bad arguments; later failures end the subscription.
   */
  subscribe(config: SubscriptionConfig, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    this.#assertOpen()
    if (this.#init.inTransaction === true) {
      throw new TurnlogError('INVALID_INPUT', 'subscribe on the store itself, not on a transaction-bound store')
    }
    const subscription = subscribe(
      { db: this.#init.db, flavor: this.#init.flavor, dedicatedConnection: this.#init.dedicatedConnection },
      config,
      handler,
      options,
    )
    this.#subscriptions.add(subscription)
    void subscription.done.catch(() => {}).finally(() => this.#subscriptions.delete(subscription))
    return subscription
  }

  /**
   * The oldest open transaction that holds subscription readers back (it has a transaction id), or
   * null: its `ageMs` is how long events committed since it began may wait. Cluster-wide by default.
   */
  @traced('oldestOpenTransaction')
  async oldestOpenTransaction(options: OldestOpenTransactionOptions = {}): Promise<OpenTransactionInfo | null> {
    this.#assertOpen()
    options = checkOptions(options, 'oldestOpenTransaction options')
    if (options.scope !== undefined && options.scope !== 'cluster' && options.scope !== 'database') {
      throw new TurnlogError('INVALID_INPUT', `scope must be 'cluster' or 'database', got ${preview(options.scope)}`)
    }
    return this.#run((db) => oldestOpenTransaction(db, options))
  }
}

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
  readonly expected: number | null
  readonly batch: readonly Message[]
  readonly hashes: readonly string[]
  /** JSON texts, one per message. */
  readonly payloads: readonly string[]
  /** JSON texts of the events' data, one per message. */
  readonly data: readonly string[]
  readonly eventIds: readonly string[]
}

/** A row of `append_messages` / `append_batches`. */
interface AppendRow {
  version: string | number
  appended: string[] | string
  duplicates: string[] | string
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


/** A batch after {@link PostgresStore}'s checks: one entry per id, in first-occurrence order. */
interface CheckedBatch {
  readonly unique: Message[]
  /** Content hashes of `unique`, index for index. */
  readonly hashes: readonly string[]
  /** Ids listed more than once with identical content (one message, stored once). */
  readonly repeated: ReadonlySet<MessageId>
  /** The first id listed with two different contents, or null. */
  readonly mismatch: { readonly first: Message; readonly firstHash: string; readonly other: Message; readonly otherHash: string } | null
}

function inBatchConflictError(sessionId: SessionId | null, mismatch: NonNullable<CheckedBatch['mismatch']>, conflicts: unknown): TurnlogError {
  const messageId = mismatch.other.id
  return new TurnlogError(
    'MESSAGE_CONFLICT',
    `message ${messageId} is listed twice with different content (${mismatch.firstHash.slice(0, 12)}…, ${mismatch.otherHash.slice(0, 12)}…); nothing of the batch was written`,
    {
      details: {
        sessionId,
        messageId,
        reason: 'content_mismatch',
        storedHash: mismatch.firstHash,
        incomingHash: mismatch.otherHash,
        otherSessionId: null,
        inBatch: true,
        ...(conflicts === null ? {} : { conflicts }),
      },
    },
  )
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

/** A rewind's result with its `applyTo` (the caller's list cut at the first retracted message). */
function rewound(result: Omit<RewindResult, 'applyTo'>): RewindResult {
  return withApplyTo(result, (live) => applyRewind(live, result))
}

/** A compaction's result with its `applyTo` (covered out, summary in the first one's place). */
function compacted(covered: readonly MessageId[], summary: readonly Message[], result: Omit<CompactResult, 'applyTo'>): CompactResult {
  return withApplyTo(result, (live) => applyCompact(live, { covered, summary }))
}

/**
 * A revise/finalize result with the message as it now stands (what `load` returns for it: the stored
 * envelope, `payload`, the status) and its `applyTo`.
 */
function revised(mid: MessageId, payload: unknown, partial: boolean, envelope: () => LiveRow['data'], result: Omit<ReviseResult, 'applyTo' | 'message'>): ReviseResult {
  const data = envelope()
  const message = restoreMessage({
    id: mid,
    payload,
    createdAt: String(data['createdAt']),
    externalId: typeof data['externalId'] === 'string' ? data['externalId'] : undefined,
    externalScope: typeof data['externalScope'] === 'string' ? data['externalScope'] : undefined,
    status: partial ? 'partial' : undefined,
  })
  const full = { ...result, message }
  return withApplyTo(full, (live) => applyRevision(live, full))
}
