import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { logStatements, type StatementLog } from './statement-log.js'

/** The two ways a Postgres store sends its statements: Kysely's unnamed ones, or named prepared ones. */
export type StatementPath = 'unnamed statements' | 'directConnection'

/** What {@link useLoggedStores} sets up; `log` is there once `beforeAll` has run. */
export interface LoggedStores {
  /** A store on each statement path, on the same database. */
  readonly stores: Readonly<Record<StatementPath, PostgresStore>>
  /** Every statement the database's `pg` clients send (the driver hook of statement-log.ts). */
  readonly log: StatementLog
}

/**
 * For a test file that checks what the stores send: in `beforeAll`, a fresh migrated database, a store
 * on each {@link StatementPath} and a {@link logStatements} hook on the database; in `afterAll`, the hook
 * removed, the stores closed and the database dropped.
 */
export function useLoggedStores(): LoggedStores {
  const stores = {} as Record<StatementPath, PostgresStore>
  let db: TestDatabase | undefined
  let log: StatementLog | undefined
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    stores['unnamed statements'] = await openStore({ connectionString: db.connectionString, migrate: false })
    stores.directConnection = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true })
    log = logStatements(db.name)
  })
  afterAll(async () => {
    log?.restore()
    for (const s of Object.values(stores)) await s.close()
    await db?.drop()
  })
  return {
    stores,
    get log(): StatementLog {
      if (log === undefined) throw new Error('useLoggedStores: the log exists once beforeAll has run')
      return log
    },
  }
}
