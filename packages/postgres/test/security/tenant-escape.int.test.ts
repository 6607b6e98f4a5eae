/**
 * Every way a tenant login could try to leave its tenant (issue 13, item 6: a tenant login that is a
 * member of `turnlog_writer` could `SET ROLE turnlog_writer` and then read and append to sessions
 * outside its tenant). Each probe runs as the tenant's own login on one connection, after each role
 * switch it can make; a foreign session must look exactly like a missing one, and nothing may be written.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, newEventId, newSessionId, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'
import { createLoginRole, dropLoginRoles, runSql, type LoginRole } from './support/security-fixtures.js'

let db: TestDatabase
let admin: PostgresStore
let roleA: LoginRole
let roleB: LoginRole
let storeB: PostgresStore
/** Tenant B's session, an untenanted session, and a session id nobody has. */
let sessionB: SessionId
let sessionNone: SessionId
const missing = newSessionId()
const messageB = createMessage({ role: 'user', content: 'secret of b' })
const messageNone = createMessage({ role: 'user', content: 'secret of nobody' })

beforeAll(async () => {
  db = await createTestDatabase()
  admin = await openStore({ connectionString: db.connectionString, pool: { max: 2 } })
  roleA = await createLoginRole(db, 'ea', { groups: ['turnlog_writer'], tenant: 'tenant-a' })
  roleB = await createLoginRole(db, 'eb', { groups: ['turnlog_writer'], tenant: 'tenant-b' })
  storeB = await openStore({ connectionString: roleB.connectionString, migrate: false, pool: { max: 1 } })
  sessionB = await storeB.createSession({ tenantId: 'tenant-b' })
  await storeB.append(sessionB, [messageB])
  sessionNone = await admin.createSession()
  await admin.append(sessionNone, [messageNone])
})

afterAll(async () => {
  for (const s of [storeB, admin]) await s?.close()
  await db?.drop()
  await dropLoginRoles([roleA, roleB].filter((r) => r !== undefined))
})

/** Runs `setup` then `probe` as tenant A's login on one connection; the probe's rows, or its SQLSTATE. */
async function asTenantA(setup: readonly string[], probe: string, params: readonly unknown[] = []): Promise<unknown> {
  const client = new pg.Client({ connectionString: roleA.connectionString })
  client.on('error', () => {})
  await client.connect()
  try {
    for (const s of setup) await client.query(s)
    const result = await client.query(probe, params as unknown[])
    return { rows: result.rows.length, affected: result.rowCount }
  } catch (error) {
    return { sqlState: (error as { code?: unknown }).code }
  } finally {
    await client.end().catch(() => {})
  }
}

/** What the superuser sees of a session: its version and its events. */
async function footprint(sid: string): Promise<unknown> {
  return runSql(
    db.connectionString,
    `select (select version from turnlog.sessions where session_id = $1) as version,
    (select count(*) from turnlog.events where session_id = $1)::int as events`,
    [sid],
  )
}

/** The role switches a tenant login can make (it is a member of turnlog_writer). */
const CONTEXTS: [string, readonly string[]][] = [
  ['as the login', []],
  ['after SET ROLE turnlog_writer', ['set role turnlog_writer']],
  ['after SET ROLE turnlog_writer and RESET ROLE', ['set role turnlog_writer', 'reset role']],
  ['after SET LOCAL ROLE turnlog_writer in a transaction', ['begin', 'set local role turnlog_writer']],
  ["after set_config('role', 'turnlog_writer')", ["select set_config('role', 'turnlog_writer', false)"]],
]

