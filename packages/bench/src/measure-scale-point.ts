import { newSessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import type pg from 'pg'
import { interleaved } from './interleaved.js'
import type { LoadGc, ScaleLoadResult } from './measure-scale-load.js'
import { rawTurnStatement } from './raw-turn-statement.js'
import { runChild } from './run-child.js'
import { scaleStorage, type ScaleStorage } from './scale-storage.js'
import { percentile, pool } from './stats.js'
import { generateSession, prng, type GeneratedSession } from './workload.js'

/** What the scale workload measures at one size of its database. */
export interface ScalePoint {
  /** Messages stored when the measurement started (`turnlog.events` rows). */
  readonly messages: number
  /** Per-turn append with 8 writers, one figure per run (msg/s). */
  readonly append: readonly number[]
  /** The same turns through raw `INSERT … ON CONFLICT DO NOTHING` into a small table: the machine's drift (msg/s). */
  readonly rawControl: readonly number[]
  /** The first run's turns re-appended, one figure per run (msg/s). */
  readonly retry: readonly number[]
  /** `load` of sessions of the bulk load, every call (ms), and the calls of the first pass only. */
  readonly load: readonly number[]
  readonly loadFirstPass: readonly number[]
  /** The raw control beside each `load` call, in the same process (ms). */
  readonly loadRaw: readonly number[]
  /** The measuring process's young-generation collections (scavenges) while `load` was measured, and the calls they fell in. */
  readonly loadGc: LoadGc
  /** Median time of a flush of a session's second half of `flushMessages` live messages, one new message each (ms). */
  readonly flushMs: number
  /** `VACUUM ANALYZE` of the database before the measurement (s). */
  readonly vacuumSeconds: number
  /** Sizes before the measurement's own writes. */
  readonly storage: ScaleStorage
  /** Payload bytes the measurement wrote (appends and the flushed session). */
  readonly payloadWritten: number
}

/** How {@link measureScalePoint} measures. */
export interface ScalePointInput {
  /** The store on the scale database (8 connections), with the raw control table `bench_raw.events`. */
  readonly store: PostgresStore
  /** A store on the same database with one connection, for `flush`. */
  readonly oneStore: PostgresStore
  /** The scale database's URL, for the process that measures `load`. */
  readonly connectionString: string
  readonly pool: pg.Pool
  /** Which measurement this is (0 at the small size, 1 at the large): seeds and ids differ. */
  readonly phase: number
  readonly runs: number
  readonly writers: number
  /** Sessions appended per run, and their messages. */
  readonly appendSessions: number
  readonly messagesPerSession: number
  /** Sessions of the bulk load to sample `load` from, and how many. */
  readonly loadedSessions: readonly string[]
  readonly loadSample: number
  /** Sessions loaded in turn before the measurement, not measured (the templates; `WARMUP_CALLS` calls in all). */
  readonly warmupSessions: readonly string[]
  /** Length of the flushed session (200 at the default sizes). */
  readonly flushMessages: number
}

function payloadBytes(sessions: readonly GeneratedSession[]): number {
  return sessions.reduce((n, s) => n + s.turns.flat().reduce((b, m) => b + Buffer.byteLength(JSON.stringify(m.payload)), 0), 0)
}

/**
 * `VACUUM ANALYZE`, the sizes, then per-turn append (8 writers, `runs` runs, each interleaved with the
 * same turns through raw SQL into a small table), a retry storm of the first run's turns, `load` of a
 * seeded sample of the bulk-loaded sessions (3 passes, in a child process: `measureScaleLoad`), and a flush after every new message of a new
 * session up to `flushMessages` messages.
 */
export async function measureScalePoint(input: ScalePointInput): Promise<ScalePoint> {
  const { store, oneStore, pool: sql, phase, runs, writers, appendSessions, messagesPerSession } = input
  let t0 = performance.now()
  await sql.query('vacuum analyze')
  const vacuumSeconds = (performance.now() - t0) / 1000
  const client = await sql.connect()
  let storage: ScaleStorage
  try {
    storage = await scaleStorage(client)
  } finally {
    client.release()
  }
  let payloadWritten = 0

  const append: number[] = []
  const rawControl: number[] = []
  let first: { sessions: GeneratedSession[]; ids: string[] } | null = null
  for (let run = 0; run < runs; run++) {
    const sessions = Array.from({ length: appendSessions }, (_, i) => generateSession(1000 + phase * 100 + run, i, messagesPerSession))
    const ids = sessions.map(() => newSessionId())
    first ??= { sessions, ids }
    payloadWritten += payloadBytes(sessions)
    const count = sessions.reduce((n, s) => n + s.messageCount, 0)
    for (const id of ids) await store.createSession({ id })
    await interleaved(run, [
      async () => {
        t0 = performance.now()
        await pool(sessions, writers, async (s) => {
          const id = ids[s.index] as string
          for (const turn of s.turns) await store.append(id, turn)
        })
        append.push(count / ((performance.now() - t0) / 1000))
      },
      async () => {
        t0 = performance.now()
        await pool(sessions, writers, async (s) => {
          let seq = 1
          for (const turn of s.turns) {
            const st = rawTurnStatement(ids[s.index] as string, seq, turn)
            await sql.query(st.text, st.values)
            seq += turn.length
          }
        })
        rawControl.push(count / ((performance.now() - t0) / 1000))
      },
    ])
  }

  const retry: number[] = []
  if (first !== null) {
    const { sessions, ids } = first
    const count = sessions.reduce((n, s) => n + s.messageCount, 0)
    for (let run = 0; run < runs; run++) {
      t0 = performance.now()
      await pool(sessions, writers, async (s) => {
        const id = ids[s.index] as string
        for (const turn of s.turns) await store.append(id, turn)
      })
      retry.push(count / ((performance.now() - t0) / 1000))
    }
  }

  const rand = prng(7 + phase)
  const { loadedSessions } = input
  const sample = Array.from({ length: input.loadSample }, () => loadedSessions[Math.floor(rand() * loadedSessions.length)] as string)
  // in a process of its own: this one's heap, which grew the database, does not take part (performance.md,
  // "scale"); a bench run with --trace-gc flags passes them on (the child's log goes to stderr)
  const gcFlags = process.execArgv.filter((flag) => flag.startsWith('--trace-gc'))
  const args = ['scale-load', input.connectionString, sample.join(','), input.warmupSessions.join(',')]
  const { load, loadFirstPass, raw: loadRaw, loadGc } = await runChild<ScaleLoadResult>(args, gcFlags)

  const live = generateSession(99, phase, input.flushMessages).turns.flat()
  payloadWritten += payloadBytes([{ index: 0, turns: [live], messageCount: live.length }])
  const sid = newSessionId()
  await store.createSession({ id: sid })
  const flushes: number[] = []
  for (let i = 1; i <= live.length; i++) {
    t0 = performance.now()
    await oneStore.flush(sid, live.slice(0, i))
    if (i > input.flushMessages / 2) flushes.push(performance.now() - t0)
  }
  return {
    messages: storage.events,
    append,
    rawControl,
    retry,
    load,
    loadFirstPass,
    loadRaw,
    loadGc,
    flushMs: percentile(flushes, 50),
    vacuumSeconds,
    storage,
    payloadWritten,
  }
}
