#!/usr/bin/env node
/**
 * `node packages/bench/dist/client-cpu.js [--sessions S] [--messages M] [--database-url URL] [--default-connection]`: the
 * client's CPU per message of the append workloads, in microseconds of this process's CPU time
 * (`process.cpuUsage`, user + system) over the timed phase only. It is not a bench figure (wall time
 * and the server are left out): it measures what the node side of `store.append` costs, for profiling
 * (`node --cpu-prof packages/bench/dist/client-cpu.js`) and before/after comparisons of client changes.
 *
 * In a database of its own (created and dropped), on fresh generated sessions (`workload.ts`, 8
 * writers, one call per turn, as the `append` workload), it prints one JSON line with µs per message:
 * - `append`: turnlog's `store.append` of every turn (the group commit on, the default);
 * - `retry`: the same turns appended again (the `retry` workload: every message a duplicate);
 * - `flush`: a flush after every turn of other fresh sessions, each with the whole live list so far;
 * - `raw`: the raw baseline's statement per turn (`raw-turn-statement.ts`) on other fresh sessions.
 * Each contender gets messages no other has touched, so each pays its own content hashes (which are
 * memoised on a message once computed).
 * Besides, per phase: `systemShare` (the kernel's share of this process's CPU), `othersCpu` (µs a
 * message of every other process's CPU, from `/proc/stat`: Postgres on an otherwise idle machine) and
 * `wall` (µs a message of wall time).
 * @packageDocumentation
 */
import { openStore } from '@turnlog/postgres'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { databaseUrl } from './database-url.js'
import { RAW_SCHEMA, replayRawTurns } from './raw-turn-statement.js'
import { sessionUuid } from './session-uuid.js'
import { pool } from './stats.js'
import { generateSession, type GeneratedSession } from './workload.js'

/**
 * The machine's busy CPU time so far, µs, from the first line of `/proc/stat` (every CPU's user, nice,
 * system, irq, softirq and steal ticks; 100 a second on Linux), or undefined where there is none.
 */
function machineBusyMicros(): number | undefined {
  let line: string | undefined
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0]
  } catch {
    return undefined
  }
  const ticks = (line ?? '').trim().split(/\s+/).slice(1).map(Number)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks
  return (user + nice + system + irq + softirq + steal) * 10_000
}

/** The µs of CPU time this process spent per message in `work`. */
async function cpuPerMessage(phase: string, messages: number, work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  const busyBefore = machineBusyMicros()
  const started = performance.now()
  // the phase's bounds on the monotonic clock (µs) on stderr: a CPU profile's samples can be cut by them
  process.stderr.write(`${phase} ${process.hrtime.bigint() / 1000n}\n`)
  await work()
  process.stderr.write(`end ${process.hrtime.bigint() / 1000n}\n`)
  const used = process.cpuUsage(before)
  const busyAfter = machineBusyMicros()
  const perMessage = (micros: number): number => Math.round((micros / messages) * 10) / 10
  systemShare[phase] = Math.round((used.system / (used.user + used.system)) * 100) / 100
  wall[phase] = perMessage((performance.now() - started) * 1000)
  if (busyBefore !== undefined && busyAfter !== undefined) others[phase] = perMessage(busyAfter - busyBefore - used.user - used.system)
  return perMessage(used.user + used.system)
}

/** Each phase's share of CPU time spent in the kernel (on loopback, mostly the sockets' `writev`). */
const systemShare: Record<string, number> = {}
/** Each phase's wall time per message, µs. */
const wall: Record<string, number> = {}
/**
 * Each phase's CPU time per message spent by everything but this process (Postgres, the kernel's work
 * outside it), µs: the machine's busy time less this process's. Meaningful on an otherwise idle machine.
 */
const others: Record<string, number> = {}

function flag(argv: readonly string[], name: string, fallback: string): string {
  const i = argv.indexOf(name)
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2)
  const sessionsCount = Number(flag(argv, '--sessions', '120'))
  const messages = Number(flag(argv, '--messages', '60'))
  const adminUrl = flag(argv, '--database-url', 'postgres://postgres@127.0.0.1:5432/postgres')
  const writers = 8
  const dbName = `turnlog_cpu_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const connectionString = databaseUrl(adminUrl, dbName)
  const rawPool = new pg.Pool({ connectionString, max: 8 })
  rawPool.on('error', () => {})
  // `--default-connection`: the store as `openStore`'s defaults open it (no named statements: Kysely's unnamed ones)
  const store = await openStore({ directConnection: !argv.includes('--default-connection'), connectionString, pool: { max: 8 } })
  try {
    await rawPool.query(RAW_SCHEMA)
    const generate = (seed: number): GeneratedSession[] =>
      Array.from({ length: sessionsCount }, (_, i) => generateSession(seed, i, messages))
    const count = (sessions: readonly GeneratedSession[]): number => sessions.reduce((n, s) => n + s.messageCount, 0)
    const created = async (run: number): Promise<string[]> => {
      const ids = Array.from({ length: sessionsCount }, (_, i) => sessionUuid(run, i))
      for (const id of ids) await store.createSession({ id })
      return ids
    }
    // warm-up: plans, statements and JIT of this process (not counted)
    const warm = generate(100).slice(0, 16)
    const warmIds = await created(100)
    await pool(warm, writers, async (s) => {
      for (const turn of s.turns) await store.append(warmIds[s.index] as string, turn)
    })
    await replayRawTurns(rawPool, warm, warmIds, writers)

    const appended = generate(1)
    const appendIds = await created(1)
    const append = await cpuPerMessage('append', count(appended), () =>
      pool(appended, writers, async (s) => {
        for (const turn of s.turns) await store.append(appendIds[s.index] as string, turn)
      }),
    )
    const retry = await cpuPerMessage('retry', count(appended), () =>
      pool(appended, writers, async (s) => {
        for (const turn of s.turns) await store.append(appendIds[s.index] as string, turn)
      }),
    )
    const flushed = generate(2)
    const flushIds = await created(2)
    const flush = await cpuPerMessage('flush', count(flushed), () =>
      pool(flushed, writers, async (s) => {
        const live = []
        for (const turn of s.turns) {
          live.push(...turn)
          await store.flush(flushIds[s.index] as string, live)
        }
      }),
    )
    const rawSessions = generate(3)
    // the raw baseline's table has no sessions to create
    const rawIds = rawSessions.map((s) => sessionUuid(3, s.index))
    const raw = await cpuPerMessage('raw', count(rawSessions), () => replayRawTurns(rawPool, rawSessions, rawIds, writers))
    process.stdout.write(
      JSON.stringify({ messages: count(appended), append, retry, flush, raw, systemShare, othersCpu: others, wall }) + '\n',
    )
  } finally {
    await store.close()
    await rawPool.end()
    await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.end()
  }
}

await main()
