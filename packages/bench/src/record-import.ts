import { exportSessions, importEvents } from '@turnlog/audit'
import { openStore } from '@turnlog/postgres'
import type { BenchContext } from './bench-context.js'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import { rawCopyImport } from './raw-copy-import.js'
import { record } from './record.js'
import { sessionUuid } from './session-uuid.js'
import { summarize } from './stats.js'
import type { GeneratedSession } from './workload.js'

/** Bulk import of an export (exportSessions → importEvents) into a fresh database each run, against COPY of the same rows. */
export async function recordImport(ctx: BenchContext, generated: readonly GeneratedSession[][]): Promise<void> {
  const { admin, args, dbName, extraDatabases, rawPool, store } = ctx
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
