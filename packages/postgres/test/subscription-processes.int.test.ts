import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { openStore, withRetry, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sql } from 'kysely'

// Real consumer processes against the built package (run `pnpm build` first): restarts, crashes
// (SIGKILL) and two processes racing for one subscription name.

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))

/** The consumer process: prints `E tx gp session seq` per delivered event, `S state tx gp` per state. */
const WORKER = String.raw`
const cfg = JSON.parse(process.env.TURNLOG_SUBSCRIPTION_WORKER)
const { openStore } = await import(cfg.dist)
const out = (line) => process.stdout.write(line + '\n')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const store = await openStore({ connectionString: cfg.url, migrate: false, pool: { max: 2 } })
const sub = store.subscribe({ name: cfg.name, from: cfg.from }, async (e) => {
  out('E ' + e.txId + ' ' + e.globalPosition + ' ' + e.sessionId + ' ' + e.seq)
  if (cfg.delayMs > 0) await sleep(cfg.delayMs)
}, {
  batchSize: cfg.batchSize, lockRetryMs: 50, pollIntervalMs: 1000,
  onStateChange: (state, s) => out('S ' + state + ' ' + (s.checkpoint ? s.checkpoint.txId + ' ' + s.checkpoint.globalPosition : '- -')),
})
sub.done.catch((e) => { out('X ' + e.code + ' ' + e.message); process.exit(2) })
let pending = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', async (chunk) => {
  pending += chunk
  let i
  while ((i = pending.indexOf('\n')) >= 0) {
    const command = pending.slice(0, i)
    pending = pending.slice(i + 1)
    if (command === 'catchup') { const cp = await sub.catchUp(); out('C ' + cp.txId + ' ' + cp.globalPosition) }
    if (command === 'stop') { await sub.stop(); await store.close(); out('STOPPED'); process.exit(0) }
  }
})
out('READY')
`

interface Key {
  readonly tx: bigint
  readonly gp: number
}
interface Delivered extends Key {
  readonly session: string
  readonly seq: number
}

const keyString = (k: Key): string => `${k.tx}/${k.gp}`
const compareKeys = (a: Key, b: Key): number => (a.tx === b.tx ? a.gp - b.gp : a.tx < b.tx ? -1 : 1)

interface WorkerOptions {
  readonly delayMs?: number
  readonly batchSize?: number
  readonly from?: 'start' | { readonly txId: string; readonly globalPosition: number }
}

/** A consumer process and what it printed (complete lines only: a killed process may leave half a line). */
class Worker {
  readonly child: ChildProcessWithoutNullStreams
  readonly events: Delivered[] = []
  readonly states: { state: string; checkpoint: Key | null }[] = []
  readonly lines: string[] = []
  #buffer = ''
  #exited = false

  constructor(url: string, name: string, options: WorkerOptions = {}) {
    const env: Record<string, string | undefined> = { ...process.env }
    delete env.NODE_OPTIONS // no jest VM flags in the child
    env.TURNLOG_SUBSCRIPTION_WORKER = JSON.stringify({
      dist: pathToFileURL(DIST).href,
      url,
      name,
      delayMs: options.delayMs ?? 0,
      batchSize: options.batchSize ?? 50,
      from: options.from ?? 'start',
    })
    this.child = spawn(process.execPath, ['--input-type=module', '-e', WORKER], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk
      let i
      while ((i = this.#buffer.indexOf('\n')) >= 0) {
        this.#line(this.#buffer.slice(0, i))
        this.#buffer = this.#buffer.slice(i + 1)
      }
    })
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on('data', (chunk: string) => this.lines.push(`stderr: ${chunk}`))
    this.child.on('exit', () => {
      this.#exited = true
    })
  }

