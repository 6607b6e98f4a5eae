import { openStore } from '@turnlog/postgres'
import pg from 'pg'
const url = `postgres://postgres@127.0.0.1:5432/${process.argv[2]}`
const store = await openStore({ connectionString: url, pool: { max: 8 }, migrate: false })
const raw = new pg.Pool({ connectionString: url, max: 2 })
const n = Number((await raw.query('select count(*) n from turnlog.events')).rows[0].n)
for (let i = 0; i < 3; i++) {
  let t0 = performance.now()
  const c = await raw.connect()
  await c.query('begin'); await c.query('declare x no scroll cursor for select session_id, seq, payload from turnlog.events order by session_id, seq')
  for (;;) { const p = await c.query('fetch 2000 from x'); if (p.rows.length === 0) break }
  await c.query('commit'); c.release()
  const tr = performance.now() - t0
  t0 = performance.now(); const v = await store.rebuild({ verify: true }); const tv = performance.now() - t0
  t0 = performance.now(); const r = await store.rebuild(); const tb = performance.now() - t0
  console.log(`raw ${(n/tr*1000).toFixed(0)}/s verify ${(n/tv*1000).toFixed(0)}/s (${(tr/tv).toFixed(2)}x) rebuild ${(n/tb*1000).toFixed(0)}/s (${(tr/tb).toFixed(2)}x) drift ${v.drift.length} ${r.drift.length} rewritten ${r.rewritten}`)
}
await store.close(); await raw.end()
