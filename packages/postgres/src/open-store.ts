import { TurnlogError } from '@turnlog/core'
import { Kysely, PostgresDialect } from 'kysely'
import type { Pool, PoolConfig } from 'pg'
import type { PGlite } from '@electric-sql/pglite'
import { callbackQueryPool } from './callback-query-pool.js'
import { checkDataDir, ensureDataDir, pgliteStartFailed } from './check-data-dir.js'
import { acquireDataDirLock, type DataDirLockHolder } from './data-dir-lock.js'
import { mapDatabaseError } from './map-database-error.js'
import { migrateToLatest } from './migrate-to-latest.js'
import { parseOpenStoreConfig } from './open-store-config.js'
import { PGliteDialect } from './pglite-dialect.js'
import { registerEmbeddedDatabase } from './subscriptions/subscription-lock.js'
import { loadOpenTelemetry } from './telemetry/load-open-telemetry.js'
import { PostgresStore, type PostgresStoreSettings } from './postgres-store.js'
import {
  dedicatedConnectionFromConfig,
  dedicatedConnectionFromPool,
  type DedicatedConnectionFactory,
} from './subscriptions/dedicated-connection.js'

/** Options every way of opening a store accepts. */
export interface OpenStoreCommonConfig extends PostgresStoreSettings {
  /** Run pending migrations before returning (default true). */
  readonly migrate?: boolean
}

/** Connect with a connection string; the store owns (and closes) its pool. */
export interface ConnectionStringConfig extends OpenStoreCommonConfig {
  readonly connectionString: string
  /** Extra `pg.Pool` settings (max, statement_timeout, connectionTimeoutMillis, …). */
  readonly pool?: Omit<PoolConfig, 'connectionString'>
  /**
   * True when the connection string reaches Postgres itself, not a pooler in transaction mode: the
   * store's connections then start with `-c jit=off -c max_parallel_workers_per_gather=0` (added to
   * `pool.options`) and its hot statements (`load`, the appends) are named prepared statements, planned
   * once per connection. Default false: a transaction-mode pooler (PgBouncer before 1.21) refuses the
   * `options` startup parameter unless told to ignore it, and cannot keep prepared statements. See
   * docs/operations.md.
   */
  readonly directConnection?: boolean
}

/** Use a `pg.Pool` the caller owns; `close()` leaves it open. */
export interface PoolConfigInput extends OpenStoreCommonConfig {
  readonly pool: Pool
}

/**
 * Use the caller's Kysely instance (any Postgres dialect); `close()` leaves it open.
 * @typeParam DB - the caller's database type (its own tables; turnlog's are not in it, nor need be).
 */
export interface KyselyConfig<DB = unknown> extends OpenStoreCommonConfig {
  readonly kysely: Kysely<DB>
}

/** Embedded PGlite: in memory, or persisted in `dataDir`. */
export interface EmbeddedConfig extends OpenStoreCommonConfig {
  readonly embedded: true
  /**
   * A directory for the database files; in memory when absent. Created when it does not exist. The
   * store holds the directory's lock (`turnlog.lock.<n>` files in it) until `close()`: a second opener,
   * in this process or another, gets `DATA_DIR_LOCKED`; a lock whose process no longer runs is taken
   * over. A path that is not a directory, a non-empty directory without a database, or a damaged
   * database gives `DATA_DIR_INVALID`.
   */
  readonly dataDir?: string
  /** Called when the lock of `dataDir` was taken over from a process that no longer runs (killed, crashed). */
  readonly onLockTakenOver?: (previous: DataDirLockHolder) => void
}

/**
 * Use the caller's PGlite instance (an embedded store on a database the caller opened: with its own
 * extensions, file system or data, or loaded from a dump with `loadDataDir`); `close()` leaves it open.
 * The caller owns what `{ embedded: true, dataDir }` would guard: two processes must not open one
 * directory (no `turnlog.lock` is taken).
 * @example
 * ```ts
 * const pglite = await PGlite.create()
 * const store = await openStore({ pglite })
 * // …
 * await store.close()
 * await pglite.close()
 * ```
 */
export interface PGliteConfig extends OpenStoreCommonConfig {
  readonly pglite: PGliteInstance
}

/**
 * What {@link PGliteConfig} takes: a PGlite instance (`@electric-sql/pglite` 0.5), by some of the
 * methods turnlog calls (`transaction` too, checked when the store opens). Declared by shape rather than as PGlite's class, whose declarations need the
 * Emscripten types: an application compiling with `skipLibCheck: false` and without
 * `@types/emscripten` compiles turnlog's.
 */
