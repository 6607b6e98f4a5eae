import { openStore, type PostgresStore } from '@turnlog/postgres'
import type { Args } from './parse-args.js'
import { record } from './record.js'
import { percentile, summarize } from './stats.js'
import { generateSession } from './workload.js'

/** PGlite (embedded): append with one writer and the load time, reported (no baseline). */
export async function recordPglite(args: Args): Promise<void> {
  const lite: PostgresStore = await openStore({ embedded: true })
  const sessions = Array.from({ length: args.quick ? 10 : 40 }, (_, i) => generateSession(7, i, args.messages))
  const count = sessions.reduce((n, s) => n + s.messageCount, 0)
  const ids: string[] = []
  let t0 = performance.now()
  for (const s of sessions) {
    const id = await lite.createSession()
    ids.push(id)
    for (const turn of s.turns) await lite.append(id, turn)
  }
  const appendRate = count / ((performance.now() - t0) / 1000)
  const loads: number[] = []
  for (const id of ids) {
    t0 = performance.now()
    await lite.load(id)
    loads.push(performance.now() - t0)
  }
  await lite.close()
  record({
    workload: 'PGlite (embedded): append, 1 writer',
    unit: 'msg/s',
    turnlog: summarize([appendRate]),
    baseline: null,
    baselineName: '—',
    goal: 'reported',
    goalRatio: null,
    higherIsBetter: true,
    notes: `load p50 ${percentile(loads, 50).toFixed(2)} ms for ${args.messages} messages`,
  })
}
