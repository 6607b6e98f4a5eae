import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint'
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres'
import { openStore } from '@turnlog/postgres'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import type pg from 'pg'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import { listCompression, storedCompression } from './langgraph-compression.js'
import { langGraphText, langGraphTextKind } from './langgraph-text.js'
import type { Args } from './parse-args.js'
import { record } from './record.js'
import { runLangGraphThread } from './run-langgraph-thread.js'
import { percentile, pool, summarize, type Summary } from './stats.js'
import { breakdown, compact, tableBytes } from './table-bytes.js'

/**
 * getTuple of the latest checkpoint (a config without `checkpoint_id`, what LangGraph asks when a
 * thread resumes) and of an old one (a quarter into the thread, a time-travel read), per call, the two
 * savers interleaved call by call over the same threads, 3 passes. Checks the message count read back.
 */
async function timeGetTuple(
  savers: readonly [BaseCheckpointSaver, BaseCheckpointSaver],
  threads: readonly { readonly id: string; readonly checkpoints: readonly [readonly string[], readonly string[]] }[],
): Promise<{ latest: [number[], number[]]; old: [number[], number[]] }> {
  const latest: [number[], number[]] = [[], []]
  const old: [number[], number[]] = [[], []]
  for (let pass = 0; pass < 3; pass++) {
    for (const thread of threads) {
      for (const [which, saver] of savers.entries()) {
        const checkpoints = thread.checkpoints[which] as readonly string[]
        const oldIndex = Math.floor(checkpoints.length / 4)
        const read = async (checkpointId: string | undefined, expected: number, into: number[]): Promise<void> => {
          const configurable: Record<string, unknown> = { thread_id: thread.id, checkpoint_ns: '' }
          if (checkpointId !== undefined) configurable['checkpoint_id'] = checkpointId
          const t0 = performance.now()
          const tuple = await saver.getTuple({ configurable })
          into.push(performance.now() - t0)
          const got = (tuple?.checkpoint.channel_values['messages'] as unknown[] | undefined)?.length
          if (got !== expected) throw new Error(`getTuple of ${thread.id} gave ${got} messages, expected ${expected}`)
        }
        await read(undefined, checkpoints.length, latest[which] as number[])
        await read(checkpoints[oldIndex], oldIndex + 1, old[which] as number[])
      }
    }
  }
  return { latest, old }
}

/**
 * The `langgraph` workload: `TurnlogCheckpointSaver` against the stock `PostgresSaver`
 * (@langchain/langgraph-checkpoint-postgres) on the same server, interleaved run by run, each in a
 * database of its own: ms per step (a `put` of the grown message list + a `putWrites`), 4 threads at a
 * time; getTuple of the latest and of an old checkpoint; and the bytes on disk per message after the
 * runs (every table of the saver, and turnlog's), with where they go.
 */
