import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres'
import { openStore } from '@turnlog/postgres'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import type pg from 'pg'
import { databaseUrl } from './database-url.js'
import { langGraphText, langGraphTextKind, type LangGraphText } from './langgraph-text.js'
import type { Args } from './parse-args.js'
import { record } from './record.js'
import { runLangGraphThread } from './run-langgraph-thread.js'
import { pool, summarize } from './stats.js'
import { breakdown, compact, tableBytes } from './table-bytes.js'

/** What both savers hold per message, live rows only, after threads of one length. */
export interface StoragePoint {
  readonly steps: number
  readonly threads: number
  /** Bytes on disk per message (every table of the saver, heap, TOAST and indexes, after `VACUUM FULL`). */
  readonly turnlog: number
  readonly stock: number
  /** `table B/message` of each saver, largest first. */
  readonly turnlogTables: string
  readonly stockTables: string
}

const TURNLOG_SCHEMAS = ['turnlog', 'turnlog_langgraph']

/**
 * Writes `threads` threads of `steps` steps (LangGraph's put + putWrites per step, the bench's text)
 * with `TurnlogCheckpointSaver` into the empty database `oursUrl` and with the stock `PostgresSaver`
 * into the empty database `peerUrl`, `writers` threads at a time, then `VACUUM FULL`s both and returns
 * the growth of every table of each saver over the empty schema, per message. Not a timing.
 */
export async function measureStoragePoint(
  oursUrl: string,
  peerUrl: string,
  text: LangGraphText,
  threads: number,
  steps: number,
  writers = 4,
): Promise<StoragePoint> {
  const store = await openStore({ directConnection: true, connectionString: oursUrl, pool: { max: writers } })
  const stock = PostgresSaver.fromConnString(peerUrl)
  try {
    const saver = new TurnlogCheckpointSaver({ store })
    await saver.setup()
    await stock.setup()
    const emptyOurs = await tableBytes(oursUrl, TURNLOG_SCHEMAS)
    const emptyPeer = await tableBytes(peerUrl, ['public'])
    const ids = Array.from({ length: threads }, (_, i) => i)
    for (const target of [saver, stock]) {
      await pool(ids, writers, async (i) => {
        await runLangGraphThread(target, text, `thread${i}`, i, steps)
      })
    }
    await compact(oursUrl, TURNLOG_SCHEMAS)
    await compact(peerUrl, ['public'])
    const ours = await tableBytes(oursUrl, TURNLOG_SCHEMAS)
    const peer = await tableBytes(peerUrl, ['public'])
    const messages = threads * steps
    const grown = (now: Map<string, number>, empty: Map<string, number>): number =>
      [...now].reduce((sum, [name, bytes]) => sum + bytes - (empty.get(name) ?? 0), 0) / messages
    return {
      steps,
      threads,
      turnlog: grown(ours, emptyOurs),
      stock: grown(peer, emptyPeer),
      turnlogTables: breakdown(emptyOurs, ours, messages),
      stockTables: breakdown(emptyPeer, peer, messages),
    }
  } finally {
    await store.close()
    await stock.end()
  }
}

/**
 * The thread length (steps) at which turnlog's bytes per message fall to `goal` × the stock saver's:
 * between the two measured lengths around it, each saver's bytes per message interpolated linearly in
 * the length (the stock saver's grow linearly: half the thread's list per message); `null` when no two
 * adjacent points bracket it (then it lies outside the measured lengths).
 */
export function crossingLength(points: readonly StoragePoint[], goal: number): number | null {
  const sorted = [...points].sort((a, b) => a.steps - b.steps)
  const over = (p: StoragePoint): number => p.turnlog - goal * p.stock
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i] as StoragePoint
    if (over(a) === 0) return a.steps
    const b = sorted[i + 1]
    if (b !== undefined && over(a) * over(b) < 0) return a.steps + (over(a) / (over(a) - over(b))) * (b.steps - a.steps)
  }
  return null
}

/**
 * The `langgraph-storage` workload: bytes on disk per message (live rows, after `VACUUM FULL`) of both
 * savers as a function of the thread's length, each length in two fresh databases. The stock saver
 * stores the whole message list at every step, so its bytes per message grow with the thread; turnlog's
 * stay flat. Full size: 25, 50 and 100 steps × 40 threads, 200 steps × 16 threads; quick: 12, 24, 48
 * steps × 8 threads. One row per length, and the length where 0.1× (issue 18's goal) is crossed.
 */
export async function recordLangGraphStorage(args: Args, admin: pg.Client, dbName: string): Promise<void> {
  const lengths: readonly (readonly [steps: number, threads: number])[] = args.quick
    ? [
        [12, 8],
        [24, 8],
        [48, 8],
      ]
    : [
        [25, 40],
        [50, 40],
        [100, 40],
        [200, 16],
      ]
  const text = langGraphText(langGraphTextKind())
  const ours = `${dbName}_lgs`
  const peer = `${dbName}_lgs_peer`
  const points: StoragePoint[] = []
  for (const [steps, threads] of lengths) {
    for (const name of [ours, peer]) await admin.query(`create database ${name}`)
    try {
      points.push(await measureStoragePoint(databaseUrl(args.adminUrl, ours), databaseUrl(args.adminUrl, peer), text, threads, steps))
    } finally {
      for (const name of [ours, peer]) await admin.query(`drop database if exists ${name} with (force)`)
    }
  }
  const crossing = crossingLength(points, 0.1)
  const where =
    crossing === null
      ? `0.1× is not crossed between ${lengths[0]?.[0]} and ${lengths[lengths.length - 1]?.[0]} steps`
      : `0.1× is crossed at ≈ ${crossing.toFixed(0)} steps (interpolated)`
  for (const point of points) {
    record({
      workload: `LangGraph checkpoint saver: bytes on disk per message, live rows, threads of ${point.steps} steps`,
      unit: 'B',
      turnlog: summarize([point.turnlog]),
      baseline: summarize([point.stock]),
      baselineName: '@langchain/langgraph-checkpoint-postgres',
      goal: '≤ 0.1× (issue 18)',
      goalRatio: 0.1,
      higherIsBetter: false,
      notes: `Text: ${text.kind}; ${point.threads} threads × ${point.steps} steps, after VACUUM FULL; ${where}. B/message by table, turnlog: ${point.turnlogTables}; stock: ${point.stockTables}`,
    })
  }
}
