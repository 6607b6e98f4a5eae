import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from './create-test-database.js'
import type { TestStore, UseTestStoreOptions } from './use-test-store.js'

/** What {@link useTwoTestStores} hands to its callback: two databases, a store opened on each. */
export interface TwoTestStores {
  /** The first database and its store (the side a test writes and exports from). */
  readonly source: TestStore
  /** The second database and its store (the side a test imports into). */
  readonly target: TestStore
}

/**
 * The setup of export/import tests: in `beforeAll`, two fresh databases and a store opened on each
 * (with the same options), handed to `ready`; in `afterAll`, both stores closed and both databases
 * dropped (whatever was created). Call it at the top level of a test file or inside a `describe`.
 * @example
 * ```ts
 * let source: PostgresStore
 * let target: PostgresStore
 * useTwoTestStores((t) => ({ source, target } = { source: t.source.store, target: t.target.store }))
 * ```
 */
export function useTwoTestStores(ready: (opened: TwoTestStores) => void, options: UseTestStoreOptions = {}): void {
  const dbs: TestDatabase[] = []
  const stores: PostgresStore[] = []
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) dbs.push(await createTestDatabase({ migrated: true }))
    for (const db of dbs) stores.push(await openStore({ ...options, connectionString: db.connectionString }))
    const [sourceDb, targetDb] = dbs as [TestDatabase, TestDatabase]
    const [sourceStore, targetStore] = stores as [PostgresStore, PostgresStore]
    ready({ source: { db: sourceDb, store: sourceStore }, target: { db: targetDb, store: targetStore } })
  })
  afterAll(async () => {
    for (const store of stores) await store.close()
    for (const db of dbs) await db.drop()
  })
}
