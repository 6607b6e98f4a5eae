/**
 * The catalog snapshot: the shape of the migrated `turnlog` schema (pg_catalog: relations, columns,
 * constraints, indexes, functions with an md5 of each body, triggers, policies, ACLs, the cluster roles)
 * is committed in schema-catalog.snapshot.txt. Any change to the schema shows up here as a diff that is
 * reviewed with the change; from the first release on, such a change is a new migration.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { migrateToLatest } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { catalogSnapshot } from './support/catalog-snapshot.js'

const SNAPSHOT = fileURLToPath(new URL('./schema-catalog.snapshot.txt', import.meta.url))
const UPDATE_ENV = 'TURNLOG_UPDATE_CATALOG_SNAPSHOT'
const VERSION_LINE = '# taken on PostgreSQL '
const HOW_TO_UPDATE =
  `If the change is intended, regenerate the snapshot and commit it with the change:\n` +
  `  ${UPDATE_ENV}=1 NODE_OPTIONS='--experimental-vm-modules --no-warnings=ExperimentalWarning' npx jest packages/postgres/test/schema-catalog.int.test.ts`

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase({
    migrate: async (url) => {
      const kysely = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
      try {
        await migrateToLatest(kysely)
      } finally {
        await kysely.destroy()
      }
    },
  })
})

afterAll(async () => {
  await db?.drop()
})

/** The lines only in `expected` (`-`) and only in `actual` (`+`): each line is one self-contained fact. */
function lineDiff(expected: string, actual: string): string {
  const want = new Set(expected.split('\n').filter((l) => l !== ''))
  const have = new Set(actual.split('\n').filter((l) => l !== ''))
  return [
    ...[...want].filter((l) => !have.has(l)).map((l) => `- ${l}`),
    ...[...have].filter((l) => !want.has(l)).map((l) => `+ ${l}`),
  ].join('\n')
}

describe('schema catalog snapshot', () => {
  it('the migrated turnlog schema is exactly the committed snapshot (any schema change is a visible diff)', async () => {
    // given a database migrated to the latest schema
    const client = new pg.Client({ connectionString: db.connectionString })
    await client.connect()
    let actual: string
    let major: number
    try {
      // when its catalog is dumped
      actual = await catalogSnapshot(client)
      major = Math.floor(
        Number((await client.query<{ v: string }>("select current_setting('server_version_num') as v")).rows[0]?.v) / 10000,
      )
    } finally {
      await client.end()
    }

    // then it is the committed snapshot
    // (the first line records the server's major version: deparsed definitions can differ between majors)
    if (process.env[UPDATE_ENV] === '1') writeFileSync(SNAPSHOT, `${VERSION_LINE}${major}\n${actual}`)
    const file = readFileSync(SNAPSHOT, 'utf8')
    const taken = file.startsWith(VERSION_LINE) ? Number(file.slice(VERSION_LINE.length, file.indexOf('\n'))) : undefined
    const expected = file.startsWith(VERSION_LINE) ? file.slice(file.indexOf('\n') + 1) : file
    if (actual !== expected) {
      const note =
        taken !== undefined && taken !== major
          ? `\n(the snapshot was taken on PostgreSQL ${taken}, this server is ${major}: a line that differs only in how a definition is printed is not a schema change)`
          : ''
      throw new Error(
        `the turnlog schema differs from the committed catalog snapshot (${SNAPSHOT}):\n${lineDiff(expected, actual)}${note}\n\n${HOW_TO_UPDATE}`,
      )
    }
    expect(actual).toBe(expected)
  })
})
