import pg from 'pg'
const db = process.argv[2]
const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:5432/${db}` }); await c.connect()
const rows = (await c.query(`select e.session_id, e.message_id, encode(e.content_hash,'hex') h, e.payload from turnlog.events e where seq in (1,2) order by session_id, seq limit 16`)).rows
const sids = [...new Set(rows.map((r) => r.session_id))]
const args = [JSON.stringify(sids), JSON.stringify(sids.map(() => null)), JSON.stringify(sids.map(() => 2)), JSON.stringify(rows.map((r) => r.message_id)),
  JSON.stringify(rows.map((r) => r.h)), JSON.stringify(rows.map(() => crypto.randomUUID())), JSON.stringify(rows.map((r) => r.payload)), JSON.stringify(rows.map(() => ({})))]
const q = { name: 'ab', text: 'select batch, version from turnlog.append_batches($1::json,$2::json,$3::json,$4::json,$5::json,$6::json,$7::json,$8::json)', values: args }
for (let i = 0; i < 8; i++) await c.query(q)
c.on('notice', (n) => console.log(n.message))
await c.query("load 'auto_explain'"); await c.query('set auto_explain.log_min_duration = 0'); await c.query('set auto_explain.log_nested_statements = on'); await c.query('set auto_explain.log_analyze = on'); await c.query('set client_min_messages = log')
await c.query(q)
await c.end()
