import { exportSessions, importEvents, type ExportEventRecord, type ExportSessionRecord } from '@turnlog/audit'
import { newSessionId } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { loadavg } from 'node:os'
import pg from 'pg'
import type { BenchContext } from './bench-context.js'
import { databaseUrl } from './database-url.js'
import { measureScalePoint, type ScalePoint } from './measure-scale-point.js'
import { RAW_SCHEMA } from './raw-turn-statement.js'
import { record, rows } from './record.js'
import { scaleExportLines, type ScaleLinesCount, type ScaleTemplate } from './scale-lines.js'
import type { ScaleStorage } from './scale-storage.js'
import { percentile, summarize } from './stats.js'
import { generateSession } from './workload.js'

/** Sessions appended through the store and exported, the models of the bulk load. */
const TEMPLATES = 32
/** Import calls while growing from the base size to the target: one rate each. */
const SEGMENTS = 10

/** The part of the bench's context the scale workload uses (it works in a database of its own). */
export type ScaleContext = Pick<BenchContext, 'args' | 'admin' | 'dbName' | 'extraDatabases' | 'writers'>

/** What {@link recordScale} measured, besides the rows it recorded. */
export interface ScaleOutcome {
  readonly small: ScalePoint
  readonly large: ScalePoint
  /** Import rate of each growth segment, in order (events/s). */
  readonly importRates: readonly number[]
  /** Payload bytes stored when each point's sizes were taken. */
  readonly payloadSmall: number
  readonly payloadLarge: number
}

function loadNow(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')
}

/** The calls over 2 ms and the measuring process's scavenges while `load` was measured at one point, and the raw control's p99. */
function gcNote(point: ScalePoint): string {
  const { scavengeMs, over2, over2WithScavenge, rawOver2 } = point.loadGc
  const pauses =
    scavengeMs.length === 0 ? '' : ` (p50 ${percentile(scavengeMs, 50).toFixed(1)}, max ${Math.max(...scavengeMs).toFixed(1)} ms)`
  return `${over2} of ${point.load.length} calls over 2 ms, ${over2WithScavenge} of them with a scavenge in them; ${scavengeMs.length} scavenges${pauses}; raw control p99 ${percentile(point.loadRaw, 99).toFixed(2)} ms, ${rawOver2} calls over 2 ms`
}

function bytesPerMessage(s: ScaleStorage): number {
  return s.totalBytes / s.events
}

function sizes(s: ScaleStorage): string {
  const t = s.tables.map((x) => `${x.table} ${(x.tableBytes / s.events).toFixed(0)}+${(x.indexBytes / s.events).toFixed(0)}`).join(', ')
  const root = (x: ScaleStorage['indexes'][number]): string =>
    x.rootItems === null ? '' : ` (root: ${x.rootItems} entries of ${x.rootAvgItemBytes} B)`
  const i = s.indexes.map((x) => `${x.index} ${(x.bytes / s.events).toFixed(1)} B, depth ${x.depth ?? '?'}${root(x)}`).join('; ')
  return `table+index B/message: ${t}; indexes: ${i}`
}

/**
 * The scale workload (`--only scale`): in a database of its own, `TEMPLATES` sessions are appended and
 * exported, then copies of them under new ids are bulk-loaded through `importEvents` (the real
 * schema, triggers and checks) up to `--scale-base` messages, where append, retry, `load` and flush
 * are measured (`measureScalePoint`); the database then grows to `--scale-messages` messages in
 * `--scale-sessions` sessions and the same is measured again. Rows: each figure at the large size
 * over the same at the base size, the import rate while growing, and the bytes per message.
 */
