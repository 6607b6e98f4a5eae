import { describe, expect, it } from '@jest/globals'
import { audit, exportSessions, verifyChain } from '@turnlog/audit'
import { createMessage, newSessionId, type Message, type MessageId, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

let admin: PostgresStore, storeA: PostgresStore, storeB: PostgresStore, storeNone: PostgresStore
let roleA: LoginRole, roleB: LoginRole, roleNone: LoginRole
let sessionB: SessionId
let messagesB: Message[]

useTestBed(async (bed) => {
  admin = await bed.admin()
  roleA = await bed.role('ta', { groups: ['turnlog_writer'], tenant: 'tenant-a' })
  roleB = await bed.role('tb', { groups: ['turnlog_writer'], tenant: 'tenant-b' })
  roleNone = await bed.role('tn', { groups: ['turnlog_writer'] })
  storeA = await bed.open(roleA.connectionString)
  storeB = await bed.open(roleB.connectionString)
  storeNone = await bed.open(roleNone.connectionString)
  // tenant B's session, with a conflict recorded
  sessionB = await storeB.createSession({ tenantId: 'tenant-b' })
  messagesB = [createMessage({ role: 'user', content: 'secret of b' }), createMessage({ role: 'assistant', content: 'reply to b' })]
  await storeB.append(sessionB, messagesB)
  const clash = createMessage({ role: 'user', content: 'other content' }, { id: messagesB[0]?.id ?? '' })
  await storeB.append(sessionB, [clash]).catch(() => {})
})

/** What a caller can observe of a failure: code, message (ids replaced), details (ids replaced). */
function observable(error: unknown, ids: readonly string[]): unknown {
  if (typeof error !== 'object' || error === null) return { resolved: error }
  const e = error as { code?: unknown; message?: unknown; details?: unknown }
  let text = JSON.stringify({ code: e.code, message: e.message, details: e.details })
  for (const id of ids) text = text.split(id).join('<id>')
  return JSON.parse(text)
}

async function outcome(run: () => Promise<unknown>, ids: readonly string[]): Promise<unknown> {
  try {
    return { resolved: await run() }
  } catch (error) {
    return observable(error, ids)
  }
}

async function drain(it: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('a store opened for tenant A', () => {
  const operations: [string, (store: PostgresStore, sid: string, mid: string) => Promise<unknown>][] = [
    ['getSession', (s, sid) => s.getSession(sid)],
    ['load', (s, sid) => s.load(sid)],
    ['load at', (s, sid) => s.load(sid, { at: 1 })],
    ['events', (s, sid) => drain(s.events(sid))],
    ['state', (s, sid) => s.state(sid)],
    ['transcript', (s, sid) => s.transcript(sid)],
    ['append', (s, sid) => s.append(sid, [createMessage({ role: 'user', content: 'intrusion' })])],
    ['flush', (s, sid) => s.flush(sid, [createMessage({ role: 'user', content: 'intrusion' })])],
    ['rewind', (s, sid, mid) => s.rewind(sid, { from: mid as MessageId })],
    ['compact', (s, sid, mid) => s.compact(sid, { covered: [mid], summary: createMessage({ role: 'system', content: 'x' }) })],
    ['revise', (s, sid, mid) => s.revise(sid, mid, { role: 'user', content: 'rewritten' })],
    ['finalize', (s, sid, mid) => s.finalize(sid, mid)],
    ['fork', (s, sid, mid) => s.fork(sid, { at: mid })],
    ['redact', (s, sid, mid) => s.redact(sid, mid)],
    ['rebuild', (s, sid) => s.rebuild({ sessionId: sid })],
    ['conflicts', (s, sid) => s.conflicts(sid)],
    ['verifyChain', (s, sid) => verifyChain(s, sid)],
    ['audit', (s, sid) => audit(s, sid)],
    ['export', (s, sid) => drain(exportSessions(s, { sessionIds: [sid] }))],
  ]

  it.each(operations)("%s: tenant B's session looks exactly like a session that does not exist", async (_name, op) => {
    // given B's session and its message ids, and an id nobody uses
    const unknown = newSessionId()
    const mid = messagesB[0]?.id ?? ''
    // when A calls the operation with B's ids, and with the unknown id
    const onB = await outcome(() => op(storeA, sessionB, mid), [sessionB, mid])
    const onUnknown = await outcome(() => op(storeA, unknown, mid), [unknown, mid])
    // then A learns nothing: the same outcome, and B's session is untouched
    expect(onB).toEqual(onUnknown)
    expect(JSON.stringify(onB)).not.toContain('secret of b')
    const after = await admin.load(sessionB)
    expect(after.messages.map((m) => m.payload.content)).toEqual(['secret of b', 'reply to b'])
    expect(after.version).toBe(2)
  })

  it("does not list B's sessions, even when asking for tenant B", async () => {
    // given sessions of both tenants
    const sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
    // when A lists
    const all = await storeA.sessions()
    const asB = await storeA.sessions({ tenantId: 'tenant-b' })
    // then
    expect(all.sessions.map((s) => s.sessionId)).toContain(sessionA)
    expect(all.sessions.every((s) => s.tenantId === 'tenant-a')).toBe(true)
    expect(asB.sessions).toEqual([])
  })

  it("cannot create a session for tenant B nor take B's session id, and a missing tenant is refused", async () => {
    // given A's store
    // when A names tenant B, reuses B's id, or names no tenant
    const asB = await outcome(() => storeA.createSession({ tenantId: 'tenant-b' }), [])
    const takeId = await outcome(() => storeA.createSession({ id: sessionB, tenantId: 'tenant-a' }), [sessionB])
    const noTenant = await outcome(() => storeA.createSession(), [])
    // then
    expect(asB).toMatchObject({ code: 'PERMISSION_DENIED' })
    expect(takeId).toMatchObject({ code: 'SESSION_EXISTS' })
    expect(noTenant).toMatchObject({ code: 'PERMISSION_DENIED' })
    expect((await admin.getSession(sessionB)).tenantId).toBe('tenant-b')
  })

  it('may reuse a message id B uses, without learning that B has it', async () => {
    // given A's own session
    const sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
    const sameId = createMessage({ role: 'user', content: 'a different text' }, { id: messagesB[0]?.id ?? '' })
    // when A appends a message whose id B's log holds
    const result = await storeA.append(sessionA, [sameId])
    // then it is a plain append in A (no foreign_session conflict naming B's session), and B is untouched
    expect(result.appended).toEqual([sameId.id])
    expect((await admin.load(sessionB)).messages[0]?.payload.content).toBe('secret of b')
  })

  it("reads no row of B with raw SQL on its own login, and cannot write into B's session", async () => {
    // given A's login
    // when it queries every table and tries to insert an event into B's session
    const counts = await runSql<{ t: string; n: string }>(
      roleA.connectionString,
      `
      select 'sessions' as t, count(*) as n from turnlog.sessions where session_id = $1
      union all select 'events', count(*) from turnlog.events where session_id = $1
      union all select 'live', count(*) from turnlog.live_messages where session_id = $1
      union all select 'conflicts', count(*) from turnlog.conflicts where session_id = $1
      union all select 'tenant_roles', count(*) from turnlog.tenant_roles`,
      [sessionB],
    )
    const insert = await sqlStateOf(
      roleA.connectionString,
      `
      insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, 3, gen_random_uuid(), 'messages_retracted', '{"ids":[]}')`,
      [sessionB],
    )
    const rebuild = await sqlStateOf(roleA.connectionString, 'select turnlog.rebuild_session($1)', [sessionB])
    const redact = await sqlStateOf(
      roleA.connectionString,
      `select * from turnlog.redact_message($1, $2, '[]', '[]', '[]', '[]', '{}', null)`,
      [sessionB, messagesB[0]?.id],
    )
    // then: nothing of B is visible, its own mapping is the only one it sees, and the writes are refused
    expect(Object.fromEntries(counts.map((r) => [r.t, Number(r.n)]))).toEqual({
      sessions: 0,
      events: 0,
      live: 0,
      conflicts: 0,
      tenant_roles: 1,
    })
    expect(insert).toBe('42501')
    expect(rebuild).toBe('TLS01')
    expect(redact).toBe('TLS01')
    const bConflicts = await runSql<{ n: string }>(
      roleB.connectionString,
      'select count(*) as n from turnlog.conflicts where session_id = $1',
      [sessionB],
    )
    expect(Number(bConflicts[0]?.n)).toBe(1)
  })
  it("cannot append into B's session by calling the owner-run append functions with raw SQL, nor learn B's ids through them", async () => {
    // given A's own session and the arguments of a one-message append (the functions run as the owner
    // and apply the tenant rule themselves: docs/security.md)
    const sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
    const one = (messageId: string, content: string): unknown[] => [
      JSON.stringify([messageId]),
      JSON.stringify(['ab'.repeat(32)]),
      JSON.stringify([newSessionId()]),
      JSON.stringify([{ role: 'user', content }]),
      '[{}]',
    ]
    const fresh = createMessage({ role: 'user', content: 'x' }).id
    // when A calls append_messages on B's session (new id, and B's own id), and append_batches with B's
    // session next to its own
    const alone = await sqlStateOf(roleA.connectionString, 'select * from turnlog.append_messages($1, null, $2, $3, $4, $5, $6)', [
      sessionB,
      ...one(fresh, 'intrusion'),
    ])
    const aloneKnownId = await sqlStateOf(roleA.connectionString, 'select * from turnlog.append_messages($1, null, $2, $3, $4, $5, $6)', [
      sessionB,
      ...one(messagesB[0]?.id ?? '', 'intrusion'),
    ])
    const grouped = await runSql<{ batch: number; version: string }>(
      roleA.connectionString,
      'select batch, version from turnlog.append_batches($1, $2, $3, $4, $5, $6, $7, $8)',
      [
        JSON.stringify([sessionB, sessionA]),
        JSON.stringify([null, null]),
        JSON.stringify([1, 1]),
        JSON.stringify([createMessage({ role: 'user', content: 'x' }).id, messagesB[1]?.id]),
        JSON.stringify(['cd'.repeat(32), 'ef'.repeat(32)]),
        JSON.stringify([newSessionId(), newSessionId()]),
        JSON.stringify([
          { role: 'user', content: 'intrusion' },
          { role: 'user', content: 'mine' },
        ]),
        '[{},{}]',
      ],
    )
    // then B's session is refused as one that does not exist, only A's own batch is written (B's id is
    // new for A: no conflict with B's copy), and B's session is untouched
    expect(alone).toBe('TLS01')
    expect(aloneKnownId).toBe('TLS01')
    expect(grouped.map((r) => [Number(r.batch), Number(r.version)])).toEqual([[2, 1]])
    const mine = await storeA.load(sessionA)
    expect(mine.messages.map((m) => [m.id, m.payload.content])).toEqual([[messagesB[1]?.id, 'mine']])
    const after = await admin.load(sessionB)
    expect(after.messages.map((m) => m.payload.content)).toEqual(['secret of b', 'reply to b'])
    expect(after.version).toBe(2)
  })
})

describe('a writer role mapped to no tenant', () => {
  it('sees only sessions without a tenant', async () => {
    // given a tenant-less session and B's session
    const own = await storeNone.createSession()
    await storeNone.append(own, [createMessage({ role: 'user', content: 'single-tenant deployment' })])
    // when it lists and loads
    const page = await storeNone.sessions()
    const onB = await outcome(() => storeNone.load(sessionB), [sessionB])
    // then
    expect(page.sessions.map((s) => s.sessionId)).toEqual([own])
    expect(onB).toMatchObject({ code: 'SESSION_NOT_FOUND' })
    // and the tenants do not see it
    expect(await outcome(() => storeA.load(own), [own])).toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })
})
