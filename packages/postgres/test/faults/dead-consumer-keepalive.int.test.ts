/**
 * docs/subscriptions.md, "One consumer per name, takeover": when the consumer holding a name vanishes
 * from the network (its host dies, a cable is pulled), its session ends, Postgres releases the lock, and
 * a waiting consumer takes over from the committed checkpoint. Only the server can end that session,
 * and on an idle connection only its TCP keep-alive notices a peer that went silent: before, the
 * consumer turned on the client's keep-alive (which cannot end the server's session) and the server's
 * stayed at the OS default (2 h 11 min on Linux), so the name stayed locked for hours; and once the
 * server had sent the silent consumer a notification, keep-alive stopped until retransmission gave up
 * (≈ 15 min). Now a consumer's session asks the server for a short keep-alive and `tcp_user_timeout`
 * (`CONSUMER_TCP_SETTINGS` of open-consumer-session.ts: about 25 s of silence), each one unless the
 * server, database or role sets that one (it was all or none: a database that set only the keep-alive
 * left a holder with data in flight holding the lock for ≈ 15 min).
 *
 * A real network fault, not a closed socket: the server runs in a network namespace of its own, the
 * holding consumer reaches it over a veth pair, and the test takes the host's end of the pair down, so
 * packets are dropped silently both ways and nothing tells either side. Everything else reaches the
 * server through its Unix socket. Needs root (network namespaces, veth), `unshare`, `nsenter`, `ip`
 * and PostgreSQL binaries under /usr/lib/postgresql/<version>/bin; fails saying what is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore, type SubscribedEvent, type Subscription } from '@turnlog/postgres'
import {
  createTestDatabase,
  findPostgresBinDir,
  migrateByOpening,
  startPrivateCluster,
  type PrivateCluster,
  type TestDatabase,
} from '@turnlog/testing'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { chmod, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { waitFor } from '../support/subscription-support.js'

const run = promisify(execFile)

/** A network namespace holding the server, reached over a veth pair that can be cut and healed. */
interface ServerNamespace {
  /** A process in the namespace (it lives as long as this test process does). */
  readonly pid: number
  /** The host's end of the pair (the client side). */
  readonly hostAddress: string
  /** The namespace's end (the server listens on it). */
  readonly serverAddress: string
  readonly subnet: string
  /** Takes the host's end down: from now on packets are dropped silently both ways. */
  cut(): Promise<void>
  /** Takes it up again. */
  heal(): Promise<void>
  close(): Promise<void>
}

const REQUIREMENTS =
  'dead-consumer-keepalive.int.test.ts cuts a real network link: it needs root (a network namespace and a veth pair), ' +
  '`unshare`, `nsenter` and `ip` (util-linux, iproute2) and PostgreSQL binaries under /usr/lib/postgresql/<version>/bin'