export async function recordScale(ctx: ScaleContext): Promise<ScaleOutcome> {
  const { admin, args, dbName, extraDatabases, writers } = ctx
  const name = `${dbName}_scale`
  await admin.query(`create database ${name}`)
  extraDatabases.push(name)
  const connectionString = databaseUrl(args.adminUrl, name)
  const groupCommit = args.groupCommit === undefined ? {} : { groupCommit: args.groupCommit }
  const store = await openStore({ directConnection: true, connectionString, pool: { max: writers }, ...groupCommit })
  const oneStore = await openStore({ directConnection: true, connectionString, pool: { max: 1 }, migrate: false })
  const sql = new pg.Pool({ connectionString, max: writers })
  sql.on('error', () => {})
  try {
    await sql.query(RAW_SCHEMA)
    const perSession = Math.ceil(args.scaleMessages / args.scaleSessions)
    const templateIds: string[] = []
    for (let t = 0; t < TEMPLATES; t++) {
      const id = newSessionId()
      templateIds.push(id)
      await store.createSession({ id })
      for (const turn of generateSession(1, t, perSession).turns) await store.append(id, turn)
    }
    const templates: ScaleTemplate[] = []
    let current: { session: ExportSessionRecord; events: ExportEventRecord[] } | null = null
    const close = (): void => {
      if (current === null) return
      const payloadBytes = current.events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e.payload)), 0)
      templates.push({ ...current, payloadBytes })
    }
    for await (const line of exportSessions(store, { sessionIds: templateIds })) {
      const value = JSON.parse(line) as { kind?: string }
      if (value.kind === 'session') {
        close()
        current = { session: value as ExportSessionRecord, events: [] }
      } else if (value.kind === 'event') {
        const e = value as ExportEventRecord
        if (e.type !== 'message_appended') throw new Error(`template event of type ${e.type}`)
        current?.events.push(e)
      }
    }
    close()
    const perTemplate = templates.reduce((n, t) => n + t.events.length, 0) / templates.length
    const count: ScaleLinesCount = { sessionIds: [], events: 0, payloadBytes: templates.reduce((n, t) => n + t.payloadBytes, 0) }
    const baseSessions = Math.max(1, Math.round((args.scaleBase - TEMPLATES * perTemplate) / perTemplate))
    const totalSessions = Math.max(baseSessions + 1, args.scaleSessions)
    const importRange = async (from: number, to: number): Promise<number> => {
      const before = count.events
      const t0 = performance.now()
      const result = await importEvents(store, scaleExportLines(templates, from, to, count))
      if (result.eventsWritten !== count.events - before)
        throw new Error(`import wrote ${result.eventsWritten} of ${count.events - before} events`)
      return result.eventsWritten / ((performance.now() - t0) / 1000)
    }
    const appendSessions = Math.min(48, Math.max(8, Math.floor(baseSessions / 20)))
    const flushMessages = Math.min(200, Math.max(20, 2 * perSession))
    const measure = async (phase: number): Promise<ScalePoint> => {
      const loadedSessions = [...count.sessionIds]
      const before = loadNow()
      const point = await measureScalePoint({
        store,
        oneStore,
        connectionString,
        pool: sql,
        phase,
        runs: args.runs,
        writers,
        appendSessions,
        messagesPerSession: perSession,
        loadedSessions,
        loadSample: Math.min(200, loadedSessions.length),
        warmupSessions: templateIds,
        flushMessages,
      })
      console.error(`scale: measured at ${point.messages} messages (load average ${before} → ${loadNow()})`)
      return point
    }

    const baseRate = await importRange(0, baseSessions)
    console.error(`scale: ${count.events} events imported in ${baseSessions} sessions (${baseRate.toFixed(0)} events/s)`)
    const payloadSmall = count.payloadBytes
    const small = await measure(0)
    count.payloadBytes += small.payloadWritten
    const importRates: number[] = []
    const growthStart = performance.now()
    const growthEvents = count.events
    for (let s = 0; s < SEGMENTS; s++) {
      const from = baseSessions + Math.floor(((totalSessions - baseSessions) * s) / SEGMENTS)
      const to = baseSessions + Math.floor(((totalSessions - baseSessions) * (s + 1)) / SEGMENTS)
      if (to <= from) continue
      importRates.push(await importRange(from, to))
      console.error(
        `scale: ${count.events} events imported, ${(importRates[importRates.length - 1] ?? 0).toFixed(0)} events/s (load average ${loadNow()})`,
      )
    }
    const growthSeconds = (performance.now() - growthStart) / 1000
    const grown = count.events - growthEvents
    const payloadLarge = count.payloadBytes
    const large = await measure(1)

    const at = `at ${(large.messages / 1e6).toFixed(2)}M vs at ${(small.messages / 1e3).toFixed(0)}k messages`
    record({
      workload: `scale: per-turn append, 8 writers, ${at}`,
      unit: 'msg/s',
      turnlog: summarize(large.append),
      baseline: summarize(small.append),
      baselineName: 'the same at the base size',
      goal: '≥ 0.8×',
      goalRatio: 0.8,
      higherIsBetter: true,
      notes: `${appendSessions} new sessions × ${perSession} messages per run; raw INSERT control into a small table in the same runs: ${summarize(large.rawControl).median.toFixed(0)} vs ${summarize(small.rawControl).median.toFixed(0)} msg/s (${(summarize(large.rawControl).median / summarize(small.rawControl).median).toFixed(2)}×: the machine's drift)`,
    })
    record({
      workload: `scale: retry storm, ${at}`,
      unit: 'msg/s',
      turnlog: summarize(large.retry),
      baseline: summarize(small.retry),
      baselineName: 'the same at the base size',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: true,
      notes: 'the first append run re-appended, nothing written',
    })
    record({
      workload: `scale: load p50, ${at}`,
      unit: 'ms',
      turnlog: summarize([percentile(large.load, 50)]),
      baseline: summarize([percentile(small.load, 50)]),
      baselineName: 'the same at the base size',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${Math.min(200, totalSessions)} bulk-loaded sessions of ~${perSession} messages picked at random × 3 passes, in a child process, each call after a raw SELECT of the session's events (p50 ${percentile(large.loadRaw, 50).toFixed(2)} vs ${percentile(small.loadRaw, 50).toFixed(2)} ms); first pass p50 ${percentile(large.loadFirstPass, 50).toFixed(2)} vs ${percentile(small.loadFirstPass, 50).toFixed(2)} ms`,
    })
    const p99 = percentile(large.load, 99)
    record({
      workload: `scale: load p99, ${at}`,
      unit: 'ms',
      turnlog: summarize([p99]),
      baseline: summarize([percentile(small.load, 99)]),
      baselineName: 'the same at the base size',
      goal: '≤ 2 ms at the large size',
      goalRatio: null,
      higherIsBetter: false,
      notes: `first pass p99 ${percentile(large.loadFirstPass, 99).toFixed(2)} vs ${percentile(small.loadFirstPass, 99).toFixed(2)} ms; ${gcNote(large)} vs ${gcNote(small)}`,
    })
    const p99Row = rows[rows.length - 1]
    if (p99Row) p99Row.met = p99 <= 2
    record({
      workload: `scale: flush of a ${flushMessages / 2 + 1}–${flushMessages}-message session, ${at}`,
      unit: 'ms/flush',
      turnlog: summarize([large.flushMs]),
      baseline: summarize([small.flushMs]),
      baselineName: 'the same at the base size',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: 'median per-flush time, one new message per flush',
    })
    record({
      workload: `scale: import while growing to ${(large.messages / 1e6).toFixed(2)}M messages`,
      unit: 'events/s',
      turnlog: summarize([grown / growthSeconds]),
      baseline: null,
      baselineName: '—',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: true,
      notes: `importEvents of generated exports in ${importRates.length} calls: ${importRates.map((r) => r.toFixed(0)).join(', ')} events/s; ${grown} events in ${growthSeconds.toFixed(0)} s; VACUUM ANALYZE after it ${large.vacuumSeconds.toFixed(1)} s`,
    })
    const ratioSmall = small.storage.totalBytes / payloadSmall
    const ratioLarge = large.storage.totalBytes / payloadLarge
    record({
      workload: `scale: bytes on disk per message, ${at}`,
      unit: 'B/message',
      turnlog: summarize([bytesPerMessage(large.storage)]),
      baseline: summarize([bytesPerMessage(small.storage)]),
      baselineName: 'the same at the base size',
      goal: 'unchanged (0.95–1.05×)',
      goalRatio: null,
      higherIsBetter: false,
      notes: `bytes per payload byte ${ratioLarge.toFixed(3)} vs ${ratioSmall.toFixed(3)}; large: ${sizes(large.storage)}; base: ${sizes(small.storage)}`,
    })
    const storageRow = rows[rows.length - 1]
    if (storageRow?.ratio != null) storageRow.met = storageRow.ratio >= 0.95 && storageRow.ratio <= 1.05
    return { small, large, importRates, payloadSmall, payloadLarge }
  } finally {
    await oneStore.close()
    await store.close()
    await sql.end()
    await admin.query(`drop database if exists ${name} with (force)`)
  }
}
