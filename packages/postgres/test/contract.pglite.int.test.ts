import { openStore, type PostgresStore } from '@turnlog/postgres'
import { describeStoreContract, openTestStore } from '@turnlog/testing'

// One in-memory PGlite database for the file. The first call opens it (from the run's migrated dump, or as
// `openStore({ embedded: true })` under TURNLOG_TEST_PGLITE_TEMPLATE=off: the Node matrix); later calls open
// new stores (own caches: "another process") over the same database through its Kysely instance.
let embedded: PostgresStore | undefined

describeStoreContract(
  'PGlite',
  async () => {
    if (!embedded) {
      const first = await openTestStore('pglite')
      embedded = first.store
      return first
    }
    const store = await openStore({ kysely: embedded.db, migrate: false })
    return { store, close: () => store.close() }
  },
  { roundTripRuns: 25 },
)
