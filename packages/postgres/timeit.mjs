import pg from 'pg'
const db = process.argv[2]
const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${db}` }); await c.connect()
const rows = (await c.query(`select e.session_id, e.seq, e.message_id, encode(e.content_hash,'hex') h, e.payload from turnlog.events e order by session_id, seq`)).rows
const by = new Map(); for (const r of rows) { if (!by.has(r.session_id)) by.set(r.session_id, []); by.get(r.session_id).push(r) }
const sess = [...by.values()]
const group = (k) => { const rs = []; const sids = []; for (let i = 0; i < 8; i++) { const s = sess[(k * 8 + i) % sess.length]; const t = (k % 30) * 2; sids.push(s[0].session_id); rs.push(s[t], s[t + 1]) } return { sids, rs } }
const call = ({ sids, rs }) => c.query({ name: 'ab', text: 'select batch, version from turnlog.append_batches($1::json,$2::json,$3::json,$4::json,$5::json,$6::json,$7::json,$8::json)', values: [
  JSON.stringify(sids), JSON.stringify(sids.map(() => null)), JSON.stringify(sids.map(() => 2)), JSON.stringify(rs.map((r) => r.message_id)),
  JSON.stringify(rs.map((r) => r.h)), JSON.stringify(rs.map(() => crypto.randomUUID())), JSON.stringify(rs.map((r) => r.payload)), JSON.stringify(rs.map(() => ({}))) ] })
for (let k = 0; k < 100; k++) await call(group(k))
const t0 = performance.now(); const N = 1000
for (let k = 0; k < N; k++) await call(group(k))
console.log(db, process.argv[3] ?? '', ((performance.now() - t0) / N).toFixed(3), 'ms/call')
await c.end()
