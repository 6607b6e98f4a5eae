/**
 * The upgrade path of the schema. A database the release before 0002 (commit 13da962) created — its
 * baseline `0001_create_schema` ran that release's `sql/` files, rebuilt here from
 * `fixtures/release-13da962` (the files that changed since) and this tree's unchanged files — holds
 * sessions written through that release's `append_messages` and `append_batches`. Opened by this
 * tree's `openStore` (which runs every pending migration), its `turnlog` schema must be exactly the one
 * of a fresh database migrated to latest (the catalog snapshot: every function's body md5, owner, ACL,
 * settings, volatility, security definer; relations, grants, triggers, policies), its old events must
 * be untouched, load and verify, and a new append must chain onto them.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { contentHash, createMessage, newEventId, newSessionId, type Message, type SessionId } from '@turnlog/core'
import { messageEnvelope } from '@turnlog/core/internal'
import { listSubscriptions, openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, migrateByOpening, type TestDatabase } from '@turnlog/testing'
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { schemaFile } from '../src/schema-sql.js'
import { createLoginRole, dropLoginRoles, type LoginRole } from './security/support/security-fixtures.js'
import { catalogSnapshot } from './support/catalog-snapshot.js'

/** The release's fixtures: its changed `sql/` files and the manifest of its baseline. */
const RELEASE_DIR = new URL('./fixtures/release-13da962/', import.meta.url)

/** One file of the release's baseline, in the order its 0001 ran them. */
interface ReleaseFile {
  readonly file: string
  /** The sha256 of the file's text at the release. */
  readonly sha256: string
  /** The text used: the fixture, else this tree's `sql/` file. */
  readonly text: string
  readonly fromFixture: boolean
}

/** The release's baseline files (manifest.txt), each with the text that stands for it here. */
function releaseFiles(): ReleaseFile[] {
  return readFileSync(new URL('manifest.txt', RELEASE_DIR), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [sha256 = '', file = ''] = line.split(/\s+/)
      const fixture = new URL(file, RELEASE_DIR)
      const fromFixture = existsSync(fixture)
      return { file, sha256, text: fromFixture ? readFileSync(fixture, 'utf8') : schemaFile(file), fromFixture }
    })
}

/** The functions the fixtures define (`create function turnlog.<name>(`). */
function fixtureFunctions(): string[] {
  return releaseFiles()
    .filter((f) => f.fromFixture)
    .flatMap((f) => [...f.text.matchAll(/^create function turnlog\.(\w+)\(/gm)].map((m) => m[1] as string))
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A Kysely of its own on `url` for `work`, destroyed after. */
async function withKysely<T>(url: string, work: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) })
  try {
    return await work(db)
  } finally {
    await db.destroy()
  }
}

/** A pg client on `url` for `work`, closed after. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Migrates `url` as the release did: kysely's Migrator with the same bookkeeping tables, knowing one
 * migration, `0001_create_schema`, which runs the release's files as one script (as its `schemaSql()`).
 */
async function migrateToRelease(url: string): Promise<void> {
  const script = releaseFiles()
    .map((f) => `-- ${f.file}\n${f.text}`)
    .join('\n')
  await withKysely(url, async (db) => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => ({ '0001_create_schema': { up: async (tx) => void (await sql.raw(script).execute(tx)) } }) },
      migrationTableSchema: 'turnlog',
      migrationTableName: 'schema_migrations',
      migrationLockTableName: 'schema_migrations_lock',
    })
    const { error } = await migrator.migrateToLatest()
    if (error !== undefined) throw error
  })
}

/** A message's arguments for the release's append functions, encoded as its store encoded them. */
function encoded(messages: readonly Message[]): { ids: string; hashes: string; eventIds: string; payloads: string; data: string } {
  return {
    ids: JSON.stringify(messages.map((m) => m.id)),
    hashes: JSON.stringify(messages.map((m) => contentHash(m))),
    eventIds: JSON.stringify(messages.map(() => newEventId())),
    payloads: `[${messages.map((m) => JSON.stringify(m.payload)).join(',')}]`,
    data: `[${messages.map((m) => JSON.stringify(messageEnvelope(m, false))).join(',')}]`,
  }
}

