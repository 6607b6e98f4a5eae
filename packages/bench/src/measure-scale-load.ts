import { openStore } from '@turnlog/postgres'
import { PerformanceObserver, constants, type NodeGCPerformanceDetail } from 'node:perf_hooks'
import pg from 'pg'

/** What {@link measureScaleLoad} measured: every call (ms) and the scavenges among them. */
export interface ScaleLoadResult {
  /** `store.load` of each sampled session, every call (ms), and the calls of the first pass only. */
  readonly load: readonly number[]
  readonly loadFirstPass: readonly number[]
  /** The raw control beside each call: `SELECT … FROM turnlog.events WHERE session_id = $1 ORDER BY seq` (ms). */
  readonly raw: readonly number[]
  /** The process's young-generation collections (scavenges) while `load` was measured, and the calls they fell in. */
  readonly loadGc: LoadGc
}

/** Scavenges during the `load` calls (`PerformanceObserver` of `gc` entries; docs/performance.md, "scale"). */
export interface LoadGc {
  /** Each scavenge's pause (ms), in order. */
  readonly scavengeMs: readonly number[]
  /** Calls over 2 ms, and how many of them a scavenge fell in. */
  readonly over2: number
  readonly over2WithScavenge: number
  /** Raw control calls over 2 ms. */
  readonly rawOver2: number
}

/** Unmeasured calls (each a raw control and a `load` of one of the warm-up sessions, in turn) before the measurement. */
export const WARMUP_CALLS = 2000

/** The raw control: the same session's events, which for a bulk-loaded session are its live messages. */
const RAW_LOAD = 'select event_id, message_id, payload from turnlog.events where session_id = $1 order by seq'

/**
 * `load` of `sample` (session ids, repeats allowed) in 3 passes through a store of one connection
 * opened with `directConnection: true`, each call preceded by the raw control on a connection of its
 * own, after a warm-up over `warmup` (not measured: {@link WARMUP_CALLS} calls of each, in turn, so that
 * the code, its statements and the process's heap are in their steady state). Meant for a process of
 * its own (`child.js scale-load`): the heap it measures in holds only this, not the bench's
 * (docs/performance.md, "scale").
 */
export async function measureScaleLoad(url: string, sample: readonly string[], warmup: readonly string[]): Promise<ScaleLoadResult> {
  const store = await openStore({ directConnection: true, connectionString: url, pool: { max: 1 }, migrate: false })
  const rawOne = new pg.Pool({ connectionString: url, max: 1 })
  rawOne.on('error', () => {})
  const load: number[] = []
  const loadFirstPass: number[] = []
  const raw: number[] = []
  const calls: { start: number; end: number }[] = []
  let rawOver2 = 0
  const scavenges: { readonly startTime: number; readonly duration: number }[] = []
  try {
    // the warm-up runs until the process is in its steady state: a fresh process's first ≈ 2,000 reads
    // have a p99 2–3 times its later one (its heap still growing; docs/performance.md, "scale")
    const warmupCalls = warmup.length === 0 ? 0 : Math.max(WARMUP_CALLS, warmup.length)
    for (let i = 0; i < warmupCalls; i++) {
      const id = warmup[i % warmup.length] as string
      await rawOne.query(RAW_LOAD, [id])
      await store.load(id)
    }
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if ((e as { readonly detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(e)
    })
    observer.observe({ entryTypes: ['gc'] })
    try {
      for (let pass = 0; pass < 3; pass++) {
        for (const id of sample) {
          let t0 = performance.now()
          // only the row count is kept: the control's rows are garbage before load runs (held, a
          // scavenge during load would copy them)
          const rawRows = (await rawOne.query(RAW_LOAD, [id])).rows.length
          const rawMs = performance.now() - t0
          raw.push(rawMs)
          if (rawMs > 2) rawOver2++
          t0 = performance.now()
          const loaded = await store.load(id)
          const end = performance.now()
          const ms = end - t0
          load.push(ms)
          calls.push({ start: t0, end })
          if (pass === 0) loadFirstPass.push(ms)
          if (loaded.messages.length === 0 || loaded.messages.length !== rawRows)
            throw new Error(`load of ${id} returned ${loaded.messages.length} messages, the raw select ${rawRows}`)
        }
      }
      // gc entries are delivered after the collection; give the last ones a turn of the event loop
      await new Promise((resolve) => setTimeout(resolve, 10))
    } finally {
      observer.disconnect()
    }
  } finally {
    await store.close()
    await rawOne.end()
  }
  const slow = calls.filter((c) => c.end - c.start > 2)
  return {
    load,
    loadFirstPass,
    raw,
    loadGc: {
      scavengeMs: scavenges.map((e) => e.duration),
      over2: slow.length,
      over2WithScavenge: slow.filter((c) => scavenges.some((e) => e.startTime < c.end && e.startTime + e.duration > c.start)).length,
      rawOver2,
    },
  }
}
