import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { KNOWN_DIVERGENCE, RULES, historyFor, newDiffStats, rawEvents, rawLogArb, rebuildAllAgainstSpec, runDifferential, runRawLog } from './support/structure-differential.js'

// The PGlite variant of projection-differential.prop.test.ts: the same SQL projection on the embedded
// database, against projectStructure, rule by rule.
const NUM_RUNS = Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 12)

let store: PostgresStore
const stats = newDiffStats()

beforeAll(async () => {
  store = await openStore({ embedded: true })
})

afterAll(async () => {
  await store.close()
  console.log(`projection-differential (PGlite): ${JSON.stringify(stats)}`)
})

describe('SQL projection = projectStructure, rule by rule (PGlite)', () => {
  it.each(RULES)('%s: after every store call the table is the spec of the stored events; fold and rebuild agree', async (rule) => {
    const before = { ...stats.events }
    await fc.assert(
      fc.asyncProperty(historyFor(rule), async (commands) => {
        await runDifferential(store, commands, stats)
      }),
      { numRuns: NUM_RUNS },
    )
    // the histories did write the rule's event type (and at least three types, for the mix)
    const written = (type: string): number => (stats.events[type] ?? 0) - (before[type] ?? 0)
    expect(rule === 'mixed' ? Object.keys(stats.events).filter((t) => written(t) > 0).length : written(rule)).toBeGreaterThan(rule === 'mixed' ? 2 : 0)
  }, 300_000)

  it('logs written around the store (any history the spec applies without an anomaly, several events per INSERT): the table is the spec after every statement, and after rebuild', async () => {
    await fc.assert(
      fc.asyncProperty(rawLogArb, async ({ steps, chunks }) => {
        await runRawLog(store, rawEvents(steps), chunks)
      }),
      { numRuns: NUM_RUNS * 4 },
    )
  }, 300_000)

  // Jest passes it.failing while the body fails: once the SQL projection is fixed, this reports and must become it()
  it.failing('known divergence (no store call writes it): a compaction covering nothing live, then an append in the same INSERT; the statement trigger places the summary after the append', async () => {
    await runRawLog(store, rawEvents(KNOWN_DIVERGENCE.steps, { emptyCompactions: true }), KNOWN_DIVERGENCE.chunks)
  })

  it('one full rebuild of every session from damaged rows gives the spec', async () => {
    await rebuildAllAgainstSpec(store)
  }, 120_000)
})