/** The release store's one-session append statement. */
async function oldAppendMessages(client: pg.Client, session: SessionId, expected: number, messages: readonly Message[]): Promise<number> {
  const e = encoded(messages)
  const { rows } = await client.query<{ version: string; appended: string[] }>(
    `select version, appended::text[] as appended
       from turnlog.append_messages($1::uuid, $2::bigint, $3::json, $4::json, $5::json, $6::json, $7::json)`,
    [session, expected, e.ids, e.hashes, e.eventIds, e.payloads, e.data],
  )
  expect(rows[0]?.appended).toEqual(messages.map((m) => m.id))
  return Number(rows[0]?.version)
}

/** The release store's group-commit statement: several sessions' batches at once. */
async function oldAppendBatches(
  client: pg.Client,
  batches: readonly { readonly session: SessionId; readonly expected: number; readonly messages: readonly Message[] }[],
): Promise<number[]> {
  const e = encoded(batches.flatMap((b) => b.messages))
  const { rows } = await client.query<{ batch: number; version: string }>(
    `select batch, version from turnlog.append_batches($1::json, $2::json, $3::json, $4::json, $5::json, $6::json, $7::json, $8::json)
      order by batch`,
    [
      JSON.stringify(batches.map((b) => b.session)),
      JSON.stringify(batches.map((b) => b.expected)),
      JSON.stringify(batches.map((b) => b.messages.length)),
      e.ids,
      e.hashes,
      e.eventIds,
      e.payloads,
      e.data,
    ],
  )
  expect(rows.map((r) => r.batch)).toEqual(batches.map((_, i) => i + 1))
  return rows.map((r) => Number(r.version))
}

/** Every stored event, as identity and link (a migration must not touch one). */
async function eventRows(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ line: string }>(
      `select session_id || ' ' || seq || ' ' || event_id || ' ' || coalesce(message_id::text, '-') || ' '
              || encode(hash, 'hex') || ' ' || md5(payload::text) as line
         from turnlog.events order by session_id, seq`,
    )
    return rows.map((r) => r.line)
  })
}

/** The migrations recorded in `turnlog.schema_migrations`, in order. */
async function recordedMigrations(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ name: string }>('select name from turnlog.schema_migrations order by name')
    return rows.map((r) => r.name)
  })
}

/** The lines only in `expected` (`-`) and only in `actual` (`+`): each line is one self-contained fact. */
function lineDiff(expected: string, actual: string): string[] {
  const want = new Set(expected.split('\n').filter((l) => l !== ''))
  const have = new Set(actual.split('\n').filter((l) => l !== ''))
  return [...[...want].filter((l) => !have.has(l)).map((l) => `- ${l}`), ...[...have].filter((l) => !want.has(l)).map((l) => `+ ${l}`)]
}

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

let fresh: TestDatabase
let old: TestDatabase
let store: PostgresStore | undefined
let freshCatalog: string
let catalogBefore: string
let catalogAfter: string
let eventsBefore: string[]
/** The checkpoints the release's consumers left: 'projector' after the third event, 'acme-projector' after the first. */
let checkpointsBefore: { name: string; tx_id: string; global_position: string; delivered: string }[]
const roles: LoginRole[] = []
const sessionA = newSessionId()
const sessionB = newSessionId()
const oldA = [user('hello'), assistant('hi, how can I help?'), user('summarise the log'), assistant('done')]
const oldB = [user('second session'), assistant('ok')]

