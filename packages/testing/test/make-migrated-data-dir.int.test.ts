import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMessage } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { makeMigratedDataDir, openTestStore } from '@turnlog/testing'
import { sql } from 'kysely'

let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnlog-made-datadir-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** The turnlog schema of a store's database: applied migrations, relations, functions, and the session count. */
async function schemaOf(store: PostgresStore): Promise<unknown> {
  const { rows } = await sql<Record<string, unknown>>`
    select (select json_agg(name order by name) from turnlog.schema_migrations) as migrations,
           (select json_agg(c.relname || ':' || c.relkind::text order by c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'turnlog') as relations,
           (select json_agg(p.proname order by p.proname, pg_get_function_identity_arguments(p.oid)) from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'turnlog') as functions,
           (select count(*)::int from turnlog.sessions) as sessions`.execute(store.db)
  return rows[0]
}

describe('makeMigratedDataDir', () => {
  it('makes a directory that opens without migrating, with the schema of a migrated store, and no lock or postmaster.pid', async () => {
    // given: a migrated embedded store (what openTestStore opens: a store migrated it), the reference
    const reference = await openTestStore('pglite')
    const expected = await schemaOf(reference.store)
    await reference.close()

    // when
    const made = join(root, 'made')
    await makeMigratedDataDir(made)

    // then: nothing of a running or held database in it
    expect(readdirSync(made).filter((n) => n === 'postmaster.pid' || n.startsWith('turnlog.lock'))).toEqual([])
    expect(existsSync(join(made, 'PG_VERSION'))).toBe(true)
    // it opens with migrate: false as the same schema, holds what is written, and reopens with it
    const store = await openStore({ embedded: true, dataDir: made, migrate: false })
    let session: string
    try {
      expect(await schemaOf(store)).toEqual(expected)
      session = await store.createSession()
      await store.append(session, [createMessage({ role: 'user', content: 'kept' })])
    } finally {
      await store.close()
    }
    const again = await openStore({ embedded: true, dataDir: made })
    try {
      expect((await again.load(session)).messages.map((m) => m.payload)).toEqual([{ role: 'user', content: 'kept' }])
    } finally {
      await again.close()
    }
  }, 120_000)
})
