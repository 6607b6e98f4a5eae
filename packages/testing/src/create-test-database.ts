import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { migrateByOpening } from './migrate-by-opening.js'
import { TEST_ADMIN_URL_ENV } from './resolve-test-server.js'

/**
 * Env var (set by the Jest global setup): the name of this run's migrated template database, made by the
 * first `createTestDatabase({ migrated: true })` of the run and dropped by the global teardown.
 */
export const PG_TEMPLATE_ENV = 'TURNLOG_TEST_PG_TEMPLATE_DB'

/** Per-call options of {@link createTestDatabase}. */
export interface CreateTestDatabaseOptions {
  /**
   * Connection string of a role that may create databases. Defaults to `TURNLOG_TEST_ADMIN_URL`, which
   * the Jest global setup sets from `resolveTestServer()`.
   */
  readonly adminUrl?: string
  /** Called with the new database's connection string once it exists, e.g. to run the store migrations. */
  readonly migrate?: (connectionString: string) => Promise<void>
  /**
   * The database starts with the store's schema: a copy of this run's migrated template (see
   * {@link PG_TEMPLATE_ENV}), which holds what `migrateByOpening` leaves on an empty database. Without the
   * template (outside the Jest global setup, or another `adminUrl`) the new database is migrated by
   * `migrateByOpening`. `migrate`, if given, runs after. For a test that needs a migrated database, not one
   * of how migrations run (those start from an empty one).
   */
  readonly migrated?: boolean
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
  // The migrated template is not connectable either (ALLOW_CONNECTIONS false, see migratedTemplate).
  // A commit does not wait for its WAL flush in a test database (`synchronous_commit` off for every session
  // in it, as the private cluster of resolveTestServer has server-wide): the tests check what a commit
  // makes visible, never that it survives a server crash, and the flush cost ≈ 3.5 ms of a ≈ 4 ms commit on
  // the shared development server (500 one-row commits: 2.1 s with it, 0.4 s without, 2026-12-07).
  const templateName = options.migrated === true && options.adminUrl === undefined ? process.env[PG_TEMPLATE_ENV] : undefined
  const template = templateName === undefined || templateName === '' ? undefined : await migratedTemplate(adminUrl, templateName)
  await withAdmin(adminUrl, async (admin) => {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE ${template === undefined ? 'template0' : `"${template}"`} ENCODING 'UTF8'`)
    await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`)
  })
  let dropping: Promise<void> | undefined
  const drop = (): Promise<void> => (dropping ??= dropDatabase(adminUrl, name))
  try {
    if (options.migrated === true && template === undefined) await migrateByOpening(connectionString)
    await options.migrate?.(connectionString)
  } catch (error) {
    await drop().catch(() => {})
    throw error
  }
  return { name, connectionString, drop }
}

let template: Promise<string> | undefined

/**
 * This run's migrated template database, `name`, made on first use: one worker (the holder of an advisory
 * lock on the admin database) creates `<name>_partial` from `template0`, migrates it by opening a store,
 * closes it, forbids connections to it and renames it `name`; the others wait on the lock and find it.
 * A copy costs what a creation from `template0` does; the migrations it saves took 0.1-0.3 s in a warm
 * process on the idle two-core machine (a test file ≈ 0.1 s faster alone, 2026-12-07), more under a full
 * run's load. Not connectable, so concurrent copies never collide.
 */
function migratedTemplate(adminUrl: string, name: string): Promise<string> {
  template ??= withAdmin(adminUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name])
    try {
      const exists = async (db: string): Promise<boolean> =>
        (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db])).rowCount === 1
      if (await exists(name)) return name
      const partial = `${name}_partial`
      // one an earlier attempt left (a failed migration, a worker that died half-way)
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [partial])
      await admin.query(`DROP DATABASE IF EXISTS "${partial}"`)
      await admin.query(`CREATE DATABASE "${partial}" TEMPLATE template0 ENCODING 'UTF8'`)
      const url = new URL(adminUrl)
      url.pathname = `/${partial}`
      await migrateByOpening(url.toString())
      await admin.query(`ALTER DATABASE "${partial}" WITH ALLOW_CONNECTIONS false`)
      // the closed store's sessions may still be ending: terminate them, then rename
      for (let attempt = 1; ; attempt++) {
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [partial])
        try {
          await admin.query(`ALTER DATABASE "${partial}" RENAME TO "${name}"`)
          return name
        } catch (error) {
          if (attempt >= 20 || (error as { code?: unknown }).code !== '55006') throw error // 55006: object in use
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name])
    }
  })
  template.catch(() => (template = undefined)) // a failure is not remembered: the next call tries again
  return template
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