beforeAll(async () => {
  // a fresh database migrated to latest by opening a store, as an application does
  fresh = await createTestDatabase({ migrate: migrateByOpening })
  freshCatalog = await withClient(fresh.connectionString, (client) => catalogSnapshot(client))

  // given a database the release created, with sessions its store wrote through its own functions
  old = await createTestDatabase({ migrate: migrateToRelease })
  await withClient(old.connectionString, async (client) => {
    await client.query('insert into turnlog.sessions (session_id, tenant_id, metadata) values ($1, null, null), ($2, null, null)', [
      sessionA,
      sessionB,
    ])
    expect(await oldAppendMessages(client, sessionA, 0, oldA.slice(0, 2))).toBe(2)
    expect(await oldAppendMessages(client, sessionA, 2, oldA.slice(2, 3))).toBe(3)
    expect(
      await oldAppendBatches(client, [
        { session: sessionA, expected: 3, messages: oldA.slice(3) },
        { session: sessionB, expected: 0, messages: oldB },
      ]),
    ).toEqual([4, 2])
  })
  // and checkpoints its consumers wrote (its writer inserted and updated them directly)
  checkpointsBefore = await withClient(old.connectionString, async (client) => {
    await client.query(`insert into turnlog.subscriptions (name, tx_id, global_position, delivered)
                        select n.name, e.tx_id, e.global_position, n.delivered
                          from (values ('projector', 2, 3), ('acme-projector', 0, 1)) n(name, skip, delivered),
                               lateral (select tx_id, global_position from turnlog.events
                                         order by tx_id, global_position offset n.skip limit 1) e`)
    const { rows } = await client.query<{ name: string; tx_id: string; global_position: string; delivered: string }>(
      `select name, tx_id::text as tx_id, global_position::text as global_position, delivered::text as delivered
         from turnlog.subscriptions order by name`,
    )
    return rows
  })
  expect(checkpointsBefore).toHaveLength(2)
  catalogBefore = await withClient(old.connectionString, (client) => catalogSnapshot(client))
  eventsBefore = await eventRows(old.connectionString)

  // when this tree's openStore opens it (it runs every pending migration)
  store = await openStore({ connectionString: old.connectionString })
  catalogAfter = await withClient(old.connectionString, (client) => catalogSnapshot(client))
})

afterAll(async () => {
  await store?.close()
  await old?.drop()
  await fresh?.drop()
  await dropLoginRoles(roles)
})