async function startServerNamespace(): Promise<ServerNamespace> {
  if (process.getuid?.() !== 0) throw new Error(`${REQUIREMENTS}; this process is not root`)
  if (findPostgresBinDir() === undefined) throw new Error(`${REQUIREMENTS}; there are no PostgreSQL binaries`)
  try {
    await run('sh', ['-c', 'command -v unshare && command -v nsenter && command -v ip'])
  } catch (error) {
    throw new Error(`${REQUIREMENTS}; one of the tools is missing`, { cause: error })
  }
  // the namespace's first process ends when this process does, so a killed test run leaks nothing
  const holder: ChildProcess = spawn('unshare', ['--net', '--', 'sh', '-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`], {
    stdio: 'ignore',
  })
  const pid = holder.pid
  if (pid === undefined) throw new Error(`${REQUIREMENTS}; unshare did not start`)
  const own = await readlink('/proc/self/ns/net')
  const deadline = Date.now() + 10_000
  while ((await readlink(`/proc/${pid}/ns/net`).catch(() => own)) === own) {
    if (holder.exitCode !== null || Date.now() > deadline) throw new Error(`${REQUIREMENTS}; unshare --net did not make a namespace`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const tag = randomInt(0, 0xffffff).toString(16).padStart(6, '0')
  const hostLink = `tlk${tag}h`
  const serverLink = `tlk${tag}s`
  const base = `10.251.${randomInt(0, 256)}.${4 * randomInt(0, 64)}`
  const octets = base.split('.').map(Number)
  const address = (n: number): string => [...octets.slice(0, 3), octets[3]! + n].join('.')
  const inside = (...args: string[]): Promise<unknown> => run('nsenter', ['-t', String(pid), '-n', '--', ...args])
  const close = async (): Promise<void> => {
    holder.kill('SIGKILL')
    await run('ip', ['link', 'del', hostLink]).catch(() => {}) // gone with the namespace anyway
  }
  try {
    await run('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', serverLink, 'netns', String(pid)])
    await run('ip', ['addr', 'add', `${address(1)}/30`, 'dev', hostLink])
    await run('ip', ['link', 'set', hostLink, 'up'])
    await inside('ip', 'addr', 'add', `${address(2)}/30`, 'dev', serverLink)
    await inside('ip', 'link', 'set', serverLink, 'up')
    await inside('ip', 'link', 'set', 'lo', 'up')
  } catch (error) {
    await close()
    throw new Error(`${REQUIREMENTS}; setting up the veth pair failed`, { cause: error })
  }
  return {
    pid,
    hostAddress: address(1),
    serverAddress: address(2),
    subnet: `${base}/30`,
    cut: async () => void (await run('ip', ['link', 'set', hostLink, 'down'])),
    heal: async () => void (await run('ip', ['link', 'set', hostLink, 'up'])),
    close,
  }
}

let netns: ServerNamespace | undefined
let hbaDir: string | undefined
let cluster: PrivateCluster | undefined
let db: TestDatabase | undefined
/** A store on the server's Unix socket: the side that checks, and the waiting consumers. */
let local: PostgresStore | undefined
/** `db`'s connection string over the veth pair (TCP). */
let overLink: string

beforeAll(async () => {
  netns = await startServerNamespace()
  hbaDir = await mkdtemp(join(tmpdir(), 'turnlog-keepalive-'))
  await chmod(hbaDir, 0o755) // the server may run as the postgres user
  const hba = join(hbaDir, 'pg_hba.conf')
  await writeFile(hba, `local all all trust\nhost all all ${netns.subnet} trust\n`, { mode: 0o644 })
  cluster = await startPrivateCluster({
    settings: { listen_addresses: netns.serverAddress, hba_file: hba },
    startUnder: ['nsenter', '-t', String(netns.pid), '-n', '--'],
  })
  const adminUrl = `postgresql://postgres@localhost:${cluster.port}/postgres?host=${encodeURIComponent(cluster.dir)}`
  db = await createTestDatabase({ adminUrl, migrate: migrateByOpening })
  local = await openStore({ connectionString: db.connectionString, migrate: false })
  const url = new URL(`postgresql://postgres@${netns.serverAddress}:${cluster.port}/${db.name}`)
  overLink = url.toString()
}, 60_000)

afterAll(async () => {
  await netns?.heal().catch(() => {})
  await local?.close()
  await db?.drop()
  await cluster?.stop()
  await netns?.close()
  if (hbaDir !== undefined) await rm(hbaDir, { recursive: true, force: true })
})

const text = (content: string) => createMessage({ role: 'user', content })

/** Subscribes `store` to `name` from the start, recording the text of each message appended to `session`. */
function consume(
  store: PostgresStore,
  name: string,
  session: SessionId,
  options: { pollIntervalMs: number },
): { sub: Subscription; seen: string[] } {
  const seen: string[] = []
  const sub = store.subscribe(
    { name, from: 'start' },
    (event: SubscribedEvent) => {
      if (event.type === 'message_appended' && event.sessionId === session) seen.push(event.payload.content as string)
    },
    { lockRetryMs: 100, ...options },
  )
  return { sub, seen }
}

/** The pid of the session holding `name`'s consumer over the link, once it sits idle (sleeping until its next poll). */
async function idleHolderPid(name: string): Promise<number> {
  let pid: number | undefined
  await waitFor(
    `the holder of ${name} idle`,
    async () => {
      const { rows } = await sql<{ pid: number }>`
        select pid from pg_stat_activity
         where application_name = ${`turnlog subscription ${name}`} and client_addr = ${netns!.hostAddress}::inet and state = 'idle'`.execute(
        local!.db,
      )
      pid = rows[0]?.pid
      return pid !== undefined
    },
    15_000,
  )
  return pid!
}

async function sessionExists(pid: number): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(local!.db)
  return rows.length > 0
}

/**
 * The scenario: a holder over the link delivers two events, a waiter waits on the Unix socket, the
 * link is cut while the holder idles; returns how long the takeover took. Then checks the waiter
 * continues from the committed checkpoint and the lock is the waiter's.
 */
