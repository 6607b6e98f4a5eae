/**
 * Helpers of the security tests: login roles made for one test database (roles are cluster-wide, so
 * each name carries the database's name and is dropped in afterAll), and one-off SQL.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { TEST_ADMIN_URL_ENV, type TestDatabase } from '@turnlog/testing'

/** The superuser URL of the test server (set by the Jest global setup). */
export function adminUrl(): string {
  const url = process.env[TEST_ADMIN_URL_ENV]
  if (url === undefined || url === '') throw new Error(`${TEST_ADMIN_URL_ENV} is not set: run the tests through jest`)
  return url
}

/** A database login role made by {@link createLoginRole}. */
export interface LoginRole {
  readonly name: string
  readonly password: string
  /** Connection string of the test database as this role. */
  readonly connectionString: string
}

/** Options of {@link createLoginRole}. */
export interface LoginRoleOptions {
  /** Group roles granted to it. */
  readonly groups: readonly ('turnlog_writer' | 'turnlog_reader' | 'turnlog_owner')[]
  /** Maps it to this tenant in turnlog.tenant_roles. */
  readonly tenant?: string
}

/** Runs one statement on `url` with a short-lived client. */
export async function runSql<R extends Record<string, unknown> = Record<string, unknown>>(
  url: string,
  text: string,
  params: readonly unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<R>(text, params as unknown[])).rows
  } finally {
    await client.end().catch(() => {})
  }
}

/** Runs `text` as `role` (its own login) and returns the error's SQLSTATE, or 'ok'. */
export async function sqlStateOf(url: string, text: string, params: readonly unknown[] = []): Promise<string> {
  try {
    await runSql(url, text, params)
    return 'ok'
  } catch (error) {
    return String((error as { code?: unknown }).code)
  }
}

/** Creates a LOGIN role `<prefix>_<database name>` (unique per test database), grants `groups`, maps its tenant. */
export async function createLoginRole(db: TestDatabase, prefix: string, options: LoginRoleOptions): Promise<LoginRole> {
  const name = `${prefix}_${db.name}`
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad role name ${name}`)
  const password = randomBytes(12).toString('hex')
  await runSql(db.connectionString, `create role "${name}" login password '${password}'`)
  for (const group of options.groups) await runSql(db.connectionString, `grant ${group} to "${name}"`)
  if (options.tenant !== undefined) {
    await runSql(db.connectionString, 'insert into turnlog.tenant_roles (role_name, tenant_id) values ($1, $2)', [name, options.tenant])
  }
  const url = new URL(db.connectionString)
  url.username = name
  url.password = password
  return { name, password, connectionString: url.toString() }
}

/** Drops login roles (call after the test database is dropped, and after their pools are closed). */
export async function dropLoginRoles(roles: readonly LoginRole[]): Promise<void> {
  for (const r of roles) await runSql(adminUrl(), `drop role if exists "${r.name}"`)
}
