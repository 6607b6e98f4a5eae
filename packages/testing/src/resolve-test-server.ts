/**
 * Finds a Postgres server the tests may create databases on, starting a private throwaway cluster when
 * none is available.
 *
 * This file must not import other files of this package: Jest loads its global setup (and, through it,
 * this file) with plain Node plus a ts-jest require hook, where `./x.js` specifiers do not map to the
 * `./x.ts` sources. That is why the private cluster lives here and not in a file of its own.
 * @packageDocumentation
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

/** Env var: a server URL to use instead of probing (its role must be allowed to create databases). */
export const TEST_DATABASE_URL_ENV = 'TURNLOG_TEST_DATABASE_URL'
/** Env var: set to `1` to skip the env URL and the local server and always start a private cluster. */
export const FORCE_PRIVATE_CLUSTER_ENV = 'TURNLOG_TEST_FORCE_PRIVATE_CLUSTER'
/** Env var: the admin URL the Jest global setup resolved, read by `createTestDatabase` in the workers. */
export const TEST_ADMIN_URL_ENV = 'TURNLOG_TEST_ADMIN_URL'

/** Where Debian installs PostgreSQL: one `<version>/bin` directory per installed major version. */
export const DEBIAN_POSTGRES_LIB_DIR = '/usr/lib/postgresql'

/** The local server candidates, tried in order: trust auth on the default port. */
const LOCAL_CANDIDATES = ['postgres', 'root'].flatMap((user) =>
  ['postgres', 'test'].map((db) => `postgresql://${user}@127.0.0.1:5432/${db}`),
)
const PROBE_TIMEOUT_MS = 2_000
const COMMAND_TIMEOUT_MS = 60_000

const NO_SERVER_MESSAGE = [
  'turnlog tests need a Postgres server, and none was found:',
  `  - ${TEST_DATABASE_URL_ENV} is not set,`,
  '  - nothing accepts trust-auth connections on 127.0.0.1:5432 (users postgres/root, databases postgres/test),',
  `  - no PostgreSQL binaries under ${DEBIAN_POSTGRES_LIB_DIR}/<version>/bin to start a private cluster with.`,
  'Start one with `docker compose up -d` (the docker-compose.yml at the repository root), or set',
  `${TEST_DATABASE_URL_ENV}=postgresql://user:password@host:port/db for a role that may create databases.`,
].join('\n')

/** How {@link resolveTestServer} found its server. */
export type TestServerSource = 'env' | 'local' | 'private-cluster'

/** A Postgres server for tests, reached through a role that may create databases. */
export interface TestServer {
  /** Connection string of a maintenance database on the server, for a role that may create databases. */
  readonly adminUrl: string
  /** How the server was found. */
  readonly source: TestServerSource
  /** Stops what {@link resolveTestServer} started (a private cluster); a no-op otherwise. Idempotent. */
  stop(): Promise<void>
}

/** Per-call options of {@link resolveTestServer}. */
export interface ResolveTestServerOptions {
  /** Environment to read `TURNLOG_TEST_*` from; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Skip the env URL and the local server; defaults to `env.TURNLOG_TEST_FORCE_PRIVATE_CLUSTER === '1'`. */
  readonly forcePrivateCluster?: boolean
  /** Where to look for `<version>/bin/{initdb,pg_ctl}`; defaults to {@link DEBIAN_POSTGRES_LIB_DIR}. */
  readonly postgresLibDir?: string
}

/**
 * Resolves the server tests run on, in this order: `TURNLOG_TEST_DATABASE_URL`; a trust-auth server on
 * 127.0.0.1:5432; a private throwaway cluster started from the newest PostgreSQL binaries installed.
 * Throws an error that says how to provide a server when none of these works.
 */
export async function resolveTestServer(options: ResolveTestServerOptions = {}): Promise<TestServer> {
  const env = options.env ?? process.env
  const forcePrivate = options.forcePrivateCluster ?? env[FORCE_PRIVATE_CLUSTER_ENV] === '1'
  const noop = async (): Promise<void> => {}
  if (!forcePrivate) {
    const fromEnv = env[TEST_DATABASE_URL_ENV]
    if (fromEnv !== undefined && fromEnv !== '') {
      const problem = await probe(fromEnv, 10_000)
      if (problem !== undefined) throw new Error(`${TEST_DATABASE_URL_ENV} is not usable for tests: ${problem}`)
      return { adminUrl: fromEnv, source: 'env', stop: noop }
    }
    for (const url of LOCAL_CANDIDATES) {
      const problem = await probe(url, PROBE_TIMEOUT_MS)
      if (problem === undefined) return { adminUrl: url, source: 'local', stop: noop }
      if (problem === NOT_LISTENING) break // no server at all: the other users and databases won't help
    }
  }
  const binDir = findPostgresBinDir(options.postgresLibDir)
  if (binDir === undefined) throw new Error(NO_SERVER_MESSAGE)
  const cluster = await startPrivateCluster({ binDir })
  return { adminUrl: cluster.adminUrl, source: 'private-cluster', stop: cluster.stop }
}

const NOT_LISTENING = 'no server is listening'

/** Connects and checks the role may create databases; returns what is wrong, or undefined when usable. */
async function probe(url: string, timeoutMs: number): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  client.on('error', () => {}) // a dropped idle connection must not crash the process
  try {
    await client.connect()
    const { rows } = await client.query<{ ok: boolean }>('SELECT rolsuper OR rolcreatedb AS ok FROM pg_roles WHERE rolname = current_user')
    return rows[0]?.ok === true ? undefined : 'its role may not create databases (needs CREATEDB)'
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'ECONNREFUSED' || /timeout/i.test(String(error))) return NOT_LISTENING
    return error instanceof Error ? error.message : String(error)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Returns `<libDir>/<version>/bin` for the highest installed version that has both `initdb` and
 * `pg_ctl`, or undefined when there is none.
 */