async function takeoverAfterCut(name: string, withinMs: number, appendDuringCut = false): Promise<number> {
  const session = await local!.createSession()
  await local!.append(session, [text('one')])
  await local!.append(session, [text('two')])
  // the holder polls once a minute: it sleeps between polls, so its connection is idle when cut
  const holderStore = await openStore({ connectionString: overLink, migrate: false, pool: { max: 1 } })
  const holder = consume(holderStore, name, session, { pollIntervalMs: 60_000 })
  let waiter: { sub: Subscription; seen: string[] } | undefined
  try {
    await waitFor('the holder to deliver both events', () => holder.seen.length === 2, 15_000, local, [holder.sub])
    const w = consume(local!, name, session, { pollIntervalMs: 100 })
    waiter = w
    await waitFor('the other consumer to wait', () => w.sub.state === 'waiting', 15_000, local, [w.sub])
    const pid = await idleHolderPid(name)

    // when the link to the holder goes silent
    await netns!.cut()
    const cutAt = Date.now()
    // (with appendDuringCut, a commit notifies the holder, whose lease is live: the server's
    // notification to it then waits unacknowledged in the socket)
    if (appendDuringCut) await local!.append(session, [text('three')])

    // then the server ends the holder's session, the lock is released, and the waiter takes over
    await waitFor('the waiter to take over', () => w.sub.state === 'running', withinMs, local, [w.sub, holder.sub])
    const tookMs = Date.now() - cutAt
    process.stdout.write(`[keepalive] ${name}: the waiter took over ${tookMs} ms after the cut\n`)
    expect(await sessionExists(pid)).toBe(false)
    expect(holder.sub.state).toBe('running') // the holder has noticed nothing: it sleeps until its next poll

    // and it continues from the holder's committed checkpoint: only the new event
    if (!appendDuringCut) await local!.append(session, [text('three')])
    await waitFor('the new event', () => w.seen.length === 1, 15_000, local, [w.sub])
    expect(w.seen).toEqual(['three'])
    expect(holder.seen).toEqual(['one', 'two'])
    return tookMs
  } finally {
    // heal first: stopping the holder over a dead link would wait for TCP to give up
    await netns!.heal()
    await waiter?.sub.stop()
    await holder.sub.stop()
    await holderStore.close()
  }
}

describe('a consumer whose network goes silent (a real fault: its link drops every packet)', () => {
  it("loses its lock within a minute with the server's defaults: its session asks for a short keep-alive", async () => {
    // given the server's keep-alive at its default (the OS's: 2 h 11 min), as on a fresh server
    const { rows } = await sql<{ source: string }>`select source from pg_settings where name = 'tcp_keepalives_idle'`.execute(local!.db)
    expect(rows[0]?.source).toBe('default')

    // when / then: see takeoverAfterCut; about 25 s of silence (10 s idle, probes 5 s apart)
    const tookMs = await takeoverAfterCut('silent-holder', 50_000)
    expect(tookMs).toBeGreaterThan(9_000) // keep-alive, not anything sooner, noticed it
  }, 90_000)

  it('loses it as soon when the server had sent it a notification too (unacknowledged data stops keep-alive)', async () => {
    // when / then: a commit right after the cut notifies the holder; tcp_user_timeout (25 s) ends the
    // session where keep-alive waits for retransmission to give up (≈ 15 min)
    await takeoverAfterCut('notified-holder', 50_000, true)
  }, 90_000)

  it('with a keep-alive the database sets, loses it as soon as that says: the setting wins over the consumer default', async () => {
    // given a database whose sessions probe a silent peer after 1 s, twice, 1 s apart, and give up on
    // unacknowledged data after 4 s (tcp_user_timeout: the server may have a reply to the holder's last
    // statement in flight when the link goes; keep-alive waits for it. Without it this case hung for the
    // kernel's retransmission time in 5 of 5 runs on 2026-12-08, the server's socket holding 108 unacked bytes)
    await sql
      .raw(
        `alter database "${db!.name}" set tcp_keepalives_idle = 1; alter database "${db!.name}" set tcp_keepalives_interval = 1; alter database "${db!.name}" set tcp_keepalives_count = 2; alter database "${db!.name}" set tcp_user_timeout = 4000`,
      )
      .execute(local!.db)

    // when / then: the takeover within 8 s, sooner than the consumer default's first probe (10 s)
    const tookMs = await takeoverAfterCut('silent-holder-configured', 8_000)
    expect(tookMs).toBeLessThan(8_000)
  }, 60_000)

  it("with only a keep-alive the database sets, loses it within the consumer's tcp_user_timeout when a notification is pending", async () => {
    // given a database that sets the keep-alive (1 s, 1 s, 2 probes) and not tcp_user_timeout: the
    // consumer keeps that keep-alive and adds its own tcp_user_timeout (25 s); all or none, it set nothing
    // and this case waited for the kernel's retransmission to give up (≈ 15 min)
    await sql
      .raw(
        `alter database "${db!.name}" set tcp_keepalives_idle = 1; alter database "${db!.name}" set tcp_keepalives_interval = 1; alter database "${db!.name}" set tcp_keepalives_count = 2; alter database "${db!.name}" reset tcp_user_timeout`,
      )
      .execute(local!.db)

    // when / then: a commit right after the cut leaves a notification unacknowledged; keep-alive does
    // not probe then, the consumer's tcp_user_timeout ends the session
    const tookMs = await takeoverAfterCut('notified-holder-keepalive-only', 50_000, true)
    expect(tookMs).toBeGreaterThan(9_000) // not the database's keep-alive (≈ 3 s), which waits behind the data
  }, 90_000)
})
