/**
 * A process that opened a store, worked, subscribed and closed everything as documented exits by
 * itself: turnlog leaves no timer, socket, child process or worker behind. Each way of opening a store
 * runs in a real process against the built package (run `pnpm build` first): it writes, reads, runs a
 * subscription it stops and one that `close()` stops (both waiting on a one-minute poll, so a wait
 * left armed would hold the process for a minute), closes the store (and the caller's pool or PGlite
 * instance), prints `closed` and returns. It must be gone within {@link EXIT_WITHIN_MS} of that line.
 * The same work in this process (the sources, so the mutation check's mutants reach it) must leave no
 * more handles than it found.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore, type OpenStoreConfig } from '@turnlog/postgres'
import { createTestDatabase, migratedPGliteDump, type TestDatabase } from '@turnlog/testing'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const CORE_DIST = fileURLToPath(new URL('../../core/dist/index.js', import.meta.url))
const PG = fileURLToPath(new URL('../node_modules/pg/lib/index.js', import.meta.url))
const PGLITE = fileURLToPath(new URL('../node_modules/@electric-sql/pglite/dist/index.js', import.meta.url))

/**
 * How long after `closed` the process may take to exit: the heap teardown of a process that ran PGlite
 * takes ≈ 0.3 s, longer on a loaded machine; a leaked handle holds it for good (or a minute).
 */
const EXIT_WITHIN_MS = 5_000

/** The process: `cfg.how` is the way of opening the store. Prints `closed`, then what still runs 1 s later. */
const SCRIPT = String.raw`
const cfg = JSON.parse(process.env.TURNLOG_EXIT_CHECK)
const { openStore } = await import(cfg.dist)
const { createMessage } = await import(cfg.core)
let store, pool, pglite
if (cfg.how === 'pool') {
  const pg = (await import(cfg.pg)).default
  pool = new pg.Pool({ connectionString: cfg.url, max: 4 })
  store = await openStore({ pool, migrate: false })
} else if (cfg.how === 'pglite') {
  const { PGlite } = await import(cfg.pglite)
  const { readFileSync } = await import('node:fs')
  // the caller's instance, on the run's migrated dump when there is one (the initdb and the migrations run in 'embedded')
  pglite = await PGlite.create(cfg.dump ? { loadDataDir: new Blob([readFileSync(cfg.dump)]) } : {})
  store = await openStore({ pglite })
} else {
  const config = {
    connectionString: { connectionString: cfg.url, migrate: false },
    directConnection: { connectionString: cfg.url, migrate: false, directConnection: true },
    embedded: { embedded: true },
    dataDir: { embedded: true, dataDir: cfg.dataDir },
  }[cfg.how]
  store = await openStore(config)
}
const session = await store.createSession()
await store.append(session, [createMessage({ role: 'user', content: 'hi' })])
await store.load(session)
const options = { pollIntervalMs: 60_000, lockRetryMs: 60_000 }
const stopped = store.subscribe({ name: 'stopped-' + cfg.how, from: 'start' }, async () => {}, options)
const closed = store.subscribe({ name: 'closed-' + cfg.how, from: 'start' }, async () => {}, options)
await stopped.catchUp()
await closed.catchUp()
await stopped.stop()
await store.close()
await closed.done
if (pool) await pool.end()
if (pglite) await pglite.close()
process.stdout.write('closed\n')
setTimeout(() => process.stdout.write('alive ' + JSON.stringify(process.getActiveResourcesInfo()) + '\n'), 1000).unref()
`

/** What the process printed, and how long after `closed` it took to exit (null: it did not, and was killed). */
interface Run {
  readonly lines: string[]
  readonly stderr: string
  readonly code: number | null
  readonly exitMs: number | null
}

let db: TestDatabase
let dir: string
let dump: string | undefined
const running = new Set<ChildProcess>()

beforeAll(async () => {
  for (const built of [DIST, CORE_DIST]) {
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npx -y pnpm@12.4.2 build\` before these tests`)
  }
  db = await createTestDatabase({ migrated: true })
  dir = await mkdtemp(join(tmpdir(), 'turnlog-exit-'))
  dump = await migratedPGliteDump()
})

