import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { DATA_DIR_LOCK_PREFIX } from '@turnlog/postgres/internal'
import { CliError } from './cli-error.js'
import type { DatabaseTarget } from './resolve-database.js'

/** How long the CLI waits for a Postgres connection before it reports the server unreachable. */
export const CONNECT_TIMEOUT_MS = 10_000

/** Options of {@link openCliStore}. */
export interface OpenCliStoreOptions {
  /** Run pending migrations first (default true; see `CommandContext.withStore` for the CLI's policy). */
  readonly migrate?: boolean
  /**
   * May start a new embedded database (migrate, import, demo). Otherwise an embedded directory that
   * does not exist or is empty is `DATABASE_NOT_FOUND` and nothing is created. Default false.
   */
  readonly create?: boolean
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
    if (options.create !== true && !holdsDatabase(target.dataDir)) {
      throw new CliError(
        'DATABASE_NOT_FOUND',
        `no turnlog database in ${target.dataDir}${target.source === 'default' ? ' (the default embedded database: no --database-url, --data-dir, TURNLOG_DATABASE_URL or DATABASE_URL given)' : ''}; this command creates none`,
        {
          hint: 'Point at your database with --database-url (or TURNLOG_DATABASE_URL / DATABASE_URL) or --data-dir; or create an embedded one here with `turnlog migrate`, `turnlog import` or `turnlog demo --data-dir <dir>`.',
        },
      )
    }
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

/**
 * True when an embedded data directory exists and holds a database (`PG_VERSION`), or anything besides
 * turnlog's lock files (then the library says what is wrong with it: `DATA_DIR_INVALID`).
 */
function holdsDatabase(dataDir: string): boolean {
  if (!existsSync(dataDir)) return false
  if (existsSync(join(dataDir, 'PG_VERSION'))) return true
  try {
    return readdirSync(dataDir).some((name) => !name.startsWith(DATA_DIR_LOCK_PREFIX))
  } catch {
    return true // not a directory, unreadable: the library names the problem
  }
}
