import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from './create-test-database.js'
import type { UseTestStoreOptions } from './use-test-store.js'

/** The two stores a suite runs on with `describe.each(STORE_KINDS)`: a database of its own on the test server, and embedded PGlite. */
export const STORE_KINDS = ['postgres', 'pglite'] as const

/** One of {@link STORE_KINDS}. */
export type StoreKind = (typeof STORE_KINDS)[number]

/** A store {@link openTestStore} opened, with what closes it. */
export interface OpenedTestStore {
  readonly store: PostgresStore
  /** The Postgres database (undefined for PGlite). */
  readonly db: TestDatabase | undefined
  /** Closes the store and drops its database. */
  close(): Promise<void>
}

/**
 * Opens a store of `kind`: migrated, on a fresh database of the test server (opened with `options`, a
 * pool size for instance), or on an in-memory PGlite.
 */
export async function openTestStore(kind: StoreKind, options: UseTestStoreOptions = {}): Promise<OpenedTestStore> {
  if (kind === 'pglite') {
    const store = await openStore({ embedded: true })
    return { store, db: undefined, close: () => store.close() }
  }
  const db = await createTestDatabase()
  const store = await openStore({ ...options, connectionString: db.connectionString })
  return {
    store,
    db,
    close: async () => {
      await store.close()
      await db.drop()
    },
  }
}

/**
 * {@link openTestStore} (with `options`) in `beforeAll`, handed to `ready`, closed in `afterAll`: the setup of a suite run
 * on both stores. Call it at the top of a `describe.each(STORE_KINDS)` body.
 * @example
 * ```ts
 * describe.each(STORE_KINDS)('… (%s)', (kind) => {
 *   let store: PostgresStore
 *   useTestStoreOfKind(kind, (t) => ({ store } = t))
 * })
 * ```
 */
export function useTestStoreOfKind(kind: StoreKind, ready: (opened: OpenedTestStore) => void, options: UseTestStoreOptions = {}): void {
  let opened: OpenedTestStore | undefined
  beforeAll(async () => {
    opened = await openTestStore(kind, options)
    ready(opened)
  })
  afterAll(async () => {
    await opened?.close()
  })
}