export function findPostgresBinDir(libDir: string = DEBIAN_POSTGRES_LIB_DIR): string | undefined {
  let versions: string[]
  try {
    versions = readdirSync(libDir)
  } catch {
    return undefined
  }
  return versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(libDir, v, 'bin'))
    .find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')))
}

/** Per-call options of {@link startPrivateCluster}. */
export interface StartPrivateClusterOptions {
  /** Directory holding `initdb` and `pg_ctl`; defaults to {@link findPostgresBinDir}. */
  readonly binDir?: string
  /**
   * Server settings to start with besides the defaults (each a `-c name=value`), for a test that needs
   * what the run's server may not allow, e.g. `{ max_prepared_transactions: 4 }` for two-phase commit.
   * Names are setting names; values are numbers, booleans or plain words (letters, digits and `_ . , : / -`):
   * anything else throws before a cluster is made.
   */
  readonly settings?: Readonly<Record<string, string | number | boolean>>
  /**
   * A command prefix the server's start runs under, e.g. `['nsenter', '-t', pid, '-n', '--']` to start
   * it in another network namespace (a test that cuts the network between a client and the server);
   * `initdb` and the stop are not wrapped. Default none.
   */
  readonly startUnder?: readonly string[]
}

/** A throwaway Postgres cluster in a temp directory, listening on 127.0.0.1 with trust auth. */
export interface PrivateCluster {
  /** Connection string of the `postgres` database as the `postgres` superuser. */
  readonly adminUrl: string
  /** The TCP port on 127.0.0.1. */
  readonly port: number
  /** The temp directory holding the data directory, the socket and the server log. */
  readonly dir: string
  /** Stops the server (`pg_ctl stop -m immediate`) and deletes {@link PrivateCluster.dir}. Idempotent. */
  stop(): Promise<void>
}

const run = promisify(execFile)

/**
 * Starts a private cluster: `initdb` into a fresh temp directory, then `pg_ctl start` on a free port
 * with `fsync=off`. When running as root (initdb refuses root) the binaries run as the `postgres` OS
 * user. A detached watchdog stops the cluster and deletes the directory if this process dies before
 * calling `stop()`, so a crashed or killed test run leaks nothing.
 */
export async function startPrivateCluster(options: StartPrivateClusterOptions = {}): Promise<PrivateCluster> {
  const binDir = options.binDir ?? findPostgresBinDir()
  if (binDir === undefined) throw new Error(NO_SERVER_MESSAGE)
  const extraSettings = Object.entries(options.settings ?? {}).map(([name, value]) => {
    // pg_ctl hands `-o` to a shell: only names and values that need no quoting
    if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name) || !/^[A-Za-z0-9_.,:/-]+$/.test(String(value))) {
      throw new Error(`startPrivateCluster: setting ${JSON.stringify(name)} = ${JSON.stringify(value)} is not a plain name and value`)
    }
    return ` -c ${name}=${String(value)}`
  })
  const asRoot = process.getuid?.() === 0
  // Commands run with the temp dir as cwd: the postgres user may not be able to read ours.
  const argv = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(binDir, tool), ...args]] : [join(binDir, tool), args]

  const dir = await mkdtemp(join(tmpdir(), 'turnlog-pg-'))
  const dataDir = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  const exec = async (tool: string, args: string[], under: readonly string[] = []): Promise<void> => {
    const [plainFile, plainArgs] = argv(tool, args)
    const [file, fileArgs] =
      under.length === 0 ? [plainFile, plainArgs] : [under[0] as string, [...under.slice(1), plainFile, ...plainArgs]]
    await run(file, fileArgs, { cwd: dir, timeout: COMMAND_TIMEOUT_MS })
  }
  let watchdog: number | undefined
  const stopArgs = ['stop', '-D', dataDir, '-m', 'immediate', '-w']
  let stopping: Promise<void> | undefined
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (watchdog !== undefined) killGroup(watchdog)
      try {
        if (existsSync(join(dataDir, 'postmaster.pid'))) await exec('pg_ctl', stopArgs)
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })())

  try {
    watchdog = startWatchdog(argv('pg_ctl', stopArgs), dir)
    if (asRoot) {
      const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }))
      await chown(dir, id('-u'), id('-g'))
    }
    await exec('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'])
    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      const settings = `-p ${port} -k '${dir}' -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off${extraSettings.join('')}`
      try {
        await exec('pg_ctl', ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '30', '-o', settings], options.startUnder)
        return { adminUrl: `postgresql://postgres@127.0.0.1:${port}/postgres`, port, dir, stop }
      } catch (error) {
        // another process may have taken the port between freePort() and the server binding it
        if (attempt < 3 && /already in use/i.test(readLog(logFile))) continue
        throw error
      }
    }
  } catch (error) {
    const log = readLog(logFile)
    await stop().catch(() => {})
    throw new Error(`could not start a private Postgres cluster with ${binDir}${log ? `; server log:\n${log}` : ''}`, {
      cause: error,
    })
  }
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n').trim()
  } catch {
    return ''
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('could not find a free port')
  return address.port
}

/** Starts a detached shell that stops the cluster and deletes `dir` once this process is gone. */
function startWatchdog([file, args]: [string, string[]], dir: string): number | undefined {
  const quote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`,
    `${[file, ...args].map(quote).join(' ')} >/dev/null 2>&1`,
    `rm -rf ${quote(dir)}`,
  ].join('\n')
  const child = spawn('sh', ['-c', script], { cwd: dir, detached: true, stdio: 'ignore' })
  child.on('error', () => {}) // without a watchdog, stop() still cleans up on every normal path
  child.unref()
  return child.pid
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}
