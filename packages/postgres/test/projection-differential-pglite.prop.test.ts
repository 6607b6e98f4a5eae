import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { describeDifferential } from './support/describe-differential.js'

// The PGlite variant of projection-differential.prop.test.ts: the same SQL projection on the embedded
// database, against projectStructure, rule by rule.
const NUM_RUNS = Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 12)

let store: PostgresStore

beforeAll(async () => {
  store = await openStore({ embedded: true })
})

afterAll(async () => {
  await store.close()
})

describeDifferential('PGlite', () => store, NUM_RUNS)
