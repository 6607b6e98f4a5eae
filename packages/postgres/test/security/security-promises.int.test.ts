/**
 * Adversarial tests of the promises of docs/security.md that no other test pins: every "may not" of the
 * reader (raw SQL, not only through the store), the writer's forbidden columns and internal functions,
 * what PUBLIC may do, the catalog invariants later migrations must keep (definer functions with a fixed
 * search_path and no PUBLIC EXECUTE, RLS with a policy on every tenant table, no default privileges),
 * a tenant reader's view, the rows of `tenant_roles` a role sees, the tenant a writer's raw session insert
 * may name, the chain link a non-owner cannot choose, and a redaction that must stay in its tenant.
 */
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { createMessage, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

let dbUrl: string
let admin: PostgresStore
let writerRole: LoginRole, readerRole: LoginRole, plainRole: LoginRole
let readerA: LoginRole, writerA: LoginRole, writerB: LoginRole
let sessionA: SessionId, sessionB: SessionId
let storeA: PostgresStore
const secretOfB = createMessage({ role: 'user', content: 'secret of b' })

useTestBed(async (bed) => {
  dbUrl = bed.db.connectionString
  admin = await bed.admin()
  writerRole = await bed.role('pw', { groups: ['turnlog_writer'] })
  readerRole = await bed.role('pr', { groups: ['turnlog_reader'] })
  plainRole = await bed.role('pp', { groups: [] })
  writerA = await bed.role('pwa', { groups: ['turnlog_writer'], tenant: 'tenant-a' })
  writerB = await bed.role('pwb', { groups: ['turnlog_writer'], tenant: 'tenant-b' })
  readerA = await bed.role('pra', { groups: ['turnlog_reader'], tenant: 'tenant-a' })
  storeA = await bed.open(writerA.connectionString)
  const storeB = await bed.open(writerB.connectionString)
  sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
  await storeA.append(sessionA, [createMessage({ role: 'user', content: 'a' })])
  sessionB = await storeB.createSession({ tenantId: 'tenant-b' })
  await storeB.append(sessionB, [secretOfB])
})

/** Statements every role but the owner is refused; the reader's whole "anything else". */
const READER_REFUSED: readonly (readonly [string, string])[] = [
  ['INSERT turnlog.sessions', `insert into turnlog.sessions (session_id) values (gen_random_uuid())`],
  ['UPDATE turnlog.sessions (version)', 'update turnlog.sessions set version = version + 1'],
  ['SELECT … FOR UPDATE turnlog.sessions', 'select version from turnlog.sessions for update'],
  ['DELETE turnlog.sessions', 'delete from turnlog.sessions'],
  [
    'INSERT turnlog.events',
    `insert into turnlog.events (session_id, seq, event_id, type, data) values (gen_random_uuid(), 1, gen_random_uuid(), 'messages_retracted', '{"ids":[]}')`,
  ],
  ['UPDATE turnlog.events', `update turnlog.events set data = '{}'`],
  ['DELETE turnlog.events', 'delete from turnlog.events'],
  ['TRUNCATE turnlog.events', 'truncate turnlog.events'],
  ['INSERT turnlog.conflicts', 'insert into turnlog.conflicts (session_id) values (gen_random_uuid())'],
  ['DELETE turnlog.conflicts', 'delete from turnlog.conflicts'],
  ['DELETE turnlog.live_messages', 'delete from turnlog.live_messages'],
  ['INSERT turnlog.tenant_roles', `insert into turnlog.tenant_roles values (current_user, 'stolen')`],
  ['SELECT turnlog.message_ids', 'select * from turnlog.message_ids'],
  ['INSERT turnlog.subscriptions', `insert into turnlog.subscriptions (name) values ('mine')`],
  ['UPDATE turnlog.subscriptions', `update turnlog.subscriptions set name = name`],
  ['DELETE turnlog.subscriptions', 'delete from turnlog.subscriptions'],
  ['LOCK turnlog.subscriptions (row exclusive)', 'begin; lock table turnlog.subscriptions in row exclusive mode; commit'],
  ['subscription_create', `select turnlog.subscription_create(null, 'mine', '0'::xid8, 0)`],
  ['subscription_move', `select turnlog.subscription_move(null, 'mine', '0'::xid8, 0, '0'::xid8, 0, 0)`],
  ['subscription_drop', `select turnlog.subscription_drop(null, 'mine')`],
  ['DELETE turnlog.schema_migrations', 'delete from turnlog.schema_migrations'],
  ['CREATE in schema turnlog', 'create table turnlog.mine (x int)'],
  ['append_messages', 'select turnlog.append_messages(null::uuid, null::bigint, null, null, null, null, null)'],
  ['append_batches', 'select turnlog.append_batches(null::json, null, null, null, null, null, null, null)'],
  ['rebuild_session', 'select turnlog.rebuild_session(null::uuid)'],
  ['rebuild_sessions', 'select turnlog.rebuild_sessions(null::uuid[])'],
  ['redact_message', 'select turnlog.redact_message(null::uuid, null::uuid, null, null, null, null, null, null)'],
  ['lock_message_sessions', 'select turnlog.lock_message_sessions(null::uuid, null::uuid)'],
  ['import_events', 'select turnlog.import_events(null::text, null::text, null, null, null, null, null, null, null, null, null)'],
  ['rebuild_session_unchecked', 'select turnlog.rebuild_session_unchecked(null::uuid)'],
]

/** The internal functions: executable by the owner only (docs/security.md, "call the internal functions"). */
const INTERNAL_CALLS: readonly (readonly [string, string])[] = [
  ['caller_role', 'select turnlog.caller_role()'],
  ['caller_sees_all', `select turnlog.caller_sees_all('postgres')`],
  ['caller_may_access', `select turnlog.caller_may_access('tenant-b')`],
  ['accessible_session_tenant', 'select turnlog.accessible_session_tenant(gen_random_uuid())'],
  ['import_link_mismatch', `select turnlog.import_link_mismatch(gen_random_uuid(), 1, '\\x00', '\\x00')`],
  ['chain_predecessor', 'select turnlog.chain_predecessor(gen_random_uuid(), 2, pg_current_xact_id())'],
  ['rebuild_sessions_unchecked', 'select turnlog.rebuild_sessions_unchecked(array[gen_random_uuid()])'],
  ['project_event', 'select turnlog.project_event(e) from turnlog.events e limit 1'],
]

describe('a login granted turnlog_reader may do nothing but read', () => {
  it.each(READER_REFUSED)('is refused %s with 42501', async (_what, statement) => {
    // given the reader's own login, with raw SQL
    // when it tries the statement
    const state = await sqlStateOf(readerRole.connectionString, statement)
    // then the database refuses it for lack of privilege
    expect(state).toBe('42501')
  })

  it.each(INTERNAL_CALLS)('is refused the internal function %s with 42501', async (_what, statement) => {
    // given the reader's own login
    // when it calls an internal function
    // then it lacks EXECUTE
    expect(await sqlStateOf(readerRole.connectionString, statement)).toBe('42501')
  })

  it('reads every table it is granted (the reads the store needs)', async () => {
    // given the reader's own login
    const tables = ['sessions', 'events', 'live_messages', 'conflicts', 'tenant_roles', 'subscriptions', 'schema_migrations']
    // when it reads each
    const states = await Promise.all(tables.map((t) => sqlStateOf(readerRole.connectionString, `select * from turnlog.${t} limit 1`)))
    // then every read is allowed
    expect(states).toEqual(tables.map(() => 'ok'))
  })
})

describe('a login granted turnlog_writer may not', () => {
  it.each([
    [
      'insert hash',
      `insert into turnlog.events (session_id, seq, event_id, type, data, hash) values ($1, 2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}', '\\x00')`,
    ],
    [
      'insert tx_id',
      `insert into turnlog.events (session_id, seq, event_id, type, data, tx_id) values ($1, 2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}', '1')`,
    ],
    [
      'insert payload_digest',
      `insert into turnlog.events (session_id, seq, event_id, type, data, payload_digest) values ($1, 2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}', '\\x00')`,
    ],
    ['UPDATE turnlog.live_messages', 'update turnlog.live_messages set partial = true where session_id = $1'],
    ['TRUNCATE turnlog.live_messages', 'truncate turnlog.live_messages'],
    ['TRUNCATE turnlog.conflicts', 'truncate turnlog.conflicts'],
    ['UPDATE turnlog.tenant_roles', `update turnlog.tenant_roles set tenant_id = 'tenant-b' where $1::uuid is not null`],
    [
      'INSERT turnlog.subscriptions',
      `insert into turnlog.subscriptions (name, tenant_id, tx_id, global_position) select 'mine', 'tenant-a', '0', 0 where $1::uuid is not null`,
    ],
    ['UPDATE turnlog.subscriptions', `update turnlog.subscriptions set delivered = 0 where $1::uuid is not null`],
    ['DELETE turnlog.subscriptions', 'delete from turnlog.subscriptions where $1::uuid is not null'],
    ['LOCK turnlog.subscriptions (share row exclusive)', 'begin; lock table turnlog.subscriptions in share row exclusive mode; commit'],
    ['DELETE turnlog.tenant_roles', 'delete from turnlog.tenant_roles where $1::uuid is not null'],
    ['UPDATE turnlog.sessions.created_at', 'update turnlog.sessions set created_at = now() where session_id = $1'],
    ['SELECT turnlog.message_ids', 'select * from turnlog.message_ids where $1::uuid is not null'],
    ['INSERT turnlog.message_ids', `insert into turnlog.message_ids select * from turnlog.message_ids where $1::uuid is null`],
  ])('%s (42501, in its own tenant)', async (_what, statement) => {
    // given tenant A's writer login and its own session
    // when it runs the statement on its own session
    const state = await sqlStateOf(writerA.connectionString, statement, statement.includes('$1') ? [sessionA] : [])
    // then the privilege is missing, even where the policy would let it through
    expect(state).toBe('42501')
  })

  it.each(INTERNAL_CALLS)('call the internal function %s (42501)', async (_what, statement) => {
    // given an unmapped writer login
    // when it calls an internal function
    // then it lacks EXECUTE
    expect(await sqlStateOf(writerRole.connectionString, statement)).toBe('42501')
  })
})

describe('PUBLIC (a login without any turnlog role)', () => {
  it.each([
    ['SELECT turnlog.sessions', 'select * from turnlog.sessions'],
    ['SELECT turnlog.subscriptions', 'select * from turnlog.subscriptions'],
    ['load_session', 'select * from turnlog.load_session(gen_random_uuid())'],
    ['bound_tenant', 'select turnlog.bound_tenant(current_user)'],
    ['append_messages', 'select turnlog.append_messages(null::uuid, null::bigint, null, null, null, null, null)'],
  ])('is refused %s with 42501', async (_what, statement) => {
    // given a login granted no turnlog role
    // when it reaches into the schema
    // then it has no privilege on the schema
    expect(await sqlStateOf(plainRole.connectionString, statement)).toBe('42501')
  })
})

describe('the catalog keeps the model later migrations must keep', () => {
  it('every SECURITY DEFINER function of turnlog pins search_path and is not executable by PUBLIC', async () => {
    // given the migrated schema
    // when listing its definer functions, their config and whether PUBLIC holds EXECUTE
    const rows = await runSql<{ name: string; config: string[] | null; public: boolean }>(
      dbUrl,
      `
      select p.proname as name, p.proconfig as config,
        exists (select 1 from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                where a.grantee = 0 and a.privilege_type = 'EXECUTE') as public
      from pg_proc p where p.pronamespace = 'turnlog'::regnamespace and p.prosecdef order by p.proname`,
    )
    // then the documented definer entry points are among them, each pinned and closed to PUBLIC
    const documented = [
      'append_batches',
      'append_messages',
      'bound_tenant',
      'events_claim_ids',
      'events_link',
      'events_project',
      'import_events',
      'rebuild_session',
      'rebuild_sessions',
      'redact_message',
      'events_notify',
      'subscription_create',
      'subscription_drop',
      'subscription_move',
      'subscription_rebase',
      'subscription_record_error',
      'subscription_renew_lease',
    ]
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(documented))
    for (const r of rows) {
      expect({ name: r.name, config: r.config, public: r.public }).toEqual({
        name: r.name,
        config: expect.arrayContaining(['search_path=pg_catalog, pg_temp']),
        public: false,
      })
    }
  })

  it('PUBLIC holds no privilege on the schema nor on any of its tables, and there are no default privileges', async () => {
    // given the migrated schema
    // when reading the ACLs of the schema and of its tables, and the default privileges
    const [row] = await runSql<{ schema: boolean; tables: string[]; defaults: string }>(
      dbUrl,
      `
      select
        exists (select 1 from pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
                where n.nspname = 'turnlog' and a.grantee = 0) as schema,
        array(select distinct c.relname::text from pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
              where c.relnamespace = 'turnlog'::regnamespace and c.relkind in ('r', 'S', 'v') and a.grantee = 0) as tables,
        (select count(*) from pg_default_acl where defaclnamespace in (0, 'turnlog'::regnamespace))::text as defaults`,
    )
    // then nothing is open to PUBLIC
    expect(row).toEqual({ schema: false, tables: [], defaults: '0' })
  })

  it('every table holding tenant data has row level security and a policy; the others are listed by the doc', async () => {
    // given the migrated schema
    // when listing its tables with their RLS flag and policy count
    const rows = await runSql<{ name: string; rls: boolean; policies: number }>(
      dbUrl,
      `
      select c.relname as name, c.relrowsecurity as rls, (select count(*) from pg_policy p where p.polrelid = c.oid)::int as policies
      from pg_class c where c.relnamespace = 'turnlog'::regnamespace and c.relkind in ('r', 'p') order by c.relname`,
    )
    // then the tenant tables are guarded, and a table without RLS is one the doc names as such
    const guarded = ['conflicts', 'events', 'live_messages', 'sessions', 'subscriptions', 'tenant_roles']
    const withoutTenant = ['message_ids', 'schema_migrations', 'schema_migrations_lock']
    for (const r of rows) {
      if (guarded.includes(r.name))
        expect({ name: r.name, rls: r.rls, policy: r.policies > 0 }).toEqual({ name: r.name, rls: true, policy: true })
      else expect(withoutTenant).toContain(r.name)
    }
    expect(rows.filter((r) => guarded.includes(r.name))).toHaveLength(guarded.length)
  })
})

