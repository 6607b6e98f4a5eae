import { openStore, type PostgresStore } from '@turnlog/postgres'
import { describeStoreContract } from '@turnlog/testing'

// One in-memory PGlite database for the file. The first call opens it; later calls open new stores
// (own caches: "another process") over the same database through its Kysely instance.
let embedded: PostgresStore | undefined

describeStoreContract(
  'PGlite',
  async () => {
    if (!embedded) {
      const first = await openStore({ embedded: true })
      embedded = first
      return { store: first, close: () => first.close() }
    }
    const store = await openStore({ kysely: embedded.db, migrate: false })
    return { store, close: () => store.close() }
  },
  { roundTripRuns: 25 },
)
