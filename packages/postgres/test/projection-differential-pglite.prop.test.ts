import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { RULES, historyFor, newDiffStats, rebuildAllAgainstSpec, runDifferential } from './support/structure-differential.js'

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

  it('one full rebuild of every session from damaged rows gives the spec', async () => {
    await rebuildAllAgainstSpec(store)
  }, 120_000)
})