export async function recordLangGraph(args: Args, admin: pg.Client, dbName: string): Promise<void> {
  const threads = args.quick ? 8 : 40
  const steps = args.quick ? 24 : 100
  const writers = 4
  const text = langGraphText(langGraphTextKind())
  const ours = `${dbName}_langgraph`
  const peer = `${dbName}_langgraph_peer`
  for (const name of [ours, peer]) await admin.query(`create database ${name}`)
  const store = await openStore({ directConnection: true, connectionString: databaseUrl(args.adminUrl, ours), pool: { max: writers } })
  const saver = new TurnlogCheckpointSaver({ store })
  await saver.setup()
  const stock = PostgresSaver.fromConnString(databaseUrl(args.adminUrl, peer))
  await stock.setup()
  const turnlogSchemas = ['turnlog', 'turnlog_langgraph']
  // the empty schemas' own size (table files, indexes) is subtracted: what remains is per message
  const emptyTurnlog = await tableBytes(databaseUrl(args.adminUrl, ours), turnlogSchemas)
  const emptyStock = await tableBytes(databaseUrl(args.adminUrl, peer), ['public'])
  const turnlogMs: number[] = []
  const stockMs: number[] = []
  const written = [new Map<string, string[]>(), new Map<string, string[]>()] as const
  let messages = 0
  try {
    for (let run = 0; run < args.runs; run++) {
      const ids = Array.from({ length: threads }, (_, i) => i)
      const timed = async (target: BaseCheckpointSaver, into: number[]): Promise<void> => {
        let done = 0
        const t0 = performance.now()
        await pool(ids, writers, async (i) => {
          const id = `run${run}-thread${i}`
          const checkpoints = await runLangGraphThread(target, text, id, run * 10_000 + i, steps)
          done += checkpoints.length
          written[target === saver ? 0 : 1].set(id, checkpoints)
        })
        into.push((performance.now() - t0) / done)
      }
      await interleaved(run, [() => timed(saver, turnlogMs), () => timed(stock, stockMs)])
      messages += threads * steps
    }
    // every message once per run in both databases
    const turnlogTables = await tableBytes(databaseUrl(args.adminUrl, ours), turnlogSchemas)
    const stockTables = await tableBytes(databaseUrl(args.adminUrl, peer), ['public'])
    const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0)
    const turnlogBytes = sum(turnlogTables) - sum(emptyTurnlog)
    const stockBytes = sum(stockTables) - sum(emptyStock)
    // the same threads in both databases (each saver's own checkpoint ids)
    const sample = [...(written[0]?.keys() ?? [])].slice(0, 40)
    const timings = await timeGetTuple(
      [saver, stock],
      sample.map((id) => ({ id, checkpoints: [written[0]?.get(id) ?? [], written[1]?.get(id) ?? []] as const })),
    )
    record({
      workload: 'LangGraph checkpoint saver: per step (put + putWrites)',
      unit: 'ms',
      turnlog: summarize(turnlogMs),
      baseline: summarize(stockMs),
      baselineName: '@langchain/langgraph-checkpoint-postgres',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${threads} threads × ${steps} steps per run, ${writers} at a time; each step adds one message (~1 KB mean) to the messages channel`,
    })
    const p = (xs: number[], q: number): Summary => summarize([percentile(xs, q)])
    for (const [label, [t, s]] of [
      [`latest checkpoint (${steps} messages)`, timings.latest],
      [`old checkpoint (step ${Math.floor(steps / 4) + 1} of ${steps})`, timings.old],
    ] as const) {
      record({
        workload: `LangGraph checkpoint saver: getTuple, ${label}, p50`,
        unit: 'ms',
        turnlog: p(t, 50),
        baseline: p(s, 50),
        baselineName: '@langchain/langgraph-checkpoint-postgres',
        goal: '< 1× (issue 18)',
        goalRatio: 1,
        higherIsBetter: false,
        notes: `${sample.length} threads × 3 passes, interleaved call by call, one reader; p99 turnlog ${percentile(t, 99).toFixed(2)} ms, stock ${percentile(s, 99).toFixed(2)} ms`,
      })
    }
    const storageNotes = (turnlog: Map<string, number>, stockNow: Map<string, number>): string =>
      `B/message by table, turnlog: ${breakdown(emptyTurnlog, turnlog, messages)}; stock: ${breakdown(emptyStock, stockNow, messages)}`
    const recordBytes = (what: string, turnlogTotal: number, stockTotal: number, notes: string): void =>
      record({
        workload: `LangGraph checkpoint saver: bytes on disk per message, ${what}`,
        unit: 'B',
        turnlog: summarize([turnlogTotal / messages]),
        baseline: summarize([stockTotal / messages]),
        baselineName: '@langchain/langgraph-checkpoint-postgres',
        goal: '≤ 0.1× (issue 18)',
        goalRatio: 0.1,
        higherIsBetter: false,
        notes,
      })
    // how compressible the text is: the workload's own (in both databases) and both kinds on the same lists
    const stored = await storedCompression(databaseUrl(args.adminUrl, ours), databaseUrl(args.adminUrl, peer))
    const lists = await listCompression(databaseUrl(args.adminUrl, peer), 8, steps)
    const compression =
      `Text: ${text.kind}; ${lists.method} compresses a ${steps}-message list ${lists.ratios.prose.toFixed(2)}× in prose, ` +
      `${lists.ratios.vocabulary.toFixed(2)}× in the 32-word vocabulary; as stored here: the stock saver's blobs ${stored.stock.toFixed(2)}×, turnlog's payloads ${stored.turnlog.toFixed(2)}×.`
    recordBytes(
      'as written',
      turnlogBytes,
      stockBytes,
      `${compression} ${messages} messages in ${args.runs * threads} threads of ${steps} steps; growth of every table (heap, TOAST, indexes), pending writes included, dead row versions not yet vacuumed included: ${(turnlogBytes / 1e6).toFixed(1)} MB vs ${(stockBytes / 1e6).toFixed(1)} MB. ${storageNotes(turnlogTables, stockTables)}`,
    )
    // the same after VACUUM FULL: the live rows only (what the tables hold once autovacuum has made the
    // space of updated and deleted rows reusable)
    await compact(databaseUrl(args.adminUrl, ours), turnlogSchemas)
    await compact(databaseUrl(args.adminUrl, peer), ['public'])
    const turnlogLive = await tableBytes(databaseUrl(args.adminUrl, ours), turnlogSchemas)
    const stockLive = await tableBytes(databaseUrl(args.adminUrl, peer), ['public'])
    const turnlogLiveBytes = sum(turnlogLive) - sum(emptyTurnlog)
    const stockLiveBytes = sum(stockLive) - sum(emptyStock)
    recordBytes(
      'live rows (after VACUUM FULL)',
      turnlogLiveBytes,
      stockLiveBytes,
      `${(turnlogLiveBytes / 1e6).toFixed(1)} MB vs ${(stockLiveBytes / 1e6).toFixed(1)} MB. ${storageNotes(turnlogLive, stockLive)}`,
    )
  } finally {
    await store.close()
    await stock.end()
    for (const name of [ours, peer]) await admin.query(`drop database if exists ${name} with (force)`)
  }
}
