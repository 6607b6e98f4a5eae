import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { openStore } from '@turnlog/postgres'
import { PG_TEMPLATE_ENV, TEST_ADMIN_URL_ENV, createTestDatabase, migrateByOpening, type TestDatabase } from '@turnlog/testing'

const adminUrl = process.env[TEST_ADMIN_URL_ENV] ?? ''
let admin: pg.Client

async function exists(name: string): Promise<boolean> {
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
  return rowCount === 1
}

async function query(connectionString: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return (await client.query(sql)).rows
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
})

afterAll(async () => {
  await admin.end()
})

describe('createTestDatabase', () => {
  it('creates distinct, isolated databases that drop() removes', async () => {
    // given
    const created: TestDatabase[] = []
    try {
      const a = await createTestDatabase()
      created.push(a)
      const b = await createTestDatabase()
      created.push(b)
      // then: two different databases
      expect(a.name).toMatch(/^turnlog_test_[0-9a-f]{12}$/)
      expect(b.name).not.toBe(a.name)
      expect(await exists(a.name)).toBe(true)
      expect(await exists(b.name)).toBe(true)
      expect(await query(a.connectionString, 'SELECT current_database() AS db')).toEqual([{ db: a.name }])
      // every session in it commits without waiting for the WAL flush (a database setting, not the server's)
      expect(await query(a.connectionString, 'SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'off' }])
      expect(
        await admin.query(
          "SELECT count(*)::int AS n FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = $1) AND 'synchronous_commit=off' = ANY(setconfig)",
          [b.name],
        ),
      ).toMatchObject({ rows: [{ n: 1 }] })

      // when: a table is created in one
      await query(a.connectionString, 'CREATE TABLE only_in_a (id int)')
      // then: the other does not see it
      expect(await query(b.connectionString, "SELECT to_regclass('only_in_a') AS t")).toEqual([{ t: null }])

      // when: a connection is still open and both are dropped
      const leftover = new pg.Client({ connectionString: a.connectionString })
      leftover.on('error', () => {}) // it gets terminated
      await leftover.connect()
      await Promise.all([a.drop(), b.drop()])
      // then
      expect(await exists(a.name)).toBe(false)
      expect(await exists(b.name)).toBe(false)
      await expect(a.drop()).resolves.toBeUndefined() // idempotent
      await leftover.end().catch(() => {})
    } finally {
      await Promise.all(created.map((d) => d.drop()))
    }
  })

  it('runs migrate with the connection string of the new database', async () => {
    // given
    const migrated: string[] = []
    const migrate = async (connectionString: string): Promise<void> => {
      migrated.push(connectionString)
      await query(connectionString, 'CREATE TABLE migrated (id int)')
    }
    // when
    const db = await createTestDatabase({ migrate })
    try {
      // then
      expect(migrated).toEqual([db.connectionString])
      expect(await query(db.connectionString, "SELECT to_regclass('migrated')::text AS t")).toEqual([{ t: 'migrated' }])
    } finally {
      await db.drop()
    }
  })

  it('drops the database and rethrows when migrate fails', async () => {
    // given
    let name = ''
    const migrate = async (connectionString: string): Promise<void> => {
      name = new URL(connectionString).pathname.slice(1)
      throw new Error('migration 0001 failed')
    }
    // when / then
    await expect(createTestDatabase({ migrate })).rejects.toThrow('migration 0001 failed')
    expect(name).toMatch(/^turnlog_test_/)
    expect(await exists(name)).toBe(false)
  })

  it("migrated: a copy of the run's migrated template, as migrateByOpening leaves an empty database, isolated from the other copies", async () => {
    // given: a database migrated by opening a store, the reference
    const reference = await createTestDatabase({ migrate: migrateByOpening })
    const copies: TestDatabase[] = []
    try {
      // when: two migrated databases are made at once (the first of the run makes the template)
      copies.push(...(await Promise.all([createTestDatabase({ migrated: true }), createTestDatabase({ migrated: true })])))
      const [a, b] = copies as [TestDatabase, TestDatabase]

      // then: each has the reference's migrations, objects and setting, and nothing is pending
      const schema = (url: string) =>
        query(
          url,
          `SELECT (SELECT json_agg(name ORDER BY name) FROM turnlog.schema_migrations) AS migrations,
                  (SELECT json_agg(c.relname || ':' || c.relkind::text ORDER BY c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'turnlog') AS relations,
                  (SELECT json_agg(p.proname ORDER BY p.proname, p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'turnlog') AS functions,
                  current_setting('synchronous_commit') AS synchronous_commit`,
        )
      const expected = await schema(reference.connectionString)
      expect(await schema(a.connectionString)).toEqual(expected)
      expect(await schema(b.connectionString)).toEqual(expected)
      const store = await openStore({ connectionString: a.connectionString })
      try {
        const session = await store.createSession()
        // and a write to one copy is not in the other
        expect(await query(b.connectionString, 'SELECT count(*)::int AS n FROM turnlog.sessions')).toEqual([{ n: 0 }])
        expect(session).toMatch(/^[0-9a-f-]{36}$/)
      } finally {
        await store.close()
      }
      // and nobody can connect to the template under the global setup (a connection would make copies fail)
      const template = process.env[PG_TEMPLATE_ENV]
      if (template !== undefined && template !== '') {
        expect((await admin.query('SELECT datallowconn FROM pg_database WHERE datname = $1', [template])).rows).toEqual([
          { datallowconn: false },
        ])
      }
    } finally {
      await Promise.all([reference, ...copies].map((d) => d.drop()))
    }
  })

  it('explains what to do when there is no server', async () => {
    await expect(createTestDatabase({ adminUrl: '' })).rejects.toThrow(/TURNLOG_TEST_ADMIN_URL is set by the Jest global setup/)
  })
})
