#!/usr/bin/env node
/**
 * `pnpm bench [--quick]`: turnlog against raw Postgres (and a peer) in the same run. Every figure is a
 * ratio against a baseline measured in the same process on the same server, interleaved with it (the
 * order alternates run by run), so a noisy machine moves both; each ratio is of medians of ≥ 3 runs.
 * Options: --quick, --sessions N, --messages M, --runs R, --database-url URL (an admin URL; the bench
 * creates and drops its own databases), --out DIR, --only a,b (workload names: append, emmett, retry,
 * single, load, flush, rebuild, rss, import, storage, pglite, telemetry, langgraph), --group-commit off|B,F (the store's
 * group commit: off, or at most B batches per group and F statements in flight).
 * @packageDocumentation
 */
import { exportSessions, importEvents } from '@turnlog/audit'
import { createMessage } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { EmmettResult, RebuildMemoryResult } from './child.js'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import { recordLangGraph } from './langgraph-workload.js'
import { parseArgs, type WORKLOADS } from './parse-args.js'
import { rawCopyImport } from './raw-copy-import.js'
import { RAW_SCHEMA, rawTurnStatement } from './raw-turn-statement.js'
import { record, rows } from './record.js'
import { recordTelemetryOverhead } from './record-telemetry-overhead.js'
import { runChild } from './run-child.js'
import { sessionUuid } from './session-uuid.js'
import { percentile, pool, summarize, type Summary } from './stats.js'
import { withClient } from './with-client.js'
import { generateSession, type GeneratedSession } from './workload.js'

/** Rebuild memory at one database size, from child processes (MiB, seconds). */
interface RebuildMemory {
  readonly sessions: number
  readonly rssPeak: Summary
  readonly rssBefore: Summary
  readonly liveHeapPeak: Summary
  readonly seconds: Summary
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const wants = (name: (typeof WORKLOADS)[number]): boolean => args.only === null || args.only.has(name)
  const dbName = `turnlog_bench_${Date.now().toString(36)}`
  const admin = new pg.Client({ connectionString: args.adminUrl })
  await admin.connect()
  await admin.query(`create database ${dbName}`)
  const connectionString = databaseUrl(args.adminUrl, dbName)
  const started = Date.now()
  const settings = await admin.query<{ name: string; setting: string; unit: string | null }>(
    `select name, setting, unit from pg_settings
      where name in ('server_version','shared_buffers','work_mem','synchronous_commit','fsync','wal_level','max_connections','jit','max_wal_size')`,
  )
  const rawPool = new pg.Pool({ connectionString, max: 8 })
  rawPool.on('error', () => {})
  await rawPool.query(RAW_SCHEMA)
  const store = await openStore({
    directConnection: true,
    connectionString,
    pool: { max: 8 },
    ...(args.groupCommit === undefined ? {} : { groupCommit: args.groupCommit }),
  })
  const writers = 8
  const totalMessages = args.sessions * args.messages
  const extraDatabases: string[] = []
  console.error(`bench: ${args.sessions} sessions × ${args.messages} messages, ${args.runs} runs, 8 writers, db ${dbName}`)
  /** Three child rebuilds measuring the resident set, three (with --expose-gc) the heap held: medians. */
  const rebuildMemory = async (): Promise<RebuildMemory> => {
    const plain: RebuildMemoryResult[] = []
    const collected: RebuildMemoryResult[] = []
    for (let i = 0; i < 3; i++) {
      plain.push(await runChild<RebuildMemoryResult>(['rebuild-memory', connectionString]))
      collected.push(await runChild<RebuildMemoryResult>(['rebuild-memory', connectionString], ['--expose-gc']))
    }
    return {
      sessions: plain[0]?.sessions ?? 0,
      rssPeak: summarize(plain.map((r) => r.rssPeak / 2 ** 20)),
      rssBefore: summarize(plain.map((r) => r.rssBefore / 2 ** 20)),
      liveHeapPeak: summarize(collected.map((r) => (r.liveHeapPeak ?? 0) / 2 ** 20)),
      seconds: summarize(plain.map((r) => r.seconds)),
    }
  }
  let memorySmall: RebuildMemory | null = null

