/**
 * The bench's child processes, each printing one JSON line on stdout:
 *
 * - `emmett URL RUN SESSIONS MESSAGES WRITERS`: the peer, `@event-driven-io/emmett-postgresql`, appends
 *   the same generated sessions as the main process (`generateSession(RUN + 1, i, MESSAGES)`), one
 *   `appendToStream` per turn, one stream per session, WRITERS sessions at a time. It runs in its own
 *   process because Emmett (through dumbo) replaces `pg`'s global type parsers (bigint → BigInt, json →
 *   its own deserializer), which would change what turnlog and the raw baseline read in the same process.
 * - `rebuild-memory URL`: `rebuild()` of every session, sampling this process's resident set size and
 *   V8 heap. Started with `--expose-gc`, it also collects garbage every 10 sessions and records the
 *   largest heap still in use right after a collection: the memory the rebuild actually holds, which
 *   unlike the resident set does not depend on when V8 chooses to collect.
 * - `scale-load URL SAMPLE WARMUP`: the scale workload's `load` measurement (`measureScaleLoad`) of the
 *   comma-separated session ids SAMPLE after `WARMUP_CALLS` unmeasured calls over WARMUP, in a heap that holds
 *   nothing of the process that grew the database (docs/performance.md, "scale").
 * @packageDocumentation
 */
import { openStore } from '@turnlog/postgres'
import pg from 'pg'
import { measureScaleLoad } from './measure-scale-load.js'
import { pool } from './stats.js'
import { generateSession } from './workload.js'

/** What the `emmett` mode prints. */
export interface EmmettResult {
  readonly messages: number
  readonly seconds: number
}

/** What the `rebuild-memory` mode prints. */
export interface RebuildMemoryResult {
  readonly sessions: number
  readonly seconds: number
  /** Resident set size after opening the store, before the rebuild (bytes). */
  readonly rssBefore: number
  /** Largest resident set size sampled during the rebuild (bytes). */
  readonly rssPeak: number
  /** Largest V8 heap used sampled during the rebuild (bytes). */
  readonly heapPeak: number
  /** With `--expose-gc`: largest V8 heap used right after a forced collection (bytes); otherwise null. */
  readonly liveHeapPeak: number | null
}

async function emmett(url: string, run: number, sessions: number, messages: number, writers: number): Promise<EmmettResult> {
  const { getPostgreSQLEventStore } = await import('@event-driven-io/emmett-postgresql')
  const generated = Array.from({ length: sessions }, (_, i) => generateSession(run + 1, i, messages))
  const count = generated.reduce((n, s) => n + s.messageCount, 0)
  const connections = new pg.Pool({ connectionString: url, max: writers })
  connections.on('error', () => {})
  const store = getPostgreSQLEventStore(url, { connectionOptions: { pool: connections } })
  try {
    // schema creation and the first statements' planning are not part of the measurement
    await store.appendToStream(`warmup-${run}`, [{ type: 'MessageAppended', data: { warmup: true } }])
    const t0 = performance.now()
    await pool(generated, writers, async (s) => {
      const stream = `session-${run}-${s.index}`
      for (const turn of s.turns) {
        await store.appendToStream(
          stream,
          turn.map((m) => ({ type: 'MessageAppended', data: { id: m.id, createdAt: m.createdAt, payload: m.payload } })),
        )
      }
    })
    return { messages: count, seconds: (performance.now() - t0) / 1000 }
  } finally {
    await store.close()
    await connections.end().catch(() => {})
  }
}

async function rebuildMemory(url: string): Promise<RebuildMemoryResult> {
  const store = await openStore({ connectionString: url, pool: { max: 4 }, migrate: false })
  try {
    const gc = (globalThis as { gc?: () => void }).gc
    const rssBefore = process.memoryUsage.rss()
    let rssPeak = rssBefore
    let heapPeak = process.memoryUsage().heapUsed
    let liveHeapPeak: number | null = null
    const sample = (): void => {
      const m = process.memoryUsage()
      rssPeak = Math.max(rssPeak, m.rss)
      heapPeak = Math.max(heapPeak, m.heapUsed)
    }
    const progress = (p: { readonly done: number }): void => {
      sample()
      if (gc !== undefined && p.done % 10 === 0) {
        gc()
        liveHeapPeak = Math.max(liveHeapPeak ?? 0, process.memoryUsage().heapUsed)
      }
    }
    const timer = setInterval(sample, 5)
    const t0 = performance.now()
    let sessions = 0
    try {
      // sampling in the progress callback too: the timer only runs between batches' I/O
      sessions = (await store.rebuild({ onProgress: progress })).sessions
    } finally {
      clearInterval(timer)
    }
    sample()
    return { sessions, seconds: (performance.now() - t0) / 1000, rssBefore, rssPeak, heapPeak, liveHeapPeak }
  } finally {
    await store.close()
  }
}

/** A comma-separated list of ids (empty: none). */
function ids(list: string | undefined): string[] {
  return list === undefined || list === '' ? [] : list.split(',')
}

async function main(): Promise<void> {
  const [mode, url, ...rest] = process.argv.slice(2)
  if (url === undefined) throw new Error('usage: child.js emmett|rebuild-memory|scale-load URL …')
  const n = rest.map(Number)
  let result: unknown
  if (mode === 'emmett') result = await emmett(url, n[0] ?? 0, n[1] ?? 1, n[2] ?? 1, n[3] ?? 8)
  else if (mode === 'rebuild-memory') result = await rebuildMemory(url)
  else if (mode === 'scale-load') result = await measureScaleLoad(url, ids(rest[0]), ids(rest[1]))
  else throw new Error(`unknown mode ${String(mode)}`)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
