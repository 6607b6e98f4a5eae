#!/usr/bin/env node
/**
 * `pnpm bench [--quick]`: turnlog against raw Postgres (and a peer) in the same run. Every figure is a
 * ratio against a baseline measured in the same process on the same server, interleaved with it (the
 * order alternates run by run), so a noisy machine moves both; each ratio is of medians of ≥ 3 runs.
 * Options: --quick, --sessions N, --messages M, --runs R, --database-url URL (an admin URL; the bench
 * creates and drops its own databases), --out DIR, --only a,b (workload names: append, emmett, retry,
 * single, load, flush, rebuild, rss, import, storage, pglite, telemetry, langgraph, langgraph-storage, rls, scale), --group-commit off|B,F (the store's
 * group commit: off, or at most B batches per group and F statements in flight). `langgraph-storage` (a
 * minute or two, storage only) and `scale` run only when `--only` names them; `scale` (minutes and gigabytes): --scale-messages N (default 5,000,000), --scale-sessions S
 * (default 50,000), --scale-base B (the size it is first measured at, default 100,000).
 * @packageDocumentation
 */
import { openStore } from '@turnlog/postgres'
import pg from 'pg'
import type { BenchContext } from './bench-context.js'
import { databaseUrl } from './database-url.js'
import { recordLangGraphStorage } from './langgraph-storage-curve.js'
import { recordLangGraph } from './langgraph-workload.js'
import { measureRebuildMemory } from './measure-rebuild-memory.js'
import { parseArgs } from './parse-args.js'
import { RAW_SCHEMA } from './raw-turn-statement.js'
import { recordAppend, type AppendOutcome } from './record-append.js'
import { recordFlushScaling } from './record-flush-scaling.js'
import { recordImport } from './record-import.js'
import { recordLoad } from './record-load.js'
import { recordPglite } from './record-pglite.js'
import { recordRebuild } from './record-rebuild.js'
import { recordRebuildMemory } from './record-rebuild-memory.js'
import { recordRetryStorm } from './record-retry-storm.js'
import { recordRlsOverhead } from './record-rls-overhead.js'
import { recordScale } from './record-scale.js'
import { recordStorage } from './record-storage.js'
import { recordTelemetryOverhead } from './record-telemetry-overhead.js'
import { seedImportSessions } from './seed-import-sessions.js'
import { writeReport } from './write-report.js'

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
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
  const ctx: BenchContext = {
    args,
    wants: (name) => args.only === null || args.only.has(name),
    admin,
    dbName,
    connectionString,
    rawPool,
    store,
    writers: 8,
    extraDatabases: [],
  }
  const { wants } = ctx
  console.error(`bench: ${args.sessions} sessions × ${args.messages} messages, ${args.runs} runs, 8 writers, db ${dbName}`)

  try {
    const { generated, payloadBytes, memorySmall }: AppendOutcome =
      wants('append') || wants('emmett') || wants('single')
        ? await recordAppend(ctx)
        : { generated: [], payloadBytes: 0, memorySmall: null }
    const appended = generated.length > 0
    if (wants('retry') && appended) await recordRetryStorm(ctx, generated)
    if (wants('load') && appended) await recordLoad(ctx, generated)
    if (wants('flush')) await recordFlushScaling(ctx)
    if (wants('rebuild') && appended) await recordRebuild(ctx)
    // rebuild memory at two sizes: S sessions (after the first append run) and runs × S (now)
    if (wants('rss') && memorySmall !== null) recordRebuildMemory(memorySmall, await measureRebuildMemory(connectionString))
    // alone (`--only import`) it appends the sessions it exports itself, untimed
    if (wants('import')) await recordImport(ctx, appended ? generated : await seedImportSessions(ctx))
    if (wants('storage') && appended) await recordStorage(ctx, payloadBytes)
    if (wants('telemetry')) await recordTelemetryOverhead(connectionString, args)
    if (wants('rls')) await recordRlsOverhead(ctx)
    if (wants('langgraph')) await recordLangGraph(args, admin, dbName)
    if (args.only?.has('langgraph-storage') === true) await recordLangGraphStorage(args, admin, dbName)
    if (wants('pglite')) await recordPglite(args)
    if (args.only?.has('scale') === true) await recordScale(ctx)
  } finally {
    await store.close()
    await rawPool.end()
    for (const name of [dbName, ...ctx.extraDatabases]) await admin.query(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
  writeReport({ args, settings: settings.rows, started })
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
