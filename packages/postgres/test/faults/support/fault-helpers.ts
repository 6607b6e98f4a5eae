/**
 * Helpers shared by the fault tests: deterministic ids and randomness, backend termination, event
 * counting. Everything talks to the real server; nothing is mocked.
 * @packageDocumentation
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { audit, severityAtLeast, type Finding } from '@turnlog/audit'
import { ERROR_CODES, isTurnlogError, type ErrorCode, type MessageId, type SessionStore, type TurnlogError } from '@turnlog/core'
import { TEST_ADMIN_URL_ENV, startTcpProxy, type TcpProxy } from '@turnlog/testing'

/** A UUID (version 4 layout) derived from `seed` and `index`: the same inputs give the same id in every process. */
export function seededUuid(seed: string, index: number): string {
  const h = createHash('sha256').update(`${seed}:${index}`).digest('hex')
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** A small seeded PRNG (mulberry32): `next()` in [0, 1). Printed seeds make a run reproducible. */
export function seededRandom(seed: number): { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T } {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => {
      const item = items[Math.floor(next() * items.length)]
      if (item === undefined) throw new Error('pick from an empty list')
      return item
    },
  }
}

/** The admin URL the Jest global setup resolved. */
export function adminUrl(): string {
  const url = process.env[TEST_ADMIN_URL_ENV]
  if (url === undefined || url === '') throw new Error(`${TEST_ADMIN_URL_ENV} is not set: run through jest`)
  return url
}

/** Host and port of a connection string (for the proxy's target). */
export function hostAndPort(connectionString: string): { host: string; port: number } {
  const url = new URL(connectionString)
  return { host: url.hostname, port: Number(url.port === '' ? 5432 : url.port) }
}

/** A loopback fault proxy in front of the server of `connectionString` (`proxy.url(…)` goes through it). */
export function startProxyTo(connectionString: string): Promise<TcpProxy> {
  const { host, port } = hostAndPort(connectionString)
  return startTcpProxy({ targetHost: host, targetPort: port })
}

/**
 * A connection to the server's maintenance database (not the test database, so it never kills
 * itself), used to terminate the test database's backends like an operator or a failover would.
 */
export class BackendKiller {
  readonly #client: pg.Client
  readonly #database: string
  terminated = 0

  private constructor(client: pg.Client, database: string) {
    this.#client = client
    this.#database = database
  }

  /** Connects to the admin database; `database` is the test database whose backends die. */
  static async connect(database: string): Promise<BackendKiller> {
    const client = new pg.Client({ connectionString: adminUrl(), connectionTimeoutMillis: 10_000 })
    client.on('error', () => {})
    await client.connect()
    return new BackendKiller(client, database)
  }

  /** Terminates every backend of the test database (only that database's); returns how many died. */
  async all(): Promise<number> {
    const { rows } = await this.#client.query<{ n: string }>(
      `select count(*) filter (where pg_terminate_backend(pid)) as n
         from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
      [this.#database],
    )
    const n = Number(rows[0]?.n ?? 0)
    this.terminated += n
    return n
  }

  /** Terminates one backend of the test database chosen at random (`pick` in [0,1)); returns 0 or 1. */
  async one(pick: number): Promise<number> {
    const { rows } = await this.#client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() order by pid`,
      [this.#database],
    )
    const victim = rows[Math.floor(pick * rows.length)]
    if (victim === undefined) return 0
    const result = await this.#client.query<{ ok: boolean }>('select pg_terminate_backend($1) as ok', [victim.pid])
    const n = result.rows[0]?.ok === true ? 1 : 0
    this.terminated += n
    return n
  }

  async close(): Promise<void> {
    await this.#client.end().catch(() => {})
  }
}

/** True for a {@link TurnlogError} whose code is in the registry. */
export function isRegistryError(error: unknown): error is TurnlogError {
  return isTurnlogError(error) && Object.hasOwn(ERROR_CODES, error.code)
}

/** Narrows an unknown error to a TurnlogError with `code` or throws a readable failure. */
export function expectCode(error: unknown, code: ErrorCode): TurnlogError {
  if (!isTurnlogError(error, code)) {
    const got = isTurnlogError(error) ? `${error.code}: ${error.message}` : String(error)
    throw new Error(`expected ${code}, got ${got}`, { cause: error })
  }
  return error
}

/** How many `message_appended` events each message id has in a session's log, in first-seen order. */
export async function appendCounts(store: SessionStore, sessionId: string): Promise<Map<MessageId, number>> {
  const counts = new Map<MessageId, number>()
  for await (const e of store.events(sessionId)) {
    if (e.type === 'message_appended') counts.set(e.messageId, (counts.get(e.messageId) ?? 0) + 1)
  }
  return counts
}

/** The built dist of a workspace package (child processes run against it); throws when not built. */
export function builtEntry(pkg: 'postgres' | 'core'): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const entry = join(here, '..', '..', '..', '..', pkg, 'dist', 'index.js')
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: run \`npx -y pnpm@12.4.2 build\` first (the root \`pnpm test\` builds before jest)`)
  }
  return entry
}

/**
 * Runs `audit(store, { all: true })` and returns its findings of severity `error` or `critical`, as
 * `kind session: explanation` lines (empty when the audit is clean), and the number of findings of
 * lower severity (warnings such as an unanswered tool call left by a rewind are legitimate here).
 */
export async function auditProblems(store: SessionStore): Promise<{ problems: string[]; warnings: string; sessions: number }> {
  const report = await audit(store, { all: true })
  const bad = report.findings.filter((f: Finding) => severityAtLeast(f.severity, 'error'))
  const minor = new Map<string, number>()
  for (const f of report.findings) if (!severityAtLeast(f.severity, 'error')) minor.set(f.kind, (minor.get(f.kind) ?? 0) + 1)
  return {
    problems: bad.map((f) => `${f.kind} ${f.sessionId}: ${f.explanation}`),
    warnings: minor.size === 0 ? 'none' : [...minor].map(([k, n]) => `${k} ${n}`).join(', '),
    sessions: report.sessionsAudited,
  }
}

/** Sleeps. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
