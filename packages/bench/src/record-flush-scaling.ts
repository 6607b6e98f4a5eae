import { openStore } from '@turnlog/postgres'
import type { BenchContext } from './bench-context.js'
import { record } from './record.js'
import { percentile, summarize } from './stats.js'
import { generateSession } from './workload.js'

/** Flush scaling: a flush after every new message of one long session, the time at its end against the time at ~100 messages. */
export async function recordFlushScaling(ctx: BenchContext): Promise<void> {
  const { args, connectionString, store } = ctx
  const big = generateSession(99, 0, args.quick ? 600 : 2000)
  const live = big.turns.flat()
  const sid = await store.createSession()
  const flushStore = await openStore({ directConnection: true, connectionString, pool: { max: 1 }, migrate: false })
  const times: { len: number; ms: number }[] = []
  for (let i = 1; i <= live.length; i++) {
    const t0 = performance.now()
    await flushStore.flush(sid, live.slice(0, i))
    times.push({ len: i, ms: performance.now() - t0 })
  }
  await flushStore.close()
  const at = (lo: number, hi: number): number[] => times.filter((x) => x.len > lo && x.len <= hi).map((x) => x.ms)
  const small = summarize([percentile(at(50, 150), 50)])
  const large = summarize([percentile(at(live.length - 100, live.length), 50)])
  record({
    workload: `flush after every new message: at ${live.length} vs at 100`,
    unit: 'ms/flush',
    turnlog: large,
    baseline: small,
    baselineName: 'the same flush at ~100 messages',
    goal: '≤ 1.2×',
    goalRatio: 1.2,
    higherIsBetter: false,
    notes: 'median per-flush time',
  })
}