export interface PGliteInstance {
  /** Resolves once the database is ready (`PGlite.create()` returns it ready; `new PGlite()` does not). */
  readonly waitReady: Promise<void>
  /** Runs one statement with parameters. */
  query(query: string, params?: unknown[]): Promise<unknown>
  /** Runs statements without parameters. */
  exec(query: string): Promise<unknown>
  /** Closes the database (never called by the store). */
  close(): Promise<void>
}

/**
 * What {@link openStore} accepts: exactly one way to reach the database.
 * @typeParam DB - the database type of a caller's Kysely instance (`{ kysely }`).
 */
export type OpenStoreConfig<DB = unknown> = ConnectionStringConfig | PoolConfigInput | KyselyConfig<DB> | EmbeddedConfig | PGliteConfig

async function connect(
  config: OpenStoreConfig,
): Promise<{ db: Kysely<unknown>; flavor: 'postgres' | 'pglite'; close: () => Promise<void>; ownPool?: Pool }> {
  if ('embedded' in config) {
    const { PGlite } = await import('@electric-sql/pglite')
    if (config.dataDir === undefined) {
      const pglite = new PGlite()
      await pglite.waitReady
      const db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite, closeOnDestroy: true }) })
      return { db, flavor: 'pglite', close: () => db.destroy() }
    }
    const dataDir = config.dataDir
    ensureDataDir(dataDir)
    // before PGlite touches a file: two processes on one directory lose acknowledged writes
    const lock = acquireDataDirLock(dataDir)
    try {
      if (lock.tookOverFrom !== null) config.onLockTakenOver?.(lock.tookOverFrom)
      checkDataDir(dataDir)
      let pglite: InstanceType<typeof PGlite>
      try {
        pglite = new PGlite(dataDir)
        await pglite.waitReady
      } catch (error) {
        throw pgliteStartFailed(dataDir, error)
      }
      const db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite, closeOnDestroy: true }) })
      return { db, flavor: 'pglite', close: () => db.destroy().finally(() => lock.release()) }
    } catch (error) {
      lock.release()
      throw error
    }
  }
  if ('pglite' in config) {
    // the caller's instance: ready before the first statement (`new PGlite()` returns before it is)
    await config.pglite.waitReady
    // a closed instance refuses every statement: say so, not MIGRATION_FAILED "before any migration"
    if ((config.pglite as { closed?: unknown }).closed === true) {
      throw new TurnlogError('INVALID_INPUT', 'config.pglite is closed: pass an open PGlite instance', {
        details: { field: 'config.pglite' },
      })
    }
    // the caller's instance is a PGlite (checked by shape by parseOpenStoreConfig)
    const db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite: config.pglite as unknown as PGlite, closeOnDestroy: false }) })
    // the stores on one instance share its subscription names (one consumer per name on the database)
    registerEmbeddedDatabase(db, config.pglite)
    return { db, flavor: 'pglite', close: () => db.destroy() }
  }
  if ('kysely' in config) return { db: config.kysely, flavor: 'postgres', close: async () => {} }
  if ('connectionString' in config) {
    const pg = await import('pg')
    const direct = config.directConnection === true
    const pool = new pg.default.Pool({ max: 10, ...config.pool, ...directOptions(config), connectionString: config.connectionString })
    // an idle client's error (server restart) must not crash the process; the next query reports it
    pool.on('error', () => {})
    // nor may a checked-out client's: node-postgres emits 'error' on a client whose connection dies
    // (even while a query is active, which also fails), and pg-pool listens only while it is idle. An
    // unheard 'error' event is an uncaught exception: a terminated backend would kill the process.
    pool.on('connect', (client) => client.on('error', () => {}))
    // Kysely's queries through pg's callback form (callback-query-pool.ts: the promise form kept results alive)
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: callbackQueryPool(pool) }) })
    return { db, flavor: 'postgres', close: () => db.destroy(), ...(direct ? { ownPool: pool } : {}) }
  }
  if ('pool' in config) {
    // the caller owns the pool: never end it. Its clients answer Kysely through pg's callback form, as the
    // store's own pool's do (the type promises a pg.Pool: `connect()`, `query(text, values, callback)`, `release()`)
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: { ...callbackQueryPool(config.pool), end: async () => {} } }),
    })
    return { db, flavor: 'postgres', close: async () => {} }
  }
  throw new TurnlogError(
    'INVALID_INPUT',
    'openStore needs one of { connectionString }, { pool }, { kysely }, { embedded: true } or { pglite }',
    { details: { field: 'config' } },
  )
}

