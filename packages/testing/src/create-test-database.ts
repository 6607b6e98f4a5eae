import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { TEST_ADMIN_URL_ENV } from './resolve-test-server.js'

/** Per-call options of {@link createTestDatabase}. */
export interface CreateTestDatabaseOptions {
  /**
   * Connection string of a role that may create databases. Defaults to `TURNLOG_TEST_ADMIN_URL`, which
   * the Jest global setup sets from `resolveTestServer()`.
   */
  readonly adminUrl?: string
  /** Called with the new database's connection string once it exists, e.g. to run the store migrations. */
  readonly migrate?: (connectionString: string) => Promise<void>
}

/** A fresh database that belongs to one test file. */
export interface TestDatabase {
  /** The database name, `turnlog_test_<random>`. */
  readonly name: string
  /** Connection string of the database, as the admin role. */
  readonly connectionString: string
  /** Terminates the connections still open to the database and drops it. Idempotent. */
  drop(): Promise<void>
}

/**
 * Creates an empty, uniquely named database on the test server and runs `options.migrate` on it.
 * Call it in `beforeAll` and `drop()` in `afterAll`. If `migrate` fails, the database is dropped and
 * the error rethrown.
 */
export async function createTestDatabase(options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = options.adminUrl ?? process.env[TEST_ADMIN_URL_ENV]
  if (adminUrl === undefined || adminUrl === '') {
    throw new Error(
      `createTestDatabase: no server. ${TEST_ADMIN_URL_ENV} is set by the Jest global setup ` +
        '(packages/testing/src/jest-global-setup.ts); outside Jest pass { adminUrl }, e.g. from resolveTestServer().',
    )
  }
  const name = `turnlog_test_${randomBytes(6).toString('hex')}`
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const connectionString = url.toString()

  // template0: nobody can be connected to it, unlike template1, so concurrent creations never collide.
  // A commit does not wait for its WAL flush in a test database (`synchronous_commit` off for every session
  // in it, as the private cluster of resolveTestServer has server-wide): the tests check what a commit
  // makes visible, never that it survives a server crash, and the flush cost ≈ 3.5 ms of a ≈ 4 ms commit on
  // the shared development server (500 one-row commits: 2.1 s with it, 0.4 s without, 2026-12-07).
  await withAdmin(adminUrl, async (admin) => {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`)
    await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`)
  })
  let dropping: Promise<void> | undefined
  const drop = (): Promise<void> => (dropping ??= dropDatabase(adminUrl, name))
  try {
    await options.migrate?.(connectionString)
  } catch (error) {
    await drop().catch(() => {})
    throw error
  }
  return { name, connectionString, drop }
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (admin) => {
    // A pool that was not closed may reconnect between the terminate and the drop: try a few times.
    for (let attempt = 1; ; attempt++) {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}"`)
        return
      } catch (error) {
        if (attempt >= 3 || (error as { code?: unknown }).code !== '55006') throw error // 55006: object in use
      }
    }
  })
}

async function withAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 })
  admin.on('error', () => {}) // errors surface through the awaited calls; an idle drop must not crash
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.end().catch(() => {})
  }
}