  try {
    // --- per-turn append, 8 writers: raw, turnlog and the peer (Emmett) interleaved ---------------
    const appendRates: number[] = []
    const rawRates: number[] = []
    const emmettRates: number[] = []
    const singleRates: number[] = []
    // the same appends with the group commit off: what grouping buys. In a database of its own, dropped
    // after the append runs, so the workloads after these run on the same data as without it
    const singleDb = `${dbName}_single`
    if (wants('single')) {
      await admin.query(`create database ${singleDb}`)
      extraDatabases.push(singleDb)
    }
    const singleStore = wants('single')
      ? await openStore({
          directConnection: true,
          connectionString: databaseUrl(args.adminUrl, singleDb),
          pool: { max: 8 },
          groupCommit: false,
        })
      : null
    const generated: GeneratedSession[][] = []
    let payloadBytes = 0
    if (wants('append') || wants('emmett') || wants('single')) {
      for (let run = 0; run < args.runs; run++) {
        const sessions = Array.from({ length: args.sessions }, (_, i) => generateSession(run + 1, i, args.messages))
        generated.push(sessions)
        const count = sessions.reduce((n, s) => n + s.messageCount, 0)
        if (run === 0)
          payloadBytes = sessions.reduce((n, s) => n + s.turns.flat().reduce((b, m) => b + JSON.stringify(m.payload).length, 0), 0)
        const ids = sessions.map((s) => sessionUuid(run, s.index))
        for (const id of ids) await store.createSession({ id })
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
        const doSingle = async (): Promise<void> => {
          if (singleStore === null) return
          const own = sessions.map((s) => sessionUuid(run + 500, s.index))
          for (const id of own) await singleStore.createSession({ id })
          // the same payloads under new ids (a message id belongs to one session)
          const copies = sessions.map((s) => s.turns.map((turn) => turn.map((m) => createMessage(m.payload))))
          const t0 = performance.now()
          await pool(sessions, writers, async (s) => {
            const sid = own[s.index] as string
            for (const turn of copies[s.index] ?? []) await singleStore.append(sid, turn)
          })
          singleRates.push(count / ((performance.now() - t0) / 1000))
        }
        const doEmmett = async (): Promise<void> => {
          const r = await runChild<EmmettResult>([
            'emmett',
            connectionString,
            String(run),
            String(args.sessions),
            String(args.messages),
            String(writers),
          ])
          emmettRates.push(r.messages / r.seconds)
        }
        await interleaved(run, [
          doTurnlog,
          ...(wants('append') ? [doRaw] : []),
          ...(wants('emmett') ? [doEmmett] : []),
          ...(wants('single') ? [doSingle] : []),
        ])
        // rebuild memory at S sessions (the second figure is taken at the end, at runs × S)
        if (run === 0 && wants('rss')) memorySmall = await rebuildMemory()
      }
      if (wants('append')) {
        record({
          workload: 'append: per-turn durable append, 8 writers',
          unit: 'msg/s',
          turnlog: summarize(appendRates),
          baseline: summarize(rawRates),
          baselineName: 'raw INSERT … ON CONFLICT DO NOTHING per turn',
          goal: '≥ 0.85×',
          goalRatio: 0.85,
          higherIsBetter: true,
          notes: `${totalMessages} messages per run; turnlog's stores are opened with { directConnection: true } (named prepared statements, no JIT or parallel workers on their connections)`,
        })
      }
      if (wants('single') && wants('append')) {
        record({
          workload: 'append with the group commit off: per-turn append, 8 writers',
          unit: 'msg/s',
          turnlog: summarize(singleRates),
          baseline: summarize(rawRates),
          baselineName: 'raw INSERT … ON CONFLICT DO NOTHING per turn',
          goal: 'reported',
          goalRatio: null,
          higherIsBetter: true,
          notes: `${totalMessages} messages per run; openStore({ groupCommit: false }): one append_messages statement and one commit per turn`,
        })
      }
      await singleStore?.close()
      if (singleStore !== null) await admin.query(`drop database ${singleDb} with (force)`)
      if (wants('emmett')) {
        record({
          workload: 'append vs the peer: per-turn append, 8 writers',
          unit: 'msg/s',
          turnlog: summarize(appendRates),
          baseline: summarize(emmettRates),
          baselineName: 'Emmett 0.42 appendToStream per turn',
          goal: 'reported (turnlog ÷ Emmett)',
          goalRatio: null,
          higherIsBetter: true,
          notes: `${totalMessages} messages per run; Emmett runs in a child process (it replaces pg's global type parsers), one stream per session, no expected version`,
        })
      }
    }

    // later workloads use run 0's sessions only: the other runs' generated messages (≈ 1 GB of heap at
    // the full size) would only make this process's garbage collections, and so its timings, slower
    generated.splice(1)

    // --- retry storm: the same turns again -------------------------------------------------------
    if (wants('retry') && generated.length > 0) {
      // a sample of run 0's sessions: a full re-append of every session would dominate the bench's time
      const first = (generated[0] ?? []).slice(0, args.quick ? args.sessions : Math.min(args.sessions, 250))
      const ids0 = first.map((s) => sessionUuid(0, s.index))
      const before = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      const retryStore = await openStore({
        directConnection: true,
        connectionString,
        pool: { max: 8 },
        migrate: false,
        ...(args.groupCommit === undefined ? {} : { groupCommit: args.groupCommit }),
      })
      const count0 = first.reduce((n, s) => n + s.messageCount, 0)
      const retryRates: number[] = []
      const rawRetryRates: number[] = []
      let rawWritten = 0
      for (let r = 0; r < args.runs; r++) {
        await interleaved(r, [
          async () => {
            const t0 = performance.now()
            await pool(first, writers, async (s) => {
              let seq = 1
              for (const turn of s.turns) {
                const st = rawTurnStatement(ids0[s.index] as string, seq, turn)
                rawWritten += (await rawPool.query(st.text, st.values)).rowCount ?? 0
                seq += turn.length
              }
            })
            rawRetryRates.push(count0 / ((performance.now() - t0) / 1000))
          },
          async () => {
            const t0 = performance.now()
            await pool(first, writers, async (s) => {
              for (const turn of s.turns) await retryStore.append(ids0[s.index] as string, turn)
            })
            retryRates.push(count0 / ((performance.now() - t0) / 1000))
          },
        ])
      }
      await retryStore.close()
      const after = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      record({
        workload: 'retry storm: the same turns re-appended',
        unit: 'msg/s',
        turnlog: summarize(retryRates),
        baseline: summarize(rawRetryRates),
        baselineName: 'raw replay of the statements',
        goal: '≥ 0.8×, 0 rows written',
        goalRatio: 0.8,
        higherIsBetter: true,
        notes: `${count0} messages (${first.length} sessions) per run; rows written: turnlog ${after - before}, raw ${rawWritten}`,
      })
      if (after !== before) throw new Error(`retry storm wrote ${after - before} events`)
    }

    // --- load of one session --------------------------------------------------------------------
    if (wants('load') && generated.length > 0) {
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
        goal: '≤ 1.5×',
        goalRatio: 1.5,
        higherIsBetter: false,
        notes: `${ids.length} sessions × 3 passes, interleaved per call; p99 turnlog ${percentile(t, 99).toFixed(2)} ms, raw ${percentile(r, 99).toFixed(2)} ms`,
      })
    }

    // --- flush scaling --------------------------------------------------------------------------
    if (wants('flush')) {
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
        goal: '≤ 1.5×',
        goalRatio: 1.5,
        higherIsBetter: false,
        notes: 'median per-flush time',
      })
    }

    // --- rebuild: repair and verify, against a streamed read of every payload --------------------
    if (wants('rebuild') && generated.length > 0) {
      const events = Number((await rawPool.query<{ n: string }>('select count(*) as n from turnlog.events')).rows[0]?.n)
      const rebuildRates: number[] = []
      const verifyRates: number[] = []
      const rawReadRates: number[] = []
      let rewritten = 0
      for (let r = 0; r < args.runs; r++) {
        await interleaved(r, [
          async () => {
            const t0 = performance.now()
            await withClient(rawPool, async (c) => {
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
            })
            rawReadRates.push(events / ((performance.now() - t0) / 1000))
          },
          async () => {
            const t0 = performance.now()
            const result = await store.rebuild()
            rebuildRates.push(events / ((performance.now() - t0) / 1000))
            if (result.drift.length > 0) throw new Error(`rebuild found drift in ${result.drift.length} sessions`)
            rewritten = result.rewritten
          },
          async () => {
            const t0 = performance.now()
            const result = await store.rebuild({ verify: true })
            verifyRates.push(events / ((performance.now() - t0) / 1000))
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

    // --- rebuild memory at two sizes ------------------------------------------------------------
    if (wants('rss') && memorySmall !== null) {
      const small = memorySmall
      const large = await rebuildMemory()
      const n = (s: Summary): string => s.median.toFixed(0)
      record({
        workload: `rebuild memory held: peak heap after GC, at ${large.sessions} sessions vs at ${small.sessions}`,
        unit: 'MiB',
        turnlog: large.liveHeapPeak,
        baseline: small.liveHeapPeak,
        baselineName: `at ${small.sessions} sessions`,
        goal: '≤ 1.2× (flat)',
        goalRatio: 1.2,
        higherIsBetter: false,
        notes: `child processes with --expose-gc, a collection every 10 sessions; medians of 3`,
      })
      record({
        workload: `rebuild peak RSS, at ${large.sessions} sessions vs at ${small.sessions}`,
        unit: 'MiB',
        turnlog: large.rssPeak,
        baseline: small.rssPeak,
        baselineName: `at ${small.sessions} sessions`,
        goal: 'reported',
        goalRatio: null,
        higherIsBetter: false,
        notes: `child processes, medians of 3; RSS before the rebuild ${n(small.rssBefore)} / ${n(large.rssBefore)} MiB; rebuild ${small.seconds.median.toFixed(1)} / ${large.seconds.median.toFixed(1)} s. The resident set follows V8's heap sizing (it grows while allocation is fast, whatever is still in use), so it moves from run to run`,
      })
    }

    // --- bulk import of an export, against COPY of the same rows ---------------------------------
    if (wants('import') && generated.length > 0) {
      // 100 sessions: importEvents' cost per session grows with the target's size (see docs/performance.md)
      const sample = (generated[0] ?? []).slice(0, Math.min(args.sessions, 100)).map((s) => sessionUuid(0, s.index))
      const lines: string[] = []
      for await (const line of exportSessions(store, { sessionIds: sample })) lines.push(line)
      const eventCount = lines.length - sample.length - 2
      const importRates: number[] = []
      const copyRates: number[] = []
      for (let r = 0; r < args.runs; r++) {
        await interleaved(r, [
          async () => {
            const name = `${dbName}_import_${r}`
            await admin.query(`create database ${name}`)
            extraDatabases.push(name)
            const target = await openStore({ directConnection: true, connectionString: databaseUrl(args.adminUrl, name), pool: { max: 2 } })
            try {
              const t0 = performance.now()
              const result = await importEvents(target, lines)
              importRates.push(result.eventsWritten / ((performance.now() - t0) / 1000))
              if (result.eventsWritten !== eventCount) throw new Error(`import wrote ${result.eventsWritten} of ${eventCount} events`)
            } finally {
              await target.close()
            }
            await admin.query(`drop database ${name} with (force)`)
          },
          async () => {
            copyRates.push(await rawCopyImport(rawPool, lines, `bench_raw.import_${r}`))
          },
        ])
      }
      record({
        workload: 'import of an export (exportSessions → importEvents)',
        unit: 'events/s',
        turnlog: summarize(importRates),
        baseline: summarize(copyRates),
        baselineName: 'raw COPY FROM STDIN of the same rows',
        goal: '≥ 0.7×',
        goalRatio: 0.7,
        higherIsBetter: true,
        notes: `${sample.length} sessions, ${eventCount} events per run, into a fresh database each run (migrated before timing); the raw side parses the same lines and COPYs them into tables with a primary key`,
      })
    }

    // --- storage --------------------------------------------------------------------------------
    if (wants('storage') && generated.length > 0) {
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

    // --- telemetry overhead (telemetry-overhead.ts) ---------------------------------------------
    if (wants('telemetry')) await recordTelemetryOverhead(connectionString, args)

    // --- LangGraph checkpoint saver vs the stock Postgres saver (langgraph-workload.ts) -----------
    if (wants('langgraph')) await recordLangGraph(args, admin, dbName)

    // --- PGlite ---------------------------------------------------------------------------------
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
  } finally {
    await store.close()
    await rawPool.end()
    for (const name of [dbName, ...extraDatabases]) await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
  }

  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  }
  const result = {
    when: new Date().toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(' ')}`.trim(),
    machine,
    postgres: Object.fromEntries(settings.rows.map((r) => [r.name, r.unit ? `${r.setting} (${r.unit})` : r.setting])),
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
      const f = (s: Summary | null): string =>
        s === null
          ? '—'
          : `${s.median.toFixed(s.median < 10 ? 2 : 0)} ${r.unit} (${s.min.toFixed(s.min < 10 ? 2 : 0)}–${s.max.toFixed(s.max < 10 ? 2 : 0)})`
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