/**
 * Opens a turnlog store: connects (Postgres, or embedded PGlite), runs pending migrations (unless
 * `migrate: false`) and returns the {@link PostgresStore}. Throws `MIGRATION_FAILED` or a mapped
 * database error.
 * @example
 * ```ts
 * const store = await openStore({ connectionString: process.env.DATABASE_URL ?? '' })
 * // or, with no server: await openStore({ embedded: true })
 * const session = await store.createSession()
 * await store.append(session, [createMessage({ role: 'user', content: 'hi' })])
 * await store.close()
 * ```
 */
export async function openStore<DB = unknown>(input: OpenStoreConfig<DB>): Promise<PostgresStore> {
  // turnlog's statements name their own tables: the caller's database type does not matter to them
  const config = parseOpenStoreConfig(input as OpenStoreConfig)
  const { db, flavor, close, ownPool } = await connect(config)
  try {
    if (config.migrate !== false) await migrateWithRetry(db)
  } catch (error) {
    await close().catch(() => {})
    throw mapDatabaseError(error)
  }
  // the optional peer, imported once: a store's first call already knows whether anything listens
  if (config.telemetry !== false) await loadOpenTelemetry()
  try {
    // the store checks its settings (groupCommit): a refusal must not leak the pool
    return new PostgresStore({
      db,
      root: db,
      flavor,
      onClose: close,
      ...subscriptionConnection(config),
      ...(config.maxMessageBytes === undefined ? {} : { maxMessageBytes: config.maxMessageBytes }),
      ...(config.maxBatchBytes === undefined ? {} : { maxBatchBytes: config.maxBatchBytes }),
      ...(config.knownSessions === undefined ? {} : { knownSessions: config.knownSessions }),
      ...(config.groupCommit === undefined ? {} : { groupCommit: config.groupCommit }),
      ...(config.telemetry === undefined ? {} : { telemetry: config.telemetry }),
      ...(ownPool === undefined ? {} : { ownPool }),
    })
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
}

/** How often {@link openStore} tries its migration check when the database fails transiently, and the first pause. */
const MIGRATE_ATTEMPTS = 5
const MIGRATE_FIRST_DELAY_MS = 100

/**
 * True for a failure after which the same migration check may succeed: a transient database error
 * (terminated backend, failover, too many connections), also when the migrator reported it as a failed
 * migration (the migration's transaction was rolled back with its connection).
 */
function transientMigrationFailure(error: unknown): boolean {
  const mapped = mapDatabaseError(error)
  if (mapped.code === 'DB_TRANSIENT') return true
  return mapped.code === 'MIGRATION_FAILED' && mapDatabaseError(mapped.cause).code === 'DB_TRANSIENT'
}

/**
 * Runs the migration check, retrying transient failures: a service restarting during a database
 * failover opens its store first. At most {@link MIGRATE_ATTEMPTS} tries, pausing 100, 200, 400 and
 * 800 ms (1.5 s in all); the migrator runs in one transaction under its lock, so a try cut short left
 * nothing and a retry after an ambiguous commit finds the work done. Any other failure, or the last
 * transient one, is thrown.
 */
async function migrateWithRetry(db: Kysely<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrateToLatest(db)
      return
    } catch (error) {
      if (attempt >= MIGRATE_ATTEMPTS || !transientMigrationFailure(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, MIGRATE_FIRST_DELAY_MS * 2 ** (attempt - 1)))
    }
  }
}

/**
 * The startup options of every connection a `directConnection` store opens (its pool's and each
 * subscription consumer's): its short statements without JIT and parallel workers, after the caller's
 * `pool.options`. Before the first ANALYZE the planner guessed large tables and chose a parallel plan
 * for a 100-row read (7-9 ms instead of 0.5 ms); the functions set the same, and the prepared load
 * needs it (see load). Nothing without `directConnection`: a pooler may refuse the parameter.
 */
function directOptions(config: ConnectionStringConfig): { options?: string } {
  if (config.directConnection !== true) return {}
  return {
    options: [config.pool?.options, '-c jit=off -c max_parallel_workers_per_gather=0'].filter((o) => o !== undefined && o !== '').join(' '),
  }
}

/** Where a subscription consumer gets its own session: new clients from the same settings, or the caller's pool. */
function subscriptionConnection(config: OpenStoreConfig): { dedicatedConnection?: DedicatedConnectionFactory } {
  if ('embedded' in config || 'pglite' in config || 'kysely' in config) return {}
  if ('connectionString' in config) {
    return {
      dedicatedConnection: dedicatedConnectionFromConfig({
        ...config.pool,
        ...directOptions(config),
        connectionString: config.connectionString,
      }),
    }
  }
  return { dedicatedConnection: dedicatedConnectionFromPool(config.pool) }
}
