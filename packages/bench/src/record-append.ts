import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { BenchContext } from './bench-context.js'
import type { EmmettResult } from './child.js'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import { measureRebuildMemory, type RebuildMemory } from './measure-rebuild-memory.js'
import { replayRawTurns } from './raw-turn-statement.js'
import { record } from './record.js'
import { runChild } from './run-child.js'
import { sessionUuid } from './session-uuid.js'
import { pool, summarize, timedRate } from './stats.js'
import { generateSession, type GeneratedSession } from './workload.js'

/** What the append workloads leave for the others. */
export interface AppendOutcome {
  /** Run 0's generated sessions, appended by turnlog (the later runs' are dropped, see below). */
  readonly generated: GeneratedSession[][]
  /** The payload bytes of one run's generated messages. */
  readonly payloadBytes: number
  /** Rebuild memory at `--sessions` sessions, taken after run 0 (with `rss`), else null. */
  readonly memorySmall: RebuildMemory | null
}

/**
 * Per-turn append with 8 writers, `--runs` times: turnlog against raw `INSERT … ON CONFLICT DO NOTHING`
 * (`append`), against the peer, Emmett, in a child process (`emmett`), and with the group commit off in a
 * database of its own (`single`), interleaved run by run.
 */
export async function recordAppend(ctx: BenchContext): Promise<AppendOutcome> {
  const { admin, args, connectionString, dbName, extraDatabases, rawPool, store, wants, writers } = ctx
  const totalMessages = args.sessions * args.messages
  let memorySmall: RebuildMemory | null = null
  const appendRates: number[] = []
  const rawRates: number[] = []
  const emmettRates: number[] = []
  const singleRates: number[] = []
  // the same appends with the group commit off: what grouping buys. In a database of its own, dropped
  // after the append runs, so the workloads after these run on the same data as without it
  const singleDb = `${dbName}_single`
  if (wants('single')) {
    await admin.query(`create database ${singleDb}`)
    extraDatabases.push(singleDb)
  }
  const singleStore = wants('single')
    ? await openStore({
        directConnection: true,
        connectionString: databaseUrl(args.adminUrl, singleDb),
        pool: { max: 8 },
        groupCommit: false,
      })
    : null
  const generated: GeneratedSession[][] = []
  let payloadBytes = 0
  for (let run = 0; run < args.runs; run++) {
    const sessions = Array.from({ length: args.sessions }, (_, i) => generateSession(run + 1, i, args.messages))
    generated.push(sessions)
    const count = sessions.reduce((n, s) => n + s.messageCount, 0)
    if (run === 0) payloadBytes = sessions.reduce((n, s) => n + s.turns.flat().reduce((b, m) => b + JSON.stringify(m.payload).length, 0), 0)
    const ids = sessions.map((s) => sessionUuid(run, s.index))
    for (const id of ids) await store.createSession({ id })
    const doRaw = async (): Promise<void> => {
      rawRates.push((await timedRate(count, () => replayRawTurns(rawPool, sessions, ids, writers))).rate)
    }
    const doTurnlog = async (): Promise<void> => {
      const { rate } = await timedRate(count, () =>
        pool(sessions, writers, async (s) => {
          const sid = ids[s.index] as string
          for (const turn of s.turns) await store.append(sid, turn)
        }),
      )
      appendRates.push(rate)
    }
    const doSingle = async (): Promise<void> => {
      if (singleStore === null) return
      const own = sessions.map((s) => sessionUuid(run + 500, s.index))
      for (const id of own) await singleStore.createSession({ id })
      // the same payloads under new ids (a message id belongs to one session)
      const copies = sessions.map((s) => s.turns.map((turn) => turn.map((m) => createMessage(m.payload))))
      const { rate } = await timedRate(count, () =>
        pool(sessions, writers, async (s) => {
          const sid = own[s.index] as string
          for (const turn of copies[s.index] ?? []) await singleStore.append(sid, turn)
        }),
      )
      singleRates.push(rate)
    }
    const doEmmett = async (): Promise<void> => {
      const r = await runChild<EmmettResult>([
        'emmett',
        connectionString,
        String(run),
        String(args.sessions),
        String(args.messages),
        String(writers),
      ])
      emmettRates.push(r.messages / r.seconds)
    }
    await interleaved(run, [
      doTurnlog,
      ...(wants('append') ? [doRaw] : []),
      ...(wants('emmett') ? [doEmmett] : []),
      ...(wants('single') ? [doSingle] : []),
    ])
    // rebuild memory at S sessions (the second figure is taken at the end, at runs × S)
    if (run === 0 && wants('rss')) memorySmall = await measureRebuildMemory(connectionString)
  }
  if (wants('append')) {
    record({
      workload: 'append: per-turn durable append, 8 writers',
      unit: 'msg/s',
      turnlog: summarize(appendRates),
      baseline: summarize(rawRates),
      baselineName: 'raw INSERT … ON CONFLICT DO NOTHING per turn',
      goal: '≥ 0.85×',
      goalRatio: 0.85,
      higherIsBetter: true,
      notes: `${totalMessages} messages per run; turnlog's stores are opened with { directConnection: true } (named prepared statements, no JIT or parallel workers on their connections)`,
    })
  }
  if (wants('single') && wants('append')) {
    record({
      workload: 'append with the group commit off: per-turn append, 8 writers',
      unit: 'msg/s',
      turnlog: summarize(singleRates),
      baseline: summarize(rawRates),
      baselineName: 'raw INSERT … ON CONFLICT DO NOTHING per turn',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: true,
      notes: `${totalMessages} messages per run; openStore({ groupCommit: false }): one append_messages statement and one commit per turn`,
    })
  }
  await singleStore?.close()
  if (singleStore !== null) await admin.query(`drop database ${singleDb} with (force)`)
  if (wants('emmett')) {
    record({
      workload: 'append vs the peer: per-turn append, 8 writers',
      unit: 'msg/s',
      turnlog: summarize(appendRates),
      baseline: summarize(emmettRates),
      baselineName: 'Emmett 0.42 appendToStream per turn',
      goal: 'reported (turnlog ÷ Emmett)',
      goalRatio: null,
      higherIsBetter: true,
      notes: `${totalMessages} messages per run; Emmett runs in a child process (it replaces pg's global type parsers), one stream per session, no expected version`,
    })
  }
  // later workloads use run 0's sessions only: the other runs' generated messages (≈ 1 GB of heap at
  // the full size) would only make this process's garbage collections, and so its timings, slower
  generated.splice(1)
  return { generated, payloadBytes, memorySmall }
}
