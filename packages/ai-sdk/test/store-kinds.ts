import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

/** Both stores every test of this package runs on. */
export const STORE_KINDS = ['postgres', 'pglite'] as const

/** A store of one kind: its own Postgres database, or an embedded PGlite in memory. */
export async function openTestStore(kind: (typeof STORE_KINDS)[number]): Promise<{ store: PostgresStore; close: () => Promise<void> }> {
  if (kind === 'pglite') {
    const store = await openStore({ embedded: true })
    return { store, close: () => store.close() }
  }
  const database: TestDatabase = await createTestDatabase()
  const store = await openStore({ connectionString: database.connectionString })
  return {
    store,
    close: async () => {
      await store.close()
      await database.drop()
    },
  }
}

/** Every item of an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