describe('upgrade from the release before 0002 (13da962)', () => {
  it("the fixtures and this tree's unchanged sql/ files are exactly the release's baseline files", () => {
    // given the release's manifest (its SCHEMA_FILES with the sha256 of each file at 13da962)
    const files = releaseFiles()
    expect(files.length).toBeGreaterThan(40)

    // when each file's text here is hashed
    const changed = files.filter((f) => sha256(f.text) !== f.sha256)

    // then none differs: a file changed since the release needs its old text in the fixtures
    expect(
      changed.map(
        (f) =>
          `${f.fromFixture ? 'fixture' : 'sql/'} ${f.file} is not the release's text` +
          (f.fromFixture ? '' : ` (add \`git show 13da962:packages/postgres/sql/${f.file}\` to test/fixtures/release-13da962)`),
      ),
    ).toEqual([])
  })

  it("before the upgrade the database has the release's functions, not this tree's", () => {
    // given the catalogs of the release's database and of a fresh one
    // when they are compared
    const diff = lineDiff(freshCatalog, catalogBefore)

    // then each function of the fixtures differs, and caller_sees_all is missing (the test is not vacuous)
    for (const name of fixtureFunctions()) expect(diff.filter((l) => l.startsWith(`+ function turnlog.${name}(`))).toHaveLength(1)
    expect(diff.filter((l) => l.startsWith('- function turnlog.caller_sees_all('))).toHaveLength(1)
    expect(catalogBefore).not.toContain('function turnlog.caller_sees_all(')
  })

  it('after openStore the schema is exactly a fresh database migrated to latest, every function included', async () => {
    // then every migration this tree knows is recorded, as in the fresh database
    expect(await recordedMigrations(old.connectionString)).toEqual(await recordedMigrations(fresh.connectionString))

    // and the catalog (functions: body md5, owner, ACL, settings, volatility, security definer; relations,
    // columns, grants, triggers, policies, roles) is the fresh one, line for line
    const diff = lineDiff(freshCatalog, catalogAfter)
    if (diff.length > 0) {
      throw new Error(`the upgraded schema differs from a fresh one (- fresh only, + upgraded only):\n${diff.join('\n')}`)
    }
    expect(catalogAfter).toBe(freshCatalog)
  })

  it('the events the release wrote are untouched, load and verify', async () => {
    // given the upgraded store
    const s = store as PostgresStore

    // then the migration changed no event
    expect(await eventRows(old.connectionString)).toEqual(eventsBefore)

    // and each session loads the messages the release wrote, in order, with their payloads
    for (const [session, messages] of [
      [sessionA, oldA],
      [sessionB, oldB],
    ] as const) {
      const loaded = await s.load(session)
      expect(loaded.version).toBe(messages.length)
      expect(loaded.messages.map((m) => [m.id, m.payload])).toEqual(messages.map((m) => [m.id, m.payload]))

      // and its hash chain verifies
      const verified = await verifyChain(s, session)
      expect(verified.breaks).toEqual([])
      expect(verified).toMatchObject({ ok: true, checked: messages.length, version: messages.length })
    }
  })

  it("the release's checkpoints keep their place, without a tenant; the owner assigns one with one UPDATE", async () => {
    // given the upgraded store (the owner, untenanted)
    const s = store as PostgresStore

    // then every checkpoint is where the release left it, with no tenant
    const rows = await withClient(old.connectionString, async (client) => {
      const { rows: r } = await client.query<{
        name: string
        tenant_id: string | null
        tx_id: string
        global_position: string
        delivered: string
      }>(
        `select name, tenant_id, tx_id::text as tx_id, global_position::text as global_position, delivered::text as delivered
           from turnlog.subscriptions order by name`,
      )
      return r
    })
    expect(rows).toEqual(checkpointsBefore.map((c) => ({ ...c, tenant_id: null })))

    // and an untenanted consumer of 'projector' resumes after its checkpoint: the events past it, in log order
    const [projector] = checkpointsBefore.filter((c) => c.name === 'projector')
    const past = await withClient(old.connectionString, async (client) => {
      const { rows: r } = await client.query<{ key: string }>(
        `select session_id || ':' || seq as key from turnlog.events
          where (tx_id, global_position) > ($1::xid8, $2::bigint) order by tx_id, global_position`,
        [projector?.tx_id, projector?.global_position],
      )
      return r.map((x) => x.key)
    })
    expect(past).toHaveLength(oldA.length + oldB.length - 3)
    const seen: string[] = []
    const sub = s.subscribe({ name: 'projector' }, (e) => void seen.push(`${e.sessionId}:${e.seq}`))
    await sub.catchUp()
    await sub.stop()
    expect(seen).toEqual(past)

    // when the operator of a multi-tenant deployment assigns 'acme-projector' to tenant acme, as the owner
    const acme = await createLoginRole(old, 'upacme', { groups: ['turnlog_writer'], tenant: 'acme' })
    roles.push(acme)
    const acmeBefore = (await listSubscriptions(s)).find((c) => c.name === 'acme-projector')
    const assigned = await withClient(old.connectionString, (client) =>
      client.query(`update turnlog.subscriptions set tenant_id = 'acme' where name = 'acme-projector' and tenant_id is null`),
    )
    expect(assigned.rowCount).toBe(1)

    // then acme's writer sees it at its checkpoint, and the untenanted owner's store no longer lists it as its own
    const acmeStore = await openStore({ connectionString: acme.connectionString, migrate: false, pool: { max: 1 } })
    try {
      const listed = await listSubscriptions(acmeStore)
      expect(listed.map((c) => [c.name, c.tenantId, c.checkpoint])).toEqual([['acme-projector', 'acme', acmeBefore?.checkpoint]])
    } finally {
      await acmeStore.close()
    }
  })

  it('new appends after the upgrade chain onto the old events and verify', async () => {
    // given the upgraded store and the head of each old chain
    const s = store as PostgresStore
    const headA = (await verifyChain(s, sessionA)).headHash
    const headB = (await verifyChain(s, sessionB)).headHash
    expect(headA).not.toBeNull()

    // when this tree's store appends to both (one alone, then two at once: the group commit may take them together)
    const next = user('after the upgrade')
    expect((await s.append(sessionA, [next])).version).toBe(oldA.length + 1)
    const [a, b] = await Promise.all([s.append(sessionA, [assistant('still here')]), s.append(sessionB, [user('and here')])])
    expect([a.version, b.version]).toEqual([oldA.length + 2, oldB.length + 1])

    // then each chain verifies over old and new events, and the old events are the prefix it was built on
    for (const [session, length, head] of [
      [sessionA, oldA.length, headA],
      [sessionB, oldB.length, headB],
    ] as const) {
      const verified = await verifyChain(s, session)
      expect(verified.breaks).toEqual([])
      expect(verified.ok).toBe(true)
      expect(verified.checked).toBe(verified.version)
      const events: { seq: number; hash: string }[] = []
      for await (const e of s.events(session)) events.push({ seq: e.seq, hash: e.hash })
      expect(events.find((e) => e.seq === length)?.hash).toBe(head)
    }
    expect((await s.load(sessionA)).messages.map((m) => m.id)).toEqual([...oldA.map((m) => m.id), next.id, a.appended[0]])
  })
})
