import { openStore } from '@turnlog/postgres'
import pg from 'pg'
import type { BenchContext } from './bench-context.js'
import { record } from './record.js'
import { sessionUuid } from './session-uuid.js'
import { percentile, summarize, type Summary } from './stats.js'
import type { GeneratedSession } from './workload.js'

/** Load of one session (p50 of up to 200 of run 0's sessions × 3 passes), against a raw `SELECT … ORDER BY seq`. */
export async function recordLoad(ctx: BenchContext, generated: readonly GeneratedSession[][]): Promise<void> {
  const { args, connectionString } = ctx
  const sample = (generated[0] ?? []).slice(0, Math.min(200, args.sessions))
  const ids = sample.map((s) => sessionUuid(0, s.index))
  const t: number[] = []
  const r: number[] = []
  const loadStore = await openStore({ directConnection: true, connectionString, pool: { max: 1 }, migrate: false })
  const rawOne = new pg.Pool({ connectionString, max: 1 })
  for (let pass = 0; pass < 3; pass++) {
    for (const id of ids) {
      let t0 = performance.now()
      const raw = await rawOne.query('select message_id, payload from bench_raw.events where session_id = $1 order by seq', [id])
      r.push(performance.now() - t0)
      t0 = performance.now()
      const loaded = await loadStore.load(id)
      t.push(performance.now() - t0)
      if (loaded.messages.length !== raw.rows.length) throw new Error(`load returned ${loaded.messages.length}, raw ${raw.rows.length}`)
    }
  }
  await loadStore.close()
  await rawOne.end()
  const p = (xs: number[], q: number): Summary => summarize([percentile(xs, q)])
  record({
    workload: `load: ${args.messages}-message session, p50`,
    unit: 'ms',
    turnlog: p(t, 50),
    baseline: p(r, 50),
    baselineName: 'raw SELECT … ORDER BY seq',
    goal: '≤ 1.2×',
    goalRatio: 1.2,
    higherIsBetter: false,
    notes: `${ids.length} sessions × 3 passes, interleaved per call; p99 turnlog ${percentile(t, 99).toFixed(2)} ms, raw ${percentile(r, 99).toFixed(2)} ms`,
  })
}
