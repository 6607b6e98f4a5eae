#!/usr/bin/env node
/**
 * `pnpm bench [--quick]`: turnlog against raw Postgres in the same run. Every figure is a ratio
 * against a baseline measured in the same process on the same server, so a noisy machine moves both.
 * Options: --quick, --sessions N, --messages M, --runs R, --database-url URL (an admin URL; the bench
 * creates and drops its own database), --out DIR, --only a,b (workload names).
 * @packageDocumentation
 */
import { contentHash, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { percentile, pool, summarize, type Summary } from './stats.js'
import { generateSession, type GeneratedSession } from './workload.js'

interface Args {
  quick: boolean
  sessions: number
  messages: number
  runs: number
  adminUrl: string
  out: string
  only: Set<string> | null
}

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const quick = argv.includes('--quick')
  return {
    quick,
    sessions: Number(get('sessions') ?? (quick ? 120 : 1000)),
    messages: Number(get('messages') ?? (quick ? 60 : 100)),
    runs: Number(get('runs') ?? 3),
    adminUrl: get('database-url') ?? process.env['TURNLOG_BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    out: get('out') ?? 'bench-results',
    only: get('only') === undefined ? null : new Set((get('only') ?? '').split(',')),
  }
}

/** One row of the results table. */
interface Row {
  workload: string
  unit: string
  turnlog: Summary
  baseline: Summary | null
  baselineName: string
  ratio: number | null
  goal: string
  met: boolean | null
  notes: string
}

const rows: Row[] = []
function record(row: Omit<Row, 'ratio' | 'met'> & { higherIsBetter: boolean; goalRatio: number | null }): void {
  const ratio = row.baseline === null ? null : row.higherIsBetter ? row.turnlog.median / row.baseline.median : row.turnlog.median / row.baseline.median
  const met = ratio === null || row.goalRatio === null ? null : row.higherIsBetter ? ratio >= row.goalRatio : ratio <= row.goalRatio
  const { higherIsBetter: _h, goalRatio: _g, ...rest } = row
  rows.push({ ...rest, ratio, met })
  const fmt = (s: Summary | null): string => (s === null ? '—' : `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})`)
  console.error(`${row.workload}: turnlog ${fmt(row.turnlog)} ${row.unit}; ${row.baselineName} ${fmt(row.baseline)}; ratio ${ratio?.toFixed(2) ?? '—'} (goal ${row.goal})`)
}

async function withClient<T>(p: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await p.connect()
  try {
    return await fn(c)
  } finally {
    c.release()
  }
}

const RAW_SCHEMA = `
  create schema if not exists bench_raw;
  create table if not exists bench_raw.events (
    session_id uuid not null, seq bigint not null, message_id uuid not null, content_hash bytea not null,
    payload json not null, primary key (session_id, seq));
`

/** The raw baseline's statement for one turn: one multi-row INSERT … ON CONFLICT DO NOTHING. */
function rawTurnStatement(sessionId: string, firstSeq: number, turn: readonly Message[]): { text: string; values: unknown[] } {
  const values: unknown[] = []
  const tuples = turn.map((m, i) => {
    values.push(sessionId, firstSeq + i, m.id, Buffer.from(contentHash(m), 'hex'), JSON.stringify(m.payload))
    const b = i * 5
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::json)`
  })
  return { text: `insert into bench_raw.events (session_id, seq, message_id, content_hash, payload) values ${tuples.join(',')} on conflict do nothing`, values }
}

function sessionUuid(run: number, index: number): string {
  const hex = (run * 1_000_000 + index).toString(16).padStart(12, '0')
  return `00000000-0000-7000-8000-${hex}`
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const wants = (name: string): boolean => args.only === null || args.only.has(name)
  const dbName = `turnlog_bench_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: args.adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const url = new URL(args.adminUrl)
  url.pathname = `/${dbName}`
  const connectionString = url.toString()
  const started = Date.now()
  const settings = await admin.query<{ name: string; setting: string }>(
    `select name, setting from pg_settings where name in ('server_version','shared_buffers','synchronous_commit','fsync','wal_level','max_connections')`,
  )
  const rawPool = new pg.Pool({ connectionString, max: 8 })
  rawPool.on('error', () => {})
  await rawPool.query(RAW_SCHEMA)
  const store = await openStore({ connectionString, pool: { max: 8 } })
  const writers = 8
  const totalMessages = args.sessions * args.messages
  console.error(`bench: ${args.sessions} sessions × ${args.messages} messages, ${args.runs} runs, 8 writers, db ${dbName}`)

  try {
    // --- per-turn append, 8 writers ------------------------------------------------------------
    const appendRates: number[] = []
    const rawRates: number[] = []
    const generated: GeneratedSession[][] = []
    let payloadBytes = 0
    if (wants('append')) {
      for (let run = 0; run < args.runs; run++) {
        const sessions = Array.from({ length: args.sessions }, (_, i) => generateSession(run + 1, i, args.messages))
        generated.push(sessions)
        const count = sessions.reduce((n, s) => n + s.messageCount, 0)
        if (run === 0) payloadBytes = sessions.reduce((n, s) => n + s.turns.flat().reduce((b, m) => b + JSON.stringify(m.payload).length, 0), 0)
        const ids = sessions.map((s) => sessionUuid(run, s.index))
        for (const id of ids) await store.createSession({ id })
        // alternate which side goes first, so drift of the machine does not favour one
        const doRaw = async (): Promise<void> => {
          const t0 = performance.now()
          await pool(sessions, writers, async (s) => {
            let seq = 1
            const sid = ids[s.index] as string
            for (const turn of s.turns) {
              const st = rawTurnStatement(sid, seq, turn)
              await rawPool.query(st.text, st.values)
              seq += turn.length
            }
          })
          rawRates.push(count / ((performance.now() - t0) / 1000))
        }
        const doTurnlog = async (): Promise<void> => {
          const t0 = performance.now()
          await pool(sessions, writers, async (s) => {
            const sid = ids[s.index] as string
            for (const turn of s.turns) await store.append(sid, turn)
          })
          appendRates.push(count / ((performance.now() - t0) / 1000))
        }
        if (run % 2 === 0) {
          await doRaw()
          await doTurnlog()
        } else {
          await doTurnlog()
          await doRaw()
        }
      }
      record({ workload: 'append: per-turn durable append, 8 writers', unit: 'msg/s', turnlog: summarize(appendRates), baseline: summarize(rawRates), baselineName: 'raw INSERT … ON CONFLICT DO NOTHING per turn', goal: '≥ 0.85×', goalRatio: 0.85, higherIsBetter: true, notes: `${totalMessages} messages per run` })

      // --- retry storm: the same turns again ----------------------------------------------------
      const first = generated[0] ?? []
      const ids0 = first.map((s) => sessionUuid(0, s.index))
      const before = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      const retryStore = await openStore({ connectionString, pool: { max: 8 }, migrate: false })
      const count0 = first.reduce((n, s) => n + s.messageCount, 0)
      const retryRates: number[] = []
      const rawRetryRates: number[] = []
      let rawWritten = 0
      for (let r = 0; r < args.runs; r++) {
        let t0 = performance.now()
        await pool(first, writers, async (s) => {
          let seq = 1
          for (const turn of s.turns) {
            const st = rawTurnStatement(ids0[s.index] as string, seq, turn)
            rawWritten += (await rawPool.query(st.text, st.values)).rowCount ?? 0
            seq += turn.length
          }
        })
        rawRetryRates.push(count0 / ((performance.now() - t0) / 1000))
        t0 = performance.now()
        await pool(first, writers, async (s) => {
          for (const turn of s.turns) await retryStore.append(ids0[s.index] as string, turn)
        })
        retryRates.push(count0 / ((performance.now() - t0) / 1000))
      }
      await retryStore.close()
      const after = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      record({ workload: 'retry storm: the same turns re-appended', unit: 'msg/s', turnlog: summarize(retryRates), baseline: summarize(rawRetryRates), baselineName: 'raw replay of the statements', goal: '≥ 0.8×, 0 rows written', goalRatio: 0.8, higherIsBetter: true, notes: `rows written: turnlog ${after - before}, raw ${rawWritten}` })
      if (after !== before) throw new Error(`retry storm wrote ${after - before} events`)
    }

    // --- load of a 100-message session ------------------------------------------------------------
    if (wants('load') && generated.length > 0) {
      const sample = (generated[0] ?? []).slice(0, Math.min(200, args.sessions))
      const ids = sample.map((s) => sessionUuid(0, s.index))
      const t: number[] = []
      const r: number[] = []
      const loadStore = await openStore({ connectionString, pool: { max: 1 }, migrate: false })
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
      record({ workload: `load: ${args.messages}-message session, p50`, unit: 'ms', turnlog: p(t, 50), baseline: p(r, 50), baselineName: 'raw SELECT … ORDER BY seq', goal: '≤ 1.5×', goalRatio: 1.5, higherIsBetter: false, notes: `p99 turnlog ${percentile(t, 99).toFixed(2)} ms, raw ${percentile(r, 99).toFixed(2)} ms` })
    }

    // --- flush scaling ----------------------------------------------------------------------------
    if (wants('flush')) {
      const big = generateSession(99, 0, args.quick ? 600 : 2000)
      const live = big.turns.flat()
      const sid = await store.createSession()
      const flushStore = await openStore({ connectionString, pool: { max: 1 }, migrate: false })
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
      record({ workload: `flush after every new message: at ${live.length} vs at 100`, unit: 'ms/flush', turnlog: large, baseline: small, baselineName: 'the same flush at ~100 messages', goal: '≤ 1.5×', goalRatio: 1.5, higherIsBetter: false, notes: 'median per-flush time' })
    }

    // --- rebuild ----------------------------------------------------------------------------------
    if (wants('rebuild') && generated.length > 0) {
      const events = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      const rebuildRates: number[] = []
      const rawReadRates: number[] = []
      for (let r = 0; r < Math.min(args.runs, 2); r++) {
        let t0 = performance.now()
        await withClient(rawPool, async (c) => {
          // streamed in pages with a server-side cursor
          await c.query('begin')
          await c.query('declare all_payloads no scroll cursor for select session_id, seq, payload from turnlog.events order by session_id, seq')
          for (;;) {
            const page = await c.query('fetch 2000 from all_payloads')
            if (page.rows.length === 0) break
          }
          await c.query('commit')
        })
        rawReadRates.push(events / ((performance.now() - t0) / 1000))
        t0 = performance.now()
        const result = await store.rebuild()
        rebuildRates.push(events / ((performance.now() - t0) / 1000))
        if (result.drift.length > 0) throw new Error(`rebuild found drift in ${result.drift.length} sessions`)
      }
      record({ workload: 'rebuild of all projections', unit: 'events/s', turnlog: summarize(rebuildRates), baseline: summarize(rawReadRates), baselineName: 'raw streamed SELECT of all payloads', goal: '≥ 0.5×', goalRatio: 0.5, higherIsBetter: true, notes: `${events} events` })
    }

    // --- storage ----------------------------------------------------------------------------------
    if (wants('storage') && generated.length > 0) {
      const { rows: size } = await rawPool.query<{ total: string; payload: string; events: string; live: string }>(`
        select pg_total_relation_size('turnlog.events') + pg_total_relation_size('turnlog.live_messages') + pg_total_relation_size('turnlog.sessions') as total,
               pg_total_relation_size('turnlog.events') as events, pg_total_relation_size('turnlog.live_messages') as live,
               (select sum(octet_length(payload::text)) from turnlog.events) as payload`)
      const s = size[0]
      if (s) {
        const ratio = Number(s.total) / Number(s.payload)
        const { rows: n } = await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')
        record({ workload: 'storage: bytes on disk per payload byte', unit: '×', turnlog: summarize([ratio]), baseline: null, baselineName: 'payload bytes', goal: '≤ 1.6×', goalRatio: null, higherIsBetter: false, notes: `events ${(Number(s.events) / 1e6).toFixed(1)} MB, live_messages ${(Number(s.live) / 1e6).toFixed(1)} MB, payload ${(Number(s.payload) / 1e6).toFixed(1)} MB; ${(Number(s.total) / Number(n[0]?.n)).toFixed(0)} B per message; generated payload ${(payloadBytes / 1e6).toFixed(1)} MB per run` })
        const last = rows[rows.length - 1]
        if (last) last.met = ratio <= 1.6
      }
    }

    // --- PGlite -----------------------------------------------------------------------------------
    if (wants('pglite')) {
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
      record({ workload: 'PGlite (embedded): append, 1 writer', unit: 'msg/s', turnlog: summarize([appendRate]), baseline: null, baselineName: '—', goal: 'reported', goalRatio: null, higherIsBetter: true, notes: `load p50 ${percentile(loads, 50).toFixed(2)} ms for ${args.messages} messages` })
    }
  } finally {
    await store.close()
    await rawPool.end()
    await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.end()
  }

  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '?', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version }
  const result = {
    when: new Date().toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(' ')}`.trim(),
    machine,
    postgres: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
    sessions: args.sessions,
    messagesPerSession: args.messages,
    runs: args.runs,
    seconds: Math.round((Date.now() - started) / 1000),
    rows,
  }
  const table = [
    '| workload | turnlog | baseline | ratio | goal | met |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const f = (s: Summary | null): string => (s === null ? '—' : `${s.median.toFixed(s.median < 10 ? 2 : 0)} ${r.unit} (${s.min.toFixed(s.min < 10 ? 2 : 0)}–${s.max.toFixed(s.max < 10 ? 2 : 0)})`)
      return `| ${r.workload} | ${f(r.turnlog)} | ${r.baselineName}: ${f(r.baseline)} | ${r.ratio === null ? '—' : r.ratio.toFixed(2) + '×'} | ${r.goal} | ${r.met === null ? '—' : r.met ? 'yes' : 'no'} |`
    }),
    '',
    ...rows.filter((r) => r.notes).map((r) => `- ${r.workload}: ${r.notes}`),
  ].join('\n')
  const markdown = `# turnlog bench, ${result.when}\n\nCommand: \`${result.command}\`; ${result.seconds} s. Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}. Postgres: ${JSON.stringify(result.postgres)}.\n\n${table}\n`
  mkdirSync(args.out, { recursive: true })
  writeFileSync(join(args.out, 'latest.json'), JSON.stringify(result, null, 2))
  writeFileSync(join(args.out, 'latest.md'), markdown)
  console.log(markdown)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
