import { afterAll, beforeAll, describe } from '@jest/globals'
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { allowSoftExpect, turnlogInitializer } from './validation-initializer.js'

// LangGraph's own checkpoint-saver conformance suite, run as it is against the saver on embedded PGlite.
allowSoftExpect()
let store: PostgresStore
describe('pglite', () => {
  beforeAll(async () => {
    store = await openStore({ embedded: true })
  })
  afterAll(async () => {
    await store?.close()
  })
  const initializer = turnlogInitializer('@turnlog/langgraph (pglite)', () => store)
  validate(initializer)
  // not part of validate(); the stock Postgres saver's own run of the suite adds it too
  deltaChannelHistoryTests(initializer)
})
