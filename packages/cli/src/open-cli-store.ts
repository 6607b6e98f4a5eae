import { openStore, type PostgresStore } from '@turnlog/postgres'
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js'
import type { DatabaseTarget } from './resolve-database.js'

/** How long the CLI waits for a Postgres connection before it reports the server unreachable. */
export const CONNECT_TIMEOUT_MS = 10_000

/** Options of {@link openCliStore}. */
export interface OpenCliStoreOptions {
  /** Run pending migrations first (default true; see `CommandContext.withStore` for the CLI's policy). */
  readonly migrate?: boolean
}

/** An open store and what must be released with it. */
export interface CliStore {
  readonly store: PostgresStore
  /** Embedded only: a lock left by a process that no longer runs (killed) was taken over. */
  readonly tookOverStaleLock: boolean
  /** Closes the store, then releases the data-directory lock. Idempotent. */
  close(): Promise<void>
}

/**
 * Opens the store a command runs against: Postgres through a small pool with a connect timeout, or the
 * embedded PGlite database under its data-directory lock.
 */
export async function openCliStore(target: DatabaseTarget, options: OpenCliStoreOptions = {}): Promise<CliStore> {
  const migrate = options.migrate ?? true
  if (target.kind === 'postgres') {
    const store = await openStore({
      connectionString: target.connectionString,
      migrate,
      pool: { max: 4, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'turnlog-cli' },
    })
    let closing: Promise<void> | undefined
    return { store, tookOverStaleLock: false, close: () => (closing ??= store.close()) }
  }
  const lock: DataDirLock = acquireDataDirLock(target.dataDir)
  let store: PostgresStore
  try {
    store = await openStore({ embedded: true, dataDir: target.dataDir, migrate })
  } catch (error) {
    lock.release()
    throw error
  }
  let closing: Promise<void> | undefined
  return {
    store,
    tookOverStaleLock: lock.tookOverStale,
    close: () =>
      (closing ??= store.close().finally(() => {
        lock.release()
      })),
  }
}
