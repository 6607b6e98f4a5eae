/**
 * The two stores every suite of this package runs on (`STORE_KINDS` of @turnlog/testing), with a getter
 * in the shape these suites use.
 * @packageDocumentation
 */
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind, type StoreKind, type TestDatabase } from '@turnlog/testing'

export { STORE_KINDS, type StoreKind } from '@turnlog/testing'

/** Opens a store of `kind` in `beforeAll` (closed, and its database dropped, in `afterAll`); `get()` returns it. */
export function useStore(kind: StoreKind): { get(): PostgresStore; database(): TestDatabase | undefined } {
  let store: PostgresStore | undefined
  let db: TestDatabase | undefined
  useTestStoreOfKind(kind, (t) => ({ store, db } = t))
  return {
    get: () => {
      if (store === undefined) throw new Error('store not open (beforeAll failed?)')
      return store
    },
    database: () => db,
  }
}
