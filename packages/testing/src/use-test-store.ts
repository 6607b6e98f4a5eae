import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type ConnectionStringConfig, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from './create-test-database.js'

/** What {@link useTestStore} hands to its callback once the database and the store exist. */
export interface TestStore {
  /** The test file's own database on the test server. */
  readonly db: TestDatabase
  /** A store opened on it (migrated). */
  readonly store: PostgresStore
}

/** Options of {@link useTestStore}: how to open the store on the new database. */
export type UseTestStoreOptions = Omit<ConnectionStringConfig, 'connectionString'>

/**
 * The setup most integration test files share: in `beforeAll`, a fresh database and a store opened on
 * it, handed to `ready`; in `afterAll`, the store closed and the database dropped (each step skipped if
 * the one before it failed). Call it at the top level of a test file or inside a `describe`.
 * @example
 * ```ts
 * let store: PostgresStore
 * useTestStore((t) => ({ store } = t))
 * ```
 */
export function useTestStore(ready: (opened: TestStore) => void, options: UseTestStoreOptions = {}): void {
  let db: TestDatabase | undefined
  let store: PostgresStore | undefined
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    store = await openStore({ ...options, connectionString: db.connectionString })
    ready({ db, store })
  })
  afterAll(async () => {
    await store?.close()
    await db?.drop()
  })
}
