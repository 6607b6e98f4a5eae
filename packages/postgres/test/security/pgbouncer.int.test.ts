import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { createMessage, type MessageId, type SessionId } from '@turnlog/core'
import { migrateToLatest, openStore, type PostgresStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { Kysely, PostgresAdapter, PostgresDialect } from 'kysely'
import pg from 'pg'
import { runSql, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

/**
 * The store through PgBouncer in transaction pooling mode (Debian's `pgbouncer`, a private instance on
 * a free loopback port in front of the test server). Outside CI the suite is skipped, loudly, when the
 * binary is missing; in CI (CI=true) it fails: .ci/run installs it.
 */

const BINARIES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']
const binary = BINARIES.find((b) => existsSync(b))
const inCi = process.env['CI'] === 'true'
if (binary === undefined && !inCi) console.warn('pgbouncer.int.test.ts: SKIPPED, no pgbouncer binary (apt-get install pgbouncer)')
const describeWithPgBouncer = binary !== undefined || inCi ? describe : describe.skip

/** The kysely migration lock id (kysely's PostgresAdapter): a session-level advisory lock. */
const KYSELY_MIGRATION_LOCK = 3853314791062309107n

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

interface PgBouncer {
  readonly port: number
  /** `url` with host and port replaced by the bouncer's. */
  via(url: string): string
  stop(): Promise<void>
}

async function startPgBouncer(serverUrl: string, users: readonly { name: string; password: string }[]): Promise<PgBouncer> {
  if (binary === undefined) throw new Error('pgbouncer is not installed: CI must install it (.ci/run runs apt-get install pgbouncer)')
  const server = new URL(serverUrl)
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-pgbouncer-'))
  const userlist = users.map((u) => `"${u.name}" "${u.password}"`).join('\n')
  await writeFile(join(dir, 'userlist.txt'), `${userlist}\n`)
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 3',
      'max_client_conn = 200',
      'server_reset_query =',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  )
  // pgbouncer refuses to run as root: drop to the postgres user then
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { uid, gid } = await idOf('postgres')
    for (const f of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(join(dir, f), uid, gid)
  }
  const child: ChildProcess = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: 'ignore' })
  const via = (url: string): string => {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(port)
    return u.toString()
  }
  // ready when it answers
  for (let i = 0; ; i++) {
    try {
      await runSql(via(serverUrl), 'select 1')
      break
    } catch (error) {
      if (i > 100 || child.exitCode !== null) {
        const log = await readFile(join(dir, 'pgbouncer.log'), 'utf8').catch(() => '(no log)')
        child.kill('SIGKILL')
        throw new Error(`pgbouncer did not start: ${String(error)}\n${log}`, { cause: error })
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return {
    port,
    via,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r))
        child.kill('SIGTERM')
        await exited
      }
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function idOf(user: string): Promise<{ uid: number; gid: number }> {
  const passwd = await readFile('/etc/passwd', 'utf8')
  const line = passwd.split('\n').find((l) => l.startsWith(`${user}:`))
  const [, , uid, gid] = line?.split(':') ?? []
  if (uid === undefined || gid === undefined) throw new Error(`no user ${user}`)
  return { uid: Number(uid), gid: Number(gid) }
}

describeWithPgBouncer('PgBouncer in transaction pooling mode', () => {
  let db: TestDatabase
  let bouncer: PgBouncer
  let roleA: LoginRole, roleB: LoginRole
  let storeA: PostgresStore, storeB: PostgresStore

  // migrations run on a direct connection (see the test below for why): the bed's database is migrated
  useTestBed(async (bed) => {
    db = bed.db
    roleA = await bed.role('pba', { groups: ['turnlog_writer'], tenant: 'a' })
    roleB = await bed.role('pbb', { groups: ['turnlog_writer'], tenant: 'b' })
    const admin = new URL(db.connectionString)
    bouncer = await startPgBouncer(db.connectionString, [
      roleA,
      roleB,
      { name: decodeURIComponent(admin.username), password: decodeURIComponent(admin.password) },
    ])
    bed.defer(() => bouncer.stop())
    // more clients than server connections: pgbouncer multiplexes transactions
    storeA = await bed.open(bouncer.via(roleA.connectionString), { pool: { max: 8 } })
    storeB = await bed.open(bouncer.via(roleB.connectionString))
  })

  it('append, flush, load, compact, fork, rewind, revise and redact work under concurrency, tenants stay apart', async () => {
    // given 8 sessions driven at once through 3 server connections
    const run = async (n: number): Promise<{ sid: SessionId; child: SessionId; expected: string[] }> => {
      const sid = await storeA.createSession({ tenantId: 'a' })
      const m = Array.from({ length: 6 }, (_, i) => createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `s${n} m${i}` }))
      await storeA.append(sid, m.slice(0, 2))
      await storeA.flush(sid, m.slice(0, 4))
      await storeA.flush(sid, m.slice(0, 4)) // cached: no round trip
      await storeA.append(sid, m.slice(4))
      await storeA.revise(sid, m[1]?.id ?? '', { role: 'assistant', content: `s${n} m1 revised` })
      await storeA.compact(sid, {
        covered: [m[0]?.id ?? '', m[1]?.id ?? ''],
        summary: createMessage({ role: 'system', content: `s${n} summary` }),
      })
      const child = await storeA.fork(sid, { at: m[3]?.id ?? '' })
      await storeA.rewind(sid, { from: m[5]?.id as MessageId })
      await storeA.redact(sid, m[2]?.id ?? '')
      return { sid, child, expected: [`s${n} summary`, '[redacted]', `s${n} m3`, `s${n} m4`] }
    }
    // when
    const results = await Promise.all(Array.from({ length: 8 }, (_, n) => run(n)))
    // then every session is right, verifies, and has no projection drift (checked on a direct connection)
    const direct = await openStore({ connectionString: roleA.connectionString, migrate: false, pool: { max: 1 } })
    try {
      for (const r of results) {
        expect((await storeA.load(r.sid)).messages.map((m) => m.payload.content)).toEqual(r.expected)
        expect((await direct.load(r.child)).messages.map((m) => m.payload.content)).toEqual(r.expected.slice(0, 3))
        expect((await verifyChain(direct, r.sid)).ok).toBe(true)
        await expect(storeB.load(r.sid)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
      }
      expect((await direct.rebuild({ verify: true })).drift).toEqual([])
    } finally {
      await direct.close()
    }
    const servers = await runSql<{ n: string }>(
      db.connectionString,
      `select count(*) as n from pg_stat_activity where datname = current_database() and usename = $1`,
      [roleA.name],
    )
    expect(Number(servers[0]?.n)).toBeLessThanOrEqual(3)
  })

  it("runs migrations only on a direct connection: kysely's session-level migration lock leaks through transaction pooling", async () => {
    // given a client whose statements pgbouncer may give to different server connections
    const pool = new pg.Pool({ connectionString: bouncer.via(db.connectionString), max: 1 })
    pool.on('error', () => {})
    const viaBouncer = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) })
    const other = new pg.Client({ connectionString: bouncer.via(db.connectionString) })
    other.on('error', () => {})
    await other.connect()
    const adapter = new PostgresAdapter()
    const options = { lockTable: 'schema_migrations_lock', lockRowId: 'migration_lock', lockTableSchema: 'turnlog' }
    const held = async (): Promise<number> => {
      const rows = await runSql<{ n: string }>(
        db.connectionString,
        `
        select count(*) as n from pg_locks
         where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())
           and ((classid::bigint << 32) | objid::bigint) = $1`,
        [KYSELY_MIGRATION_LOCK.toString()],
      )
      return Number(rows[0]?.n)
    }
    try {
      // when the migrator takes its lock, another client's transaction takes that server connection,
      // and the migrator releases the lock (on whichever server connection it gets now)
      await adapter.acquireMigrationLock(viaBouncer, options)
      await other.query('begin')
      await other.query('select 1')
      await adapter.releaseMigrationLock(viaBouncer, options)
      // then the lock is still held, by a pooled connection no client owns: the next migration through
      // the bouncer would wait on it (kysely's lock timeout is one hour)
      expect(await held()).toBe(1)
      await other.query('commit')
      expect(await held()).toBe(1)
      const [probe] = await runSql<{ free: boolean }>(db.connectionString, 'select pg_try_advisory_lock($1::bigint) as free', [
        KYSELY_MIGRATION_LOCK.toString(),
      ])
      expect(probe?.free).toBe(false) // even a direct migration would now wait
      // an operator frees it by ending the server connection that holds it; migrations then run direct
      await runSql(
        db.connectionString,
        `
        select pg_terminate_backend(pid) from pg_locks
         where locktype = 'advisory' and granted and ((classid::bigint << 32) | objid::bigint) = $1
           and database = (select oid from pg_database where datname = current_database())`,
        [KYSELY_MIGRATION_LOCK.toString()],
      )
      const direct = new Kysely<unknown>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.connectionString, max: 1 }) }),
      })
      try {
        expect((await migrateToLatest(direct)).applied).toEqual([])
        expect(await held()).toBe(0)
      } finally {
        await direct.destroy()
      }
    } finally {
      await other.end().catch(() => {})
      await viaBouncer.destroy()
    }
  })
})
