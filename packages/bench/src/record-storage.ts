import type { BenchContext } from './bench-context.js'
import { record, rows } from './record.js'
import { summarize } from './stats.js'

/** Storage: bytes on disk (events, live messages, sessions) per payload byte; `payloadBytes` is one run's generated payload. */
export async function recordStorage(ctx: BenchContext, payloadBytes: number): Promise<void> {
  const { rawPool } = ctx
  const { rows: size } = await rawPool.query<{ total: string; payload: string; events: string; live: string }>(`
    select pg_total_relation_size('turnlog.events') + pg_total_relation_size('turnlog.live_messages') + pg_total_relation_size('turnlog.sessions') as total,
           pg_total_relation_size('turnlog.events') as events, pg_total_relation_size('turnlog.live_messages') as live,
           (select sum(octet_length(payload::text)) from turnlog.events) as payload`)
  const s = size[0]
  if (s) {
    const ratio = Number(s.total) / Number(s.payload)
    const { rows: n } = await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')
    record({
      workload: 'storage: bytes on disk per payload byte',
      unit: '×',
      turnlog: summarize([ratio]),
      baseline: null,
      baselineName: 'payload bytes',
      goal: '≤ 1.6×',
      goalRatio: null,
      higherIsBetter: false,
      notes: `events ${(Number(s.events) / 1e6).toFixed(1)} MB, live_messages ${(Number(s.live) / 1e6).toFixed(1)} MB, payload ${(Number(s.payload) / 1e6).toFixed(1)} MB; ${(Number(s.total) / Number(n[0]?.n)).toFixed(0)} B per message; generated payload ${(payloadBytes / 1e6).toFixed(1)} MB per run`,
    })
    const last = rows[rows.length - 1]
    if (last) last.met = ratio <= 1.6
  }
}
