import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { ERROR_CODES, isTurnlogError } from '@turnlog/core'
import {
  START_CHECKPOINT,
  listSubscriptions,
  oldestOpenTransaction,
  readCommittedEvents,
  rebaseAfterRestore,
  rebaseSubscription,
} from '@turnlog/postgres'
import { createTestDatabase, rejection, type TestDatabase } from '@turnlog/testing'

/** The public functions that take a kysely (or a `{ db, flavor }`) instead of a store. */
const calls: readonly (readonly [string, (db: Kysely<unknown>) => Promise<unknown>])[] = [
  ['readCommittedEvents', (db) => readCommittedEvents(db, START_CHECKPOINT)],
  ['oldestOpenTransaction', (db) => oldestOpenTransaction(db)],
  ['listSubscriptions', (db) => listSubscriptions({ db, flavor: 'postgres' })],
  ['rebaseSubscription', (db) => rebaseSubscription({ db, flavor: 'postgres' }, 'nobody', { toStart: true })],
  ['rebaseAfterRestore', (db) => rebaseAfterRestore({ db, flavor: 'postgres' })],
]

let unmigrated: TestDatabase
const opened: Kysely<unknown>[] = []
function kysely(config: pg.PoolConfig): Kysely<unknown> {
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ max: 2, connectionTimeoutMillis: 5_000, ...config }) }),
  })
  opened.push(db)
  return db
}

beforeAll(async () => {
  unmigrated = await createTestDatabase()
})
afterAll(async () => {
  for (const db of opened) await db.destroy()
  await unmigrated.drop()
})

describe('public calls that take a database handle', () => {
  it.each(calls)(
    '%s on a refused connection is a TurnlogError DB_TRANSIENT, not the driver error (regression: readCommittedEvents, oldestOpenTransaction)',
    async (_name, call) => {
      // given a kysely whose pool points at a port nothing listens on
      const db = kysely({ host: '127.0.0.1', port: 1, user: 'nobody', database: 'nothing' })
      // when the call runs
      const error = await rejection(call(db))
      // then it failed with the library's code, the driver error kept as cause
      expect(isTurnlogError(error, 'DB_TRANSIENT')).toBe(true)
      expect((error as Error).cause).toBeDefined()
    },
  )

  it.each(calls)('%s on a database without the turnlog schema is a TurnlogError with a registered code', async (name, call) => {
    // given a real database where the migrations never ran
    const db = kysely({ connectionString: unmigrated.connectionString })
    // when the call runs
    let outcome: unknown
    try {
      outcome = await call(db)
    } catch (error) {
      outcome = error
    }
    // then it either answered (oldestOpenTransaction reads only pg_catalog) or failed with a code
    if (name === 'oldestOpenTransaction') return
    expect(isTurnlogError(outcome)).toBe(true)
    expect((outcome as { code: string }).code in ERROR_CODES).toBe(true)
  })
})
