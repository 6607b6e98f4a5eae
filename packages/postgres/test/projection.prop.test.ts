import { afterAll, describe, it } from '@jest/globals'
import fc from 'fast-check'
import type { PostgresStore } from '@turnlog/postgres'
import { historyArb, newStats, runHistory } from './support/projection-harness.js'
import { useTestBed } from './support/use-test-bed.js'

// Sized for CI (2 cores): NUM_RUNS property runs of up to PARALLEL histories each, run concurrently on
// separate sessions of one database.
const NUM_RUNS = Number(process.env['TURNLOG_PROP_RUNS'] ?? 350)
const PARALLEL = 6

const stores: PostgresStore[] = []
const stats = newStats()

useTestBed(async (bed) => {
  // two stores (two pools, two flush caches) over one database: "two processes" writing the same sessions;
  // the second reads with the prepared load statement (directConnection), so every session is loaded both ways
  stores.push(await bed.open(bed.db.connectionString, { pool: { max: 6 } }))
  stores.push(await bed.open(bed.db.connectionString, { pool: { max: 6 }, directConnection: true }))
})

afterAll(() => {
  console.log(`projection.prop (Postgres): ${JSON.stringify(stats)}`)
})

describe('projection properties (Postgres)', () => {
  it('random histories: every call matches the model; load = rebuild (no drift) = fold(events) = model; load({ at }) = model at every version', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(historyArb, { minLength: 1, maxLength: PARALLEL }), async (histories) => {
        await Promise.all(histories.map((h) => runHistory(stores, h, stats)))
      }),
      { numRuns: NUM_RUNS },
    )
  }, 600_000)
})
