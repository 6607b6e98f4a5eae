import { openStore } from '@turnlog/postgres'
import type { BenchContext } from './bench-context.js'
import { interleaved } from './interleaved.js'
import { replayRawTurns } from './raw-turn-statement.js'
import { record } from './record.js'
import { sessionUuid } from './session-uuid.js'
import { pool, summarize, timedRate } from './stats.js'
import type { GeneratedSession } from './workload.js'

/** Retry storm: run 0's turns re-appended (a sample of its sessions), against a raw replay of the statements; throws if turnlog wrote a row. */
export async function recordRetryStorm(ctx: BenchContext, generated: readonly GeneratedSession[][]): Promise<void> {
  const { args, connectionString, rawPool, writers } = ctx
  // a sample of run 0's sessions: a full re-append of every session would dominate the bench's time
  const first = (generated[0] ?? []).slice(0, args.quick ? args.sessions : Math.min(args.sessions, 250))
  const ids0 = first.map((s) => sessionUuid(0, s.index))
  const before = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
  const retryStore = await openStore({
    directConnection: true,
    connectionString,
    pool: { max: 8 },
    migrate: false,
    ...(args.groupCommit === undefined ? {} : { groupCommit: args.groupCommit }),
  })
  const count0 = first.reduce((n, s) => n + s.messageCount, 0)
  const retryRates: number[] = []
  const rawRetryRates: number[] = []
  let rawWritten = 0
  for (let r = 0; r < args.runs; r++) {
    await interleaved(r, [
      async () => {
        const { rate, result } = await timedRate(count0, () => replayRawTurns(rawPool, first, ids0, writers))
        rawWritten += result
        rawRetryRates.push(rate)
      },
      async () => {
        const { rate } = await timedRate(count0, () =>
          pool(first, writers, async (s) => {
            for (const turn of s.turns) await retryStore.append(ids0[s.index] as string, turn)
          }),
        )
        retryRates.push(rate)
      },
    ])
  }
  await retryStore.close()
  const after = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
  record({
    workload: 'retry storm: the same turns re-appended',
    unit: 'msg/s',
    turnlog: summarize(retryRates),
    baseline: summarize(rawRetryRates),
    baselineName: 'raw replay of the statements',
    goal: '≥ 0.8×, 0 rows written',
    goalRatio: 0.8,
    higherIsBetter: true,
    notes: `${count0} messages (${first.length} sessions) per run; rows written: turnlog ${after - before}, raw ${rawWritten}`,
  })
  if (after !== before) throw new Error(`retry storm wrote ${after - before} events`)
}