  #line(line: string): void {
    this.lines.push(line)
    const [kind, a, b, c, d] = line.split(' ')
    if (kind === 'E') this.events.push({ tx: BigInt(a!), gp: Number(b), session: c!, seq: Number(d) })
    if (kind === 'S') this.states.push({ state: a!, checkpoint: b === '-' ? null : { tx: BigInt(b!), gp: Number(c) } })
  }

  get state(): string | undefined {
    return this.states[this.states.length - 1]?.state
  }

  /** The checkpoint this consumer started from when it took the name. */
  get startCheckpoint(): Key | null {
    return this.states.find((s) => s.state === 'running')?.checkpoint ?? null
  }

  send(command: string): void {
    this.child.stdin.write(command + '\n')
  }

  async until(what: string, predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (this.#exited && !predicate()) throw new Error(`worker exited while waiting for ${what}:\n${this.lines.slice(-10).join('\n')}`)
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${this.lines.slice(-10).join('\n')}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  async kill(): Promise<void> {
    if (this.#exited) return
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.kill('SIGKILL')
    await exited
  }

  async stop(): Promise<void> {
    this.send('stop')
    await this.until('STOPPED', () => this.lines.includes('STOPPED'))
    await new Promise((resolve) => (this.#exited ? resolve(null) : this.child.once('exit', resolve)))
  }
}

let db: TestDatabase
let store: PostgresStore
const workers: Worker[] = []

beforeAll(async () => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npx -y pnpm@12.4.2 build\` before these tests`)
  db = await createTestDatabase({ migrated: true })
  store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 12 } })
})

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()))
  await store?.close()
  await db?.drop()
})

function worker(name: string, options: WorkerOptions = {}): Worker {
  const w = new Worker(db.connectionString, name, options)
  workers.push(w)
  return w
}

/** Every event in the log, in the order subscriptions deliver it. */
async function logOrder(): Promise<Delivered[]> {
  const { rows } = await sql<{ tx_id: string; global_position: string; session_id: string; seq: string }>`
    select tx_id::text as tx_id, global_position, session_id::text as session_id, seq
      from turnlog.events order by events.tx_id, events.global_position`.execute(store.db)
  return rows.map((r) => ({ tx: BigInt(r.tx_id), gp: Number(r.global_position), session: r.session_id, seq: Number(r.seq) }))
}

async function appendMany(sessions: readonly SessionId[], appends: number, perAppend = 5): Promise<void> {
  for (let i = 0; i < appends; i++) {
    const messages = Array.from({ length: perAppend }, (_, j) => createMessage({ role: 'user', content: `m ${i}.${j}` }))
    await store.append(sessions[i % sessions.length]!, messages)
  }
}

/** The index in `log` of the first event after `checkpoint`. */
function indexAfter(log: readonly Key[], checkpoint: Key | null): number {
  if (checkpoint === null) return 0
  const i = log.findIndex((e) => compareKeys(e, checkpoint) > 0)
  return i < 0 ? log.length : i
}