describe('tenants and the link', () => {
  it("a tenant reader sees its tenant's rows and none of another tenant's, with raw SQL", async () => {
    // given sessions of tenants A and B
    // when tenant A's reader login reads every table and loads both sessions
    const [row] = await runSql<Record<string, string>>(
      readerA.connectionString,
      `
      select
        (select count(*) from turnlog.sessions where session_id = $1)::text as "aSessions",
        (select count(*) from turnlog.events where session_id = $1)::text as "aEvents",
        (select count(*) from turnlog.sessions where session_id = $2)::text as "bSessions",
        (select count(*) from turnlog.events where session_id = $2)::text as "bEvents",
        (select count(*) from turnlog.live_messages where session_id = $2)::text as "bLive",
        (select count(*) from turnlog.sessions where tenant_id is distinct from 'tenant-a')::text as "others"`,
      [sessionA, sessionB],
    )
    const loadB = await sqlStateOf(readerA.connectionString, 'select * from turnlog.load_session($1)', [sessionB])
    const loadMissing = await sqlStateOf(readerA.connectionString, 'select * from turnlog.load_session(gen_random_uuid())')
    // then it sees A and nothing of B, nor of any other tenant; loading B answers what a missing session answers
    expect(row).toEqual({ aSessions: '1', aEvents: '1', bSessions: '0', bEvents: '0', bLive: '0', others: '0' })
    expect([loadB, loadMissing]).toEqual(['TLS01', 'TLS01'])
  })

  it('a tenant writer creating a session with raw SQL must name its own tenant', async () => {
    // given tenant A's writer login
    const insert = 'insert into turnlog.sessions (session_id, tenant_id) values (gen_random_uuid(), $1)'
    // when it inserts a session row for tenant B, for no tenant, and for its own tenant
    const states = await Promise.all(['tenant-b', null, 'tenant-a'].map((t) => sqlStateOf(writerA.connectionString, insert, [t])))
    // then only its own tenant passes the policy
    expect(states).toEqual(['42501', '42501', 'ok'])
  })

  it('a role reads only its own row of tenant_roles', async () => {
    // given three mapped logins
    // when tenant A's writer and reader, and an unmapped writer, read the mapping table
    const seen = await Promise.all(
      [writerA, readerA, writerRole].map(async (r) =>
        (await runSql<{ role_name: string }>(r.connectionString, 'select role_name from turnlog.tenant_roles')).map((x) => x.role_name),
      ),
    )
    // then each sees its own row only
    expect(seen).toEqual([[writerA.name], [readerA.name], []])
  })

  it('a role other than the owner cannot choose a chain link: a superuser insert with a forged hash gets the computed one', async () => {
    // given tenant A's session with one event
    // when a superuser (not turnlog_owner) inserts the next event carrying a forged link
    await runSql(
      dbUrl,
      `insert into turnlog.events (session_id, seq, event_id, type, data, hash)
       values ($1, 2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}', '\\x00')`,
      [sessionA],
    )
    await runSql(dbUrl, 'update turnlog.sessions set version = 2 where session_id = $1', [sessionA])
    // then the trigger replaced it with the link it computed, and the chain verifies
    const [row] = await runSql<{ hash: Buffer }>(dbUrl, 'select hash from turnlog.events where session_id = $1 and seq = 2', [sessionA])
    expect(row?.hash.toString('hex')).not.toBe('00')
    const report = await verifyChain(admin, sessionA)
    expect(report).toMatchObject({ ok: true })
  })

  it("a tenant's redaction of a message id another tenant also uses scrubs nothing of the other tenant, through the store or raw SQL", async () => {
    // given tenant A's own session holding a message with the id of B's secret (ids are per tenant)
    const own = await storeA.createSession({ tenantId: 'tenant-a' })
    await storeA.append(own, [createMessage({ role: 'user', content: 'a copy' }, { id: secretOfB.id })])
    const placeholder = JSON.stringify({ role: 'user', content: '[redacted]' })
    // when A calls redact_message with raw SQL naming B's event as a target too, then redacts through the store
    const raw = await sqlStateOf(writerA.connectionString, `select * from turnlog.redact_message($1, $2, $3, $4, '[]', '[]', $5, null)`, [
      own,
      secretOfB.id,
      JSON.stringify([
        { sessionId: own, seq: 1 },
        { sessionId: sessionB, seq: 1 },
      ]),
      `[${placeholder},${placeholder}]`,
      JSON.stringify({ [own]: '0190c5e2-7b1c-7a33-9f00-1234567890ab', [sessionB]: '0190c5e2-7b1c-7a33-9f00-1234567890ac' }),
    ])
    const redacted = await storeA.redact(own, secretOfB.id)
    // then the raw call is refused as a stale target list, the store scrubs A's copy only, and B's log is untouched
    expect(raw).toBe('40001')
    expect(redacted.sessions.map((x) => x.sessionId)).toEqual([own])
    const [b] = await runSql<{ payload: unknown; digest: Buffer | null; version: string }>(
      dbUrl,
      `select e.payload, e.payload_digest as digest, s.version::text as version
         from turnlog.events e join turnlog.sessions s using (session_id) where e.session_id = $1 and e.seq = 1`,
      [sessionB],
    )
    expect(b).toEqual({ payload: { role: 'user', content: 'secret of b' }, digest: null, version: '1' })
  })
})