afterAll(async () => {
  await Promise.all([...running].map((child) => new Promise((resolve) => child.once('close', resolve).kill('SIGKILL'))))
  await db?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Runs the process for `how`; kills it when it is still there {@link EXIT_WITHIN_MS} after `closed`. */
function run(how: string): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env['NODE_OPTIONS'] // no jest VM flags in the child
  env['TURNLOG_EXIT_CHECK'] = JSON.stringify({
    how,
    url: db.connectionString,
    dataDir: join(dir, how),
    dist: pathToFileURL(DIST).href,
    core: pathToFileURL(CORE_DIST).href,
    pg: pathToFileURL(PG).href,
    pglite: pathToFileURL(PGLITE).href,
    dump,
  })
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  const lines: string[] = []
  let stderr = ''
  let buffer = ''
  let closedAt: number | undefined
  let timer: NodeJS.Timeout | undefined
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk
    let i
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i)
      buffer = buffer.slice(i + 1)
      lines.push(line)
      if (line === 'closed') {
        closedAt = performance.now()
        timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS)
      }
    }
  })
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child)
      clearTimeout(timer)
      const exitMs = closedAt === undefined || signal === 'SIGKILL' ? null : performance.now() - closedAt
      resolve({ lines, stderr, code, exitMs })
    })
  })
}

describe('a process that closed everything exits by itself', () => {
  it.each(['connectionString', 'directConnection', 'pool', 'embedded', 'dataDir', 'pglite'])(
    'opened with %s: gone within 5 s of close, nothing left running',
    async (how) => {
      // given / when: a process opens a store this way, writes, subscribes twice, closes everything
      const result = await run(how)

      // then: it closed cleanly and then ended on its own, with nothing left to report
      expect({ lines: result.lines, stderr: result.stderr, code: result.code }).toEqual({ lines: ['closed'], stderr: '', code: 0 })
      expect(result.exitMs).not.toBeNull()
      expect(result.exitMs).toBeLessThan(EXIT_WITHIN_MS)
    },
    180_000,
  )
})

/** The process's handles and requests by kind (`Timeout`, `TCPSocketWrap`, …), ref'd ones only. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/** The kinds of which there are more now than in `before`, with how many more. */
function grownSince(before: Record<string, number>): Record<string, number> {
  const grown: Record<string, number> = {}
  for (const [kind, n] of Object.entries(resources())) if (n > (before[kind] ?? 0)) grown[kind] = n - (before[kind] ?? 0)
  return grown
}

describe('in this process, closing leaves no handle of the store behind', () => {
  it.each(['connectionString', 'pool', 'embedded'] as const)(
    'opened with %s',
    async (how) => {
      // given: the handles before the store
      const pg = (await import('pg')).default
      const pool = how === 'pool' ? new pg.Pool({ connectionString: db.connectionString, max: 4 }) : undefined
      const before = resources()
      const config: OpenStoreConfig =
        how === 'embedded'
          ? { embedded: true }
          : pool
            ? { pool, migrate: false }
            : { connectionString: db.connectionString, migrate: false }

      // when: the store writes, runs a subscription it stops and one close() stops, and is closed
      const store = await openStore(config)
      const session = await store.createSession()
      await store.append(session, [createMessage({ role: 'user', content: 'hi' })])
      const options = { pollIntervalMs: 60_000, lockRetryMs: 60_000 }
      const stopped = store.subscribe({ name: `in-process-stopped-${how}`, from: 'start' }, async () => {}, options)
      const closed = store.subscribe({ name: `in-process-closed-${how}`, from: 'start' }, async () => {}, options)
      await stopped.catchUp()
      await closed.catchUp()
      await stopped.stop()
      await store.close()
      await closed.done
      await pool?.end()

      // then: within 2 s (a socket's close completes a turn or two later) nothing is left that was not there before
      const deadline = performance.now() + 2_000
      while (Object.keys(grownSince(before)).length > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      expect(grownSince(before)).toEqual({})
    },
    120_000,
  )
})
