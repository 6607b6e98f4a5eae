import { afterAll, beforeAll, describe } from '@jest/globals'
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { allowSoftExpect, turnlogInitializer } from './validation-initializer.js'

// LangGraph's own checkpoint-saver conformance suite, run as it is against the saver on embedded PGlite.
allowSoftExpect()
let store: PostgresStore
let opened: OpenedTestStore | undefined
describe('pglite', () => {
  beforeAll(async () => {
    opened = await openTestStore('pglite')
    store = opened.store
  })
  afterAll(async () => {
    await opened?.close()
  })
  const initializer = turnlogInitializer('@turnlog/langgraph (pglite)', () => store)
  validate(initializer)
  // not part of validate(); the stock Postgres saver's own run of the suite adds it too
  deltaChannelHistoryTests(initializer)
})
