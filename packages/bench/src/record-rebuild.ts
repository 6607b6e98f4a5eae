import type { BenchContext } from './bench-context.js'
import { interleaved } from './interleaved.js'
import { record } from './record.js'
import { summarize, timedRate } from './stats.js'
import { withClient } from './with-client.js'

/** Rebuild of all projections (repair) and `rebuild --verify`, against a streamed read of every payload; throws on drift. */
export async function recordRebuild(ctx: BenchContext): Promise<void> {
  const { args, rawPool, store } = ctx
  const events = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
  const rebuildRates: number[] = []
  const verifyRates: number[] = []
  const rawReadRates: number[] = []
  let rewritten = 0
  for (let r = 0; r < args.runs; r++) {
    await interleaved(r, [
      async () => {
        const { rate } = await timedRate(events, () =>
          withClient(rawPool, async (c) => {
            // streamed in pages with a server-side cursor
            await c.query('begin')
            await c.query(
              'declare all_payloads no scroll cursor for select session_id, seq, payload from turnlog.events order by session_id, seq',
            )
            for (;;) {
              const page = await c.query('fetch 2000 from all_payloads')
              if (page.rows.length === 0) break
            }
            await c.query('commit')
          }),
        )
        rawReadRates.push(rate)
      },
      async () => {
        const { rate, result } = await timedRate(events, () => store.rebuild())
        rebuildRates.push(rate)
        if (result.drift.length > 0) throw new Error(`rebuild found drift in ${result.drift.length} sessions`)
        rewritten = result.rewritten
      },
      async () => {
        const { rate, result } = await timedRate(events, () => store.rebuild({ verify: true }))
        verifyRates.push(rate)
        if (result.drift.length > 0) throw new Error(`rebuild verify found drift in ${result.drift.length} sessions`)
      },
    ])
  }
  const raw = summarize(rawReadRates)
  record({
    workload: 'rebuild of all projections (repair)',
    unit: 'events/s',
    turnlog: summarize(rebuildRates),
    baseline: raw,
    baselineName: 'raw streamed SELECT of all payloads',
    goal: '≥ 0.5×',
    goalRatio: 0.5,
    higherIsBetter: true,
    notes: `${events} events, ${rewritten} sessions recomputed and checked against the fold each run`,
  })
  record({
    workload: 'rebuild --verify (read-only drift check)',
    unit: 'events/s',
    turnlog: summarize(verifyRates),
    baseline: raw,
    baselineName: 'raw streamed SELECT of all payloads',
    goal: 'reported',
    goalRatio: null,
    higherIsBetter: true,
    notes: `${events} events`,
  })
}
