import { beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { mapDatabaseError } from '@turnlog/postgres/internal'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

let db: TestDatabase
let admin: PostgresStore, writer: PostgresStore, reader: PostgresStore
let writerRole: LoginRole, readerRole: LoginRole

useTestBed(async (bed) => {
  db = bed.db
  admin = await bed.admin()
  writerRole = await bed.role('w', { groups: ['turnlog_writer'] })
  readerRole = await bed.role('r', { groups: ['turnlog_reader'] })
  // the default migrate: true only reads the migration tables when nothing is pending
  writer = await bed.open(writerRole.connectionString, { migrate: true })
  reader = await bed.open(readerRole.connectionString, { migrate: true })
})

const user = (content: string) => createMessage({ role: 'user', content })

describe('role model', () => {
  it('creates the three group roles NOLOGIN, and the owner owns the schema, every table and every function', async () => {
    // given the migrated database
    // when reading the catalog
    const roles = await runSql<{ rolname: string; rolcanlogin: boolean }>(
      db.connectionString,
      `select rolname, rolcanlogin from pg_roles where rolname in ('turnlog_owner', 'turnlog_writer', 'turnlog_reader') order by rolname`,
    )
    const owners = await runSql<{ owner: string; n: string }>(
      db.connectionString,
      `
      select owner, count(*) as n from (
        select pg_get_userbyid(c.relowner) as owner from pg_class c where c.relnamespace = 'turnlog'::regnamespace and c.relkind in ('r', 'S')
        union all select pg_get_userbyid(p.proowner) from pg_proc p where p.pronamespace = 'turnlog'::regnamespace
        union all select pg_get_userbyid(n.nspowner) from pg_namespace n where n.nspname = 'turnlog') o
      group by owner`,
    )
    // then
    expect(roles).toEqual([
      { rolname: 'turnlog_owner', rolcanlogin: false },
      { rolname: 'turnlog_reader', rolcanlogin: false },
      { rolname: 'turnlog_writer', rolcanlogin: false },
    ])
    expect(owners.map((o) => o.owner)).toEqual(['turnlog_owner'])
    expect(Number(owners[0]?.n)).toBeGreaterThan(15)
  })

  it('runs every trigger and internal function as the owner with a fixed search_path', async () => {
    // given the functions that write the projection or read across tenants
    const names = ['events_claim_ids', 'events_link', 'events_project', 'rebuild_session', 'redact_message']
    // when reading their attributes
    const rows = await runSql<{ proname: string; prosecdef: boolean; proconfig: string[] | null }>(
      db.connectionString,
      `select proname, prosecdef, proconfig from pg_proc where pronamespace = 'turnlog'::regnamespace and proname = any($1) order by proname`,
      [names],
    )
    // then
    expect(rows.map((r) => r.proname)).toEqual([...names].sort())
    for (const r of rows) {
      expect({ name: r.proname, definer: r.prosecdef, config: r.proconfig }).toEqual({
        name: r.proname,
        definer: true,
        config: ['search_path=pg_catalog, pg_temp'],
      })
    }
  })

  it('creates the roles idempotently: databases migrating at the same time on one cluster all succeed', async () => {
    // given three more databases on the same cluster, the roles already there
    const more = await Promise.all([1, 2, 3].map(() => createTestDatabase()))
    try {
      // when all three migrate at once
      const stores = await Promise.all(more.map((d) => openStore({ connectionString: d.connectionString })))
      // then every one is secured the same way
      for (const [i, d] of more.entries()) {
        const [row] = await runSql<{ owner: string; rls: boolean }>(
          d.connectionString,
          `select pg_get_userbyid(relowner) as owner, relrowsecurity as rls from pg_class where oid = 'turnlog.events'::regclass`,
        )
        expect(row).toEqual({ owner: 'turnlog_owner', rls: true })
        await stores[i]?.close()
      }
    } finally {
      await Promise.all(more.map((d) => d.drop()))
    }
  })
})

describe('a login role granted turnlog_writer', () => {
  let sid: SessionId

  beforeAll(async () => {
    sid = await writer.createSession()
  })

  it('appends, flushes, loads, rewinds, compacts, revises, forks, rebuilds and redacts through the store', async () => {
    // given a writer store
    const a = user('a')
    const b = createMessage({ role: 'assistant', content: 'b' })
    const c = user('c')
    // when it drives every operation
    await writer.append(sid, [a, b])
    await writer.flush(sid, [a, b, c])
    await writer.revise(sid, c.id, { role: 'user', content: 'c, edited' })
    const summary = createMessage({ role: 'system', content: 'summary of a' })
    await writer.compact(sid, { covered: [a.id], summary })
    const child = await writer.fork(sid, { at: b.id })
    await writer.rewind(sid, { after: b.id })
    const rebuilt = await writer.rebuild({ sessionId: sid })
    const redacted = await writer.redact(sid, b.id, { reason: 'erasure request' })
    // then the log and the projection are right
    expect((await writer.load(sid)).messages.map((m) => m.payload.content)).toEqual(['summary of a', '[redacted]'])
    expect((await writer.load(child)).messages.map((m) => m.payload.content)).toEqual(['summary of a', '[redacted]'])
    expect(rebuilt.drift).toEqual([])
    expect(redacted.sessions.map((s) => s.scrubbed)).toEqual(expect.arrayContaining([1, 1]))
    expect((await admin.rebuild({ verify: true })).drift).toEqual([])
  })

  it.each([
    ['UPDATE turnlog.events', `update turnlog.events set payload = '{"role":"user","content":"x"}'`],
    ['DELETE turnlog.events', 'delete from turnlog.events'],
    ['TRUNCATE turnlog.events', 'truncate turnlog.events'],
    ['UPDATE turnlog.conflicts', `update turnlog.conflicts set reason = 'x'`],
    ['DELETE turnlog.conflicts', 'delete from turnlog.conflicts'],
    ['UPDATE turnlog.sessions.tenant_id', `update turnlog.sessions set tenant_id = 'x'`],
    ['DELETE turnlog.sessions', 'delete from turnlog.sessions'],
    ['INSERT turnlog.live_messages', `insert into turnlog.live_messages values (gen_random_uuid(), gen_random_uuid(), 1, 1, false)`],
    ['DELETE turnlog.live_messages', 'delete from turnlog.live_messages'],
    ['UPDATE turnlog.events.payload_digest', `update turnlog.events set payload_digest = '\\x00'`],
    ['INSERT turnlog.tenant_roles', `insert into turnlog.tenant_roles values (current_user, 'stolen')`],
    ['CALL turnlog.project_event', `select turnlog.project_event(e) from turnlog.events e limit 1`],
    ['CALL turnlog.rebuild_session_unchecked', `select turnlog.rebuild_session_unchecked(gen_random_uuid())`],
    ['CREATE in schema turnlog', 'create table turnlog.mine (x int)'],
  ])('is refused %s with 42501', async (_what, statement) => {
    // given the writer's own login
    // when it runs the statement around the store
    const state = await sqlStateOf(writerRole.connectionString, statement)
    // then the database refuses it for lack of privilege
    expect(state).toBe('42501')
  })

  it('sees a raw UPDATE through the store connection mapped to PERMISSION_DENIED', async () => {
    // given the writer store's own connection
    let caught: unknown
    // when SQL around the store tries to rewrite history
    try {
      await sql`update turnlog.events set payload = ${'{"role":"user","content":"forged"}'}::json where session_id = ${sid}`.execute(
        writer.db,
      )
    } catch (error) {
      caught = mapDatabaseError(error)
    }
    // then the store's error mapping reports it
    expect(isTurnlogError(caught, 'PERMISSION_DENIED')).toBe(true)
    expect((await admin.load(sid)).messages.every((m) => m.payload.content !== 'forged')).toBe(true)
  })
})

describe('a login role granted turnlog_reader', () => {
  it('loads and streams events, and every write is PERMISSION_DENIED', async () => {
    // given a session the writer filled
    const sid = await writer.createSession()
    const m = user('hello')
    await writer.append(sid, [m])
    // when the reader reads, then tries to write
    const loaded = await reader.load(sid)
    const attempts = await Promise.all([
      reader.append(sid, [user('no')]).catch((e: unknown) => e),
      reader.createSession().catch((e: unknown) => e),
      reader.rewind(sid, { from: m.id }).catch((e: unknown) => e),
      reader.redact(sid, m.id).catch((e: unknown) => e),
    ])
    // then
    expect(loaded.messages.map((x) => x.id)).toEqual([m.id])
    for (const e of attempts) expect(isTurnlogError(e, 'PERMISSION_DENIED')).toBe(true)
    expect((await admin.getSession(sid)).version).toBe(1)
  })
})
