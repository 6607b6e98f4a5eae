/**
 * `migrateLangGraph` (and so `setup()` and a saver's first operation): "`MIGRATION_FAILED` on failure,
 * nothing applied" (packages/langgraph/README.md). A login without `CREATE` on the database (a
 * `turnlog_writer` login, as security.md has applications connect) got the driver's raw error (SQLSTATE
 * 42501, no `TurnlogError`) from a `create schema if not exists` run before the migrator, even when the
 * schema existed and nothing was pending. Postgres only: PGlite has one superuser.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, turnlogRejection, type TestDatabase } from '@turnlog/testing'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import { sql } from 'kysely'

let db: TestDatabase
const login = `lg_setup_${randomBytes(4).toString('hex')}`

/** Runs SQL as the test server's superuser on the suite's database. */
async function superuser(query: string): Promise<number> {
  const admin = await openStore({ connectionString: db.connectionString, migrate: false })
  try {
    return (await sql.raw(query).execute(admin.db)).rows.length
  } finally {
    await admin.close()
  }
}

async function writerStore(): Promise<PostgresStore> {
  const url = new URL(db.connectionString)
  url.username = login
  url.password = ''
  return openStore({ connectionString: url.href, migrate: false })
}

const schemaExists = async () => (await superuser(`select 1 from pg_namespace where nspname = 'turnlog_langgraph'`)) === 1

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  await superuser(`create role ${login} login in role turnlog_writer`)
})

afterAll(async () => {
  if (db === undefined) return
  await superuser(`drop role if exists ${login}`)
  await db.drop()
})

describe('TurnlogCheckpointSaver.setup as a login that may not create the schema', () => {
  it('a missing schema: MIGRATION_FAILED with the 42501 driver error as cause, nothing created', async () => {
    const store = await writerStore()
    try {
      const e = await turnlogRejection(new TurnlogCheckpointSaver({ store }).setup())
      expect(e.code).toBe('MIGRATION_FAILED')
      expect((e.cause as { code?: string } | undefined)?.code).toBe('42501')
      expect(await schemaExists()).toBe(false)
    } finally {
      await store.close()
    }
  })

  it('a schema the owner set up: MIGRATION_FAILED (the saver needs its tables writable), not a raw driver error', async () => {
    const owner = await openStore({ connectionString: db.connectionString, migrate: false })
    try {
      await new TurnlogCheckpointSaver({ store: owner }).setup()
    } finally {
      await owner.close()
    }
    const store = await writerStore()
    try {
      const e = await turnlogRejection(new TurnlogCheckpointSaver({ store }).getTuple({ configurable: { thread_id: 't' } }))
      expect(e.code).toBe('MIGRATION_FAILED')
      expect((e.cause as { code?: string } | undefined)?.code).toBe('42501')
    } finally {
      await store.close()
    }
  })
})
