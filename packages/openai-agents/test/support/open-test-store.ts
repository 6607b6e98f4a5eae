/**
 * The two stores every suite of this package runs on: a Postgres database of its own on the test
 * server, and embedded PGlite (in memory).
 * @packageDocumentation
 */
import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

/** The store kinds, for `describe.each`. */
export const STORE_KINDS = ['postgres', 'pglite'] as const

/** One of {@link STORE_KINDS}. */
export type StoreKind = (typeof STORE_KINDS)[number]

/** Opens a store of `kind` in `beforeAll` (closed, and its database dropped, in `afterAll`); `get()` returns it. */
export function useStore(kind: StoreKind): { get(): PostgresStore; database(): TestDatabase | undefined } {
  let db: TestDatabase | undefined
  let store: PostgresStore | undefined
  beforeAll(async () => {
    if (kind === 'postgres') {
      db = await createTestDatabase()
      store = await openStore({ connectionString: db.connectionString })
    } else {
      store = await openStore({ embedded: true })
    }
  })
  afterAll(async () => {
    await store?.close()
    await db?.drop()
  })
  return {
    get: () => {
      if (store === undefined) throw new Error('store not open (beforeAll failed?)')
      return store
    },
    database: () => db,
  }
}