/** Probes on one foreign session ($1) and one of its messages ($2). */
function probes(): [string, string, (sid: string, mid: string) => unknown[]][] {
  const hash = contentHash({ role: 'user', content: 'intrusion' })
  const uuid = () => newEventId()
  return [
    ['select its session row', 'select * from turnlog.sessions where session_id = $1', (s) => [s]],
    ['select its events', 'select * from turnlog.events where session_id = $1', (s) => [s]],
    [
      'select its events by message id',
      'select * from turnlog.events where message_id = $1::uuid and $2::text is not null',
      (_s, m) => [m, 'x'],
    ],
    ['select its projection', 'select * from turnlog.live_messages where session_id = $1', (s) => [s]],
    ['select its conflicts', 'select * from turnlog.conflicts where session_id = $1', (s) => [s]],
    ['load_session', 'select * from turnlog.load_session($1)', (s) => [s]],
    ['load_live', 'select * from turnlog.load_live($1)', (s) => [s]],
    ['rebuild_read', 'select * from turnlog.rebuild_read(array[$1::uuid])', (s) => [s]],
    ['rebuild_session', 'select turnlog.rebuild_session($1)', (s) => [s]],
    ['rebuild_sessions', 'select * from turnlog.rebuild_sessions(array[$1::uuid])', (s) => [s]],
    [
      'append_messages',
      'select * from turnlog.append_messages($1, null, $2, $3, $4, $5, $6)',
      (s) => [
        s,
        JSON.stringify([uuid()]),
        JSON.stringify([hash]),
        JSON.stringify([uuid()]),
        JSON.stringify([{ role: 'user', content: 'intrusion' }]),
        JSON.stringify([{ createdAt: new Date().toISOString() }]),
      ],
    ],
    [
      'append_batches',
      'select * from turnlog.append_batches($1, $2, $3, $4, $5, $6, $7, $8)',
      (s) => [
        JSON.stringify([s]),
        JSON.stringify([null]),
        JSON.stringify([1]),
        JSON.stringify([uuid()]),
        JSON.stringify([hash]),
        JSON.stringify([uuid()]),
        JSON.stringify([{ role: 'user', content: 'intrusion' }]),
        JSON.stringify([{ createdAt: new Date().toISOString() }]),
      ],
    ],
    [
      'redact_message',
      'select * from turnlog.redact_message($1, $2, $3, $4, $5, $6, $7, null)',
      (s, m) => [
        s,
        m,
        JSON.stringify([{ sessionId: s, seq: 1 }]),
        JSON.stringify([{ role: 'user', content: '[redacted]' }]),
        '[]',
        '[]',
        JSON.stringify({ [s]: uuid() }),
      ],
    ],
    ['lock_message_sessions', 'select turnlog.lock_message_sessions($1, $2)', (s, m) => [s, m]],
    [
      'import_events',
      'select turnlog.import_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      (s) => [s, '99', uuid(), 'message_finalized', '', '', '', '{}', new Date().toISOString(), '', '00'.repeat(32)],
    ],
    [
      'insert an event',
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
      values ($1, 99, $2, 'message_finalized', null, null, null, '{}')`,
      (s) => [s, uuid()],
    ],
    [
      'insert a conflict',
      `insert into turnlog.conflicts (session_id, conflict_id, message_id, reason, incoming_hash, incoming_payload)
      values ($1, $2, $2, 'x', '\\x00', '{}')`,
      (s) => [s, uuid()],
    ],
    ['update its version', 'update turnlog.sessions set version = version + 1 where session_id = $1', (s) => [s]],
    ['lock its row', 'select version from turnlog.sessions where session_id = $1 for update', (s) => [s]],
  ]
}

describe('a tenant login trying to leave its tenant (regression, issue 13 item 6)', () => {
  it('cannot see or write an untenanted session after SET ROLE turnlog_writer', async () => {
    // given tenant A's login, a member of turnlog_writer, and a session without a tenant
    // when it switches to the group role and reads or appends
    const read = await asTenantA(['set role turnlog_writer'], 'select * from turnlog.events where session_id = $1', [sessionNone])
    const load = await asTenantA(['set role turnlog_writer'], 'select * from turnlog.load_session($1)', [sessionNone])
    const insertSession = await asTenantA(['set role turnlog_writer'], 'insert into turnlog.sessions (session_id) values ($1)', [
      newSessionId(),
    ])
    // then it sees nothing, and may not create a session outside its tenant
    expect([read, load, insertSession]).toEqual([{ rows: 0, affected: 0 }, { sqlState: 'TLS01' }, { sqlState: '42501' }])
  })
})

describe('every escalation path of a tenant login (class)', () => {
  it.each(CONTEXTS)(
    "%s: another tenant's and an untenanted session look exactly like a missing one, and nothing is written",
    async (_ctx, setup) => {
      for (const [what, text, params] of probes()) {
        // given the footprints before
        const before = [await footprint(sessionB), await footprint(sessionNone)]
        // when probing a missing session, tenant B's and the untenanted one
        const onMissing = await asTenantA(setup, text, params(missing, newEventId()))
        const onB = await asTenantA(setup, text, params(sessionB, messageB.id))
        const onNone = await asTenantA(setup, text, params(sessionNone, messageNone.id))
        // then the answers are the same, and nothing changed
        expect({ what, onB, onNone }).toEqual({ what, onB: onMissing, onNone: onMissing })
        expect([await footprint(sessionB), await footprint(sessionNone)]).toEqual(before)
      }
    },
  )

  it.each([
    ['SET ROLE turnlog_owner', 'set role turnlog_owner'],
    ['SET ROLE turnlog_reader', 'set role turnlog_reader'],
    ["SET ROLE to tenant B's login", () => `set role "${roleB.name}"`],
    ['SET ROLE to the superuser', 'set role postgres'],
    ["SET SESSION AUTHORIZATION to tenant B's login", () => `set session authorization "${roleB.name}"`],
    ['SET SESSION AUTHORIZATION to the superuser', 'set session authorization postgres'],
    ['remap itself to tenant B', () => `update turnlog.tenant_roles set tenant_id = 'tenant-b' where role_name = '${roleA.name}'`],
    ['map itself again to tenant B', () => `insert into turnlog.tenant_roles (role_name, tenant_id) values ('${roleA.name}', 'tenant-b')`],
    ['delete its mapping', () => `delete from turnlog.tenant_roles where role_name = '${roleA.name}'`],
    ['grant itself turnlog_owner', () => `grant turnlog_owner to "${roleA.name}"`],
    ["call the unchecked rebuild of another tenant's session", () => `select turnlog.rebuild_session_unchecked('${sessionB}')`],
    ['call the unchecked batch rebuild', () => `select turnlog.rebuild_sessions_unchecked(array['${sessionB}'::uuid])`],
    ['call the chain predecessor lookup', () => `select turnlog.chain_predecessor('${sessionB}', 2, pg_current_xact_id())`],
    ['call the tenant check with another tenant', "select turnlog.caller_may_access('tenant-b')"],
  ] as [string, string | (() => string)][])('%s is refused (42501)', async (_what, statement) => {
    // when the tenant login tries it
    const outcome = await asTenantA([], typeof statement === 'string' ? statement : statement())
    // then
    expect(outcome).toEqual({ sqlState: '42501' })
  })

  it('asking bound_tenant about another role answers its own tenant, as the login and after SET ROLE', async () => {
    for (const setup of [[], ['set role turnlog_writer']]) {
      const client = new pg.Client({ connectionString: roleA.connectionString })
      await client.connect()
      try {
        for (const st of setup) await client.query(st)
        const { rows } = await client.query<{ t: string | null }>('select turnlog.bound_tenant($1) as t', [roleB.name])
        expect(rows[0]?.t).toBe('tenant-a')
      } finally {
        await client.end()
      }
    }
  })

  it('refuses to bind a role that passes every policy (superuser, BYPASSRLS, member of turnlog_owner) to a tenant', async () => {
    // given roles that bypass row level security
    const owner = await createLoginRole(db, 'eo', { groups: ['turnlog_owner'] })
    const bypass = await createLoginRole(db, 'ebp', { groups: ['turnlog_writer'] })
    try {
      await runSql(db.connectionString, `alter role "${bypass.name}" bypassrls`)
      // when the operator maps them
      const tries = await Promise.all(
        [owner.name, bypass.name, 'postgres'].map((name) =>
          runSql(db.connectionString, 'insert into turnlog.tenant_roles (role_name, tenant_id) values ($1, $2)', [name, 'tenant-a']).then(
            () => 'ok',
            (e: unknown) => String((e as { code?: unknown }).code),
          ),
        ),
      )
      // then every mapping is refused
      expect(tries).toEqual(['42501', '42501', '42501'])
    } finally {
      await dropLoginRoles([owner, bypass])
    }
  })

  it('a superuser acting as a tenant with SET ROLE still gets exactly that tenant', async () => {
    // given the superuser's connection
    const client = new pg.Client({ connectionString: db.connectionString })
    await client.connect()
    try {
      // when it switches to tenant B's login
      await client.query(`set role "${roleB.name}"`)
      const own = await client.query('select session_id from turnlog.sessions where session_id = $1', [sessionB])
      const none = await client.query('select session_id from turnlog.sessions where session_id = $1', [sessionNone])
      // then it sees tenant B's session and not the untenanted one
      expect([own.rows.length, none.rows.length]).toEqual([1, 0])
    } finally {
      await client.end()
    }
  })
})
