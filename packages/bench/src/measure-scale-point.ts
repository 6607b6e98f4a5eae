import { newSessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { PerformanceObserver, constants, type NodeGCPerformanceDetail } from 'node:perf_hooks'
import type pg from 'pg'
import { interleaved } from './interleaved.js'
import { rawTurnStatement } from './raw-turn-statement.js'
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
  /** The client's young-generation collections (scavenges) while `load` was measured, and the calls they fell in. */
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

/** Scavenges during the `load` calls (`PerformanceObserver` of `gc` entries; docs/performance.md, "scale"). */
export interface LoadGc {
  /** Each scavenge's pause (ms), in order. */
  readonly scavengeMs: readonly number[]
  /** Calls over 2 ms, and how many of them a scavenge fell in. */
  readonly over2: number
  readonly over2WithScavenge: number
}

/** How {@link measureScalePoint} measures. */
export interface ScalePointInput {
  /** The store on the scale database (8 connections), with the raw control table `bench_raw.events`. */
  readonly store: PostgresStore
  /** A store on the same database with one connection, for `load` and `flush`. */
  readonly oneStore: PostgresStore
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
  /** Length of the flushed session (200 at the default sizes). */
  readonly flushMessages: number
}

function payloadBytes(sessions: readonly GeneratedSession[]): number {
  return sessions.reduce((n, s) => n + s.turns.flat().reduce((b, m) => b + Buffer.byteLength(JSON.stringify(m.payload)), 0), 0)
}

/**
 * `VACUUM ANALYZE`, the sizes, then per-turn append (8 writers, `runs` runs, each interleaved with the
 * same turns through raw SQL into a small table), a retry storm of the first run's turns, `load` of a
 * seeded sample of the bulk-loaded sessions (3 passes), and a flush after every new message of a new
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
  const load: number[] = []
  const loadFirstPass: number[] = []
  const calls: { start: number; end: number }[] = []
  const scavenges: { readonly startTime: number; readonly duration: number }[] = []
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as { readonly detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(e)
  })
  observer.observe({ entryTypes: ['gc'] })
  try {
    for (let pass = 0; pass < 3; pass++) {
      for (const id of sample) {
        t0 = performance.now()
        const loaded = await oneStore.load(id)
        const end = performance.now()
        const ms = end - t0
        load.push(ms)
        calls.push({ start: t0, end })
        if (pass === 0) loadFirstPass.push(ms)
        if (loaded.messages.length === 0) throw new Error(`load of ${id} returned no message`)
      }
    }
    // gc entries are delivered after the collection; give the last ones a turn of the event loop
    await new Promise((resolve) => setTimeout(resolve, 10))
  } finally {
    observer.disconnect()
  }
  const slow = calls.filter((c) => c.end - c.start > 2)
  const loadGc: LoadGc = {
    scavengeMs: scavenges.map((e) => e.duration),
    over2: slow.length,
    over2WithScavenge: slow.filter((c) => scavenges.some((e) => e.startTime < c.end && e.startTime + e.duration > c.start)).length,
  }

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
    loadGc,
    flushMs: percentile(flushes, 50),
    vacuumSeconds,
    storage,
    payloadWritten,
  }
}
