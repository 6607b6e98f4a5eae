import { afterAll, beforeAll, describe, it } from '@jest/globals'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { historyArb, newStats, runHistory } from './support/projection-harness.js'

// The smaller PGlite variant of projection.prop.test.ts: one connection, so histories run one at a time.
const NUM_RUNS = Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 150)

const stores: PostgresStore[] = []
let embedded: OpenedTestStore | undefined
const stats = newStats()

beforeAll(async () => {
  embedded = await openTestStore('pglite')
  // a second store (own flush cache) over the same in-memory database
  stores.push(embedded.store, await openStore({ kysely: embedded.store.db, migrate: false }))
})

afterAll(async () => {
  await stores[1]?.close()
  await embedded?.close()
  console.log(`projection.prop (PGlite): ${JSON.stringify(stats)}`)
})

describe('projection properties (PGlite)', () => {
  it('random histories: every call matches the model; load = rebuild (no drift) = fold(events) = model; load({ at }) = model at every version', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (history) => {
        await runHistory(stores, history, stats)
      }),
      { numRuns: NUM_RUNS },
    )
  }, 600_000)
})
