import type { Message } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { BenchContext } from './bench-context.js'
import { record } from './record.js'
import { percentile, summarize } from './stats.js'
import { generateSession } from './workload.js'

/** Sessions of each size, flushed in alternation. */
const PAIRS = 4
/** Flushes measured per session: one new message each, the size moving through a window this wide. */
const WINDOW = 100
/** The small size, the middle of its window. */
const SMALL = 100

/**
 * Flush scaling: a flush after every new message, at ~2,000 messages (600 with `--quick`) against at
 * ~100. Both sizes are measured in the same phase, interleaved: {@link PAIRS} sessions of each size are
 * first grown (one flush of all but the last {@link WINDOW} messages of a large session, of all but
 * the last half window of a small one: not measured), then every step flushes each session with one
 * more message, large and small in alternating order, so a checkpoint, an autovacuum or a busy moment
 * of the machine falls on both sides alike. The ratio is of the medians of the two sides.
 */
export async function recordFlushScaling(ctx: BenchContext): Promise<void> {
  const { args, connectionString, store } = ctx
  const large = args.quick ? 600 : 2000
  const flushStore = await openStore({ directConnection: true, connectionString, pool: { max: 1 }, migrate: false })
  const grow = async (index: number, size: number, at: number): Promise<{ sid: string; live: readonly Message[]; at: number }> => {
    const live = generateSession(99, index, size).turns.flat()
    const sid = await store.createSession()
    await flushStore.flush(sid, live.slice(0, at))
    return { sid, live, at }
  }
  const sessions: { size: 'large' | 'small'; sid: string; live: readonly Message[]; at: number }[] = []
  for (let k = 0; k < PAIRS; k++) {
    sessions.push({ size: 'large', ...(await grow(2 * k, large, large - WINDOW)) })
    sessions.push({ size: 'small', ...(await grow(2 * k + 1, SMALL + WINDOW / 2, SMALL - WINDOW / 2)) })
  }
  const times = { large: [] as number[], small: [] as number[] }
  for (let step = 1; step <= WINDOW; step++) {
    for (let k = 0; k < PAIRS; k++) {
      const pair = [sessions[2 * k], sessions[2 * k + 1]] as const
      for (const s of (step + k) % 2 === 0 ? pair : [pair[1], pair[0]]) {
        if (s === undefined) continue
        const list = s.live.slice(0, s.at + step)
        const t0 = performance.now()
        await flushStore.flush(s.sid, list)
        times[s.size].push(performance.now() - t0)
      }
    }
  }
  await flushStore.close()
  record({
    workload: `flush after every new message: at ${large - WINDOW + 1}–${large} vs at ${SMALL - WINDOW / 2 + 1}–${SMALL + WINDOW / 2}, interleaved`,
    unit: 'ms/flush',
    turnlog: summarize([percentile(times.large, 50)]),
    baseline: summarize([percentile(times.small, 50)]),
    baselineName: `the same flush at ~${SMALL} messages`,
    goal: '≤ 1.2×',
    goalRatio: 1.2,
    higherIsBetter: false,
    notes: `median per-flush time, ${PAIRS} sessions of each size flushed in alternation, ${WINDOW} flushes each`,
  })
}