describe('subscription consumers in separate processes', () => {
  it('8 concurrent writers, a consumer stopped once and killed once: every event, in log order, duplicates only after a crash', async () => {
    // given: 4 sessions (so writers contend on each) and 8 writers appending 1-3 messages at a time
    const sessions = await Promise.all(Array.from({ length: 4 }, () => store.createSession()))
    const WRITERS = 8
    const APPENDS = 220
    let appended = 0
    let retries = 0
    let orderRetries = 0
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < APPENDS; i++) {
        const session = sessions[(w + i) % sessions.length]!
        const batch = Array.from({ length: 1 + ((w + i) % 3) }, (_, j) => createMessage({ role: 'user', content: `w${w} a${i} m${j}` }))
        await withRetry(() => store.append(session, batch), {
          attempts: 20,
          onRetry: (error) => {
            if (isTurnlogError(error, 'DB_TRANSIENT')) retries++
            if (isTurnlogError(error, 'DB_TRANSIENT') && error.details.sqlState === '40001') orderRetries++
          },
        })
        appended++
      }
    })
    const total = WRITERS * APPENDS
    const started = Date.now()

    // when: consumer 1 runs from the start while the writers write ...
    const first = worker('busy', { batchSize: 50, delayMs: 0 })
    await first.until('first events', () => first.events.length > 0)
    await waitUntil(() => appended >= total / 3)
    // ... is stopped gracefully; consumer 2 takes over ...
    await first.stop()
    const second = worker('busy', { batchSize: 50, delayMs: 1 }) // slower: the kill is likelier to land mid-batch
    await second.until('second running', () => second.state === 'running')
    await waitUntil(() => appended >= (2 * total) / 3)
    await second.until('second delivering', () => second.events.length > 20)
    // ... is killed mid-stream; consumer 3 takes over and catches up after the writers finish
    await second.kill()
    const third = worker('busy', { batchSize: 50, delayMs: 0 })
    await Promise.all(writers)
    const writeSeconds = (Date.now() - started) / 1000
    await third.until('third running', () => third.state === 'running')
    third.send('catchup')
    await third.until('third caught up', () => third.lines.some((l) => l.startsWith('C ')), 30_000)

    // then
    const log = await logOrder()
    expect(log.length).toBeGreaterThan(2 * total * 0.9) // 1-3 messages per append, ~2 on average
    const keys = log.map(keyString)
    // consumer 1: a prefix of the log, in order
    expect(first.events.map(keyString)).toEqual(keys.slice(0, first.events.length))
    // consumer 2 continues exactly after it: a graceful stop leaves no duplicate
    const n1 = first.events.length
    expect(indexAfter(log, second.startCheckpoint)).toBe(n1)
    expect(second.events.map(keyString)).toEqual(keys.slice(n1, n1 + second.events.length))
    // consumer 3 starts at the last checkpoint consumer 2 committed: it redelivers only what consumer 2
    // handled after that checkpoint (at most one batch), and delivers everything to the end
    const n2 = n1 + second.events.length
    const k = indexAfter(log, third.startCheckpoint)
    expect(k).toBeGreaterThanOrEqual(n1)
    expect(k).toBeLessThanOrEqual(n2)
    expect(n2 - k).toBeLessThanOrEqual(50)
    expect(third.events.map(keyString)).toEqual(keys.slice(k))
    // the union is the whole log
    const delivered = new Set([...first.events, ...second.events, ...third.events].map(keyString))
    expect(delivered.size).toBe(log.length)
    // per session, delivery order is seq order, and the store's own appends never needed the order
    // check's retry (they take their transaction id only once they hold the session lock)
    expect(orderRetries).toBe(0)
    const lastSeq = new Map<string, number>()
    for (const e of log) {
      expect(e.seq).toBe((lastSeq.get(e.session) ?? 0) + 1)
      lastSeq.set(e.session, e.seq)
    }
    process.stdout.write(
      `[subscription] ${log.length} events by ${WRITERS} writers on ${sessions.length} sessions in ${writeSeconds.toFixed(1)} s; ${retries} transient retries; ` +
        `consumer 1: ${n1}, consumer 2: ${second.events.length} (killed), consumer 3: ${third.events.length}, redelivered after the crash: ${n2 - k}\n`,
    )
    await third.stop()
  })

  it('two processes race for one name: exactly one consumes; SIGKILL it and the other continues from its checkpoint', async () => {
    // given: 200 events after the current end of the log
    const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(store.db)
    const from = { txId: rows[0]!.xmin, globalPosition: 0 }
    const sessions = await Promise.all(Array.from({ length: 4 }, () => store.createSession()))
    await appendMany(sessions, 40)

    // when: two consumers start at once
    const a = worker('race', { delayMs: 5, batchSize: 20, from })
    const b = worker('race', { delayMs: 5, batchSize: 20, from })
    await waitUntil(() => (a.state === 'running' && b.state === 'waiting') || (b.state === 'running' && a.state === 'waiting'))
    const [holder, standby] = a.state === 'running' ? [a, b] : [b, a]
    await holder.until('50 deliveries', () => holder.events.length >= 50)

    // then: only the holder delivers
    expect(standby.events).toEqual([])
    expect(standby.state).toBe('waiting')

    // when: the holder dies without any chance to clean up
    await holder.kill()
    const killedAt = holder.events.length

    // then: the standby takes over from the committed checkpoint, and keeps consuming new events
    await standby.until('takeover', () => standby.state === 'running', 10_000)
    await appendMany(sessions, 10)
    const log = await logOrder()
    // 'from' is the visible horizon: it may include a few earlier events still held back then
    const ours = log.filter((e) => compareKeys(e, { tx: BigInt(from.txId), gp: from.globalPosition }) > 0)
    expect(ours.length).toBeGreaterThanOrEqual(250)
    const expectedKeys = ours.map(keyString)
    await standby.until(
      'every event',
      () => standby.events.length > 0 && keyString(standby.events[standby.events.length - 1]!) === expectedKeys[expectedKeys.length - 1],
    )
    const checkpoint = standby.startCheckpoint
    expect(checkpoint).not.toBeNull()
    const k = indexAfter(ours, checkpoint)
    // the checkpoint covers only events the holder delivered; the holder delivered at most one batch past it
    expect(k).toBeLessThanOrEqual(killedAt)
    expect(killedAt - k).toBeLessThanOrEqual(20)
    expect(holder.events.map(keyString)).toEqual(expectedKeys.slice(0, killedAt))
    expect(standby.events.map(keyString)).toEqual(expectedKeys.slice(k))
    await standby.stop()
  })
})

async function waitUntil(predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
