import { afterAll, beforeAll } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { describeDifferential } from './support/describe-differential.js'

// The PGlite variant of projection-differential.prop.test.ts: the same SQL projection on the embedded
// database, against projectStructure, rule by rule.
const NUM_RUNS = Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 12)

let store: PostgresStore
let opened: OpenedTestStore | undefined

beforeAll(async () => {
  opened = await openTestStore('pglite')
  store = opened.store
})

afterAll(async () => {
  await opened?.close()
})

describeDifferential('PGlite', () => store, NUM_RUNS)
