import { afterAll, beforeAll } from '@jest/globals'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, describeStoreContract, type TestDatabase } from '@turnlog/testing'

let db: TestDatabase | undefined

beforeAll(async () => {
  db = await createTestDatabase()
})

afterAll(async () => {
  await db?.drop()
})

describeStoreContract('Postgres', async () => {
  if (!db) throw new Error('no test database')
  // a new pool per call: each store is "another process" with its own cache
  const store = await openStore({ connectionString: db.connectionString, pool: { max: 4 } })
  return { store, close: () => store.close() }
})
