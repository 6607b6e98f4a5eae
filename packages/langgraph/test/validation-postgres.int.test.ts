import { describe } from '@jest/globals'
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { allowSoftExpect, turnlogInitializer } from './validation-initializer.js'

// LangGraph's own checkpoint-saver conformance suite (@langchain/langgraph-checkpoint-validation), run
// as it is against the saver on Postgres.
allowSoftExpect()
let store: PostgresStore
describe('postgres', () => {
  useTestStore((t) => ({ store } = t))
  const initializer = turnlogInitializer('@turnlog/langgraph (postgres)', () => store)
  validate(initializer)
  // not part of validate(); the stock Postgres saver's own run of the suite adds it too
  deltaChannelHistoryTests(initializer)
})
