import { openStore, type PostgresStore } from '@turnlog/postgres'
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
  /** Closes the store (which releases the data-directory lock). Idempotent. */
  close(): Promise<void>
}

/**
 * Opens the store a command runs against: Postgres through a small pool with a connect timeout, or the
 * embedded PGlite database (the library takes its data-directory lock: `DATA_DIR_LOCKED` when another
 * live process holds it).
 */
export async function openCliStore(target: DatabaseTarget, options: OpenCliStoreOptions = {}): Promise<CliStore> {
  const migrate = options.migrate ?? true
  let store: PostgresStore
  let tookOverStaleLock = false
  if (target.kind === 'postgres') {
    store = await openStore({
      connectionString: target.connectionString,
      migrate,
      pool: { max: 4, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'turnlog-cli' },
    })
  } else {
    store = await openStore({
      embedded: true,
      dataDir: target.dataDir,
      migrate,
      onLockTakenOver: () => {
        tookOverStaleLock = true
      },
    })
  }
  let closing: Promise<void> | undefined
  return { store, tookOverStaleLock, close: () => (closing ??= store.close()) }
}
