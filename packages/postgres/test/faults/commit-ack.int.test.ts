/**
 * The ambiguous commit: the connection dies between COMMIT and its acknowledgement. A loopback proxy
 * (`startTcpProxy`) sits between the store and the server and cuts the connection either right after
 * the server committed (the client never hears: "ack-lost") or right before the commit (the server
 * rolls back: "commit-lost"). In both cases the caller sees `DB_TRANSIENT`, and the retry that
 * docs/guarantees.md promises is safe leaves the log exactly as one successful call would.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionId, type SessionStore, type TurnlogError } from '@turnlog/core'
import { openStore, withRetry, type PostgresStore } from '@turnlog/postgres'
import type { ProxyCloseMode, ProxyFaultKind, TcpProxy, TestDatabase } from '@turnlog/testing'
import { appendCounts, expectCode, startProxyTo } from './support/fault-helpers.js'
import { useTestBed } from '../support/use-test-bed.js'

let db: TestDatabase
let proxy: TcpProxy
let direct: PostgresStore, viaProxy: PostgresStore

useTestBed(async (bed) => {
  db = bed.db
  direct = await bed.admin()
  proxy = await startProxyTo(db.connectionString)
  bed.defer(() => proxy.close())
  viaProxy = await bed.open(proxy.url(db.connectionString))
})

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

/** Runs `op` once with the fault armed, then retries it with `withRetry`; returns what each attempt saw. */
async function withFault<T>(
  kind: ProxyFaultKind,
  close: ProxyCloseMode,
  match: (sql: string) => boolean,
  op: () => Promise<T>,
): Promise<{ first: TurnlogError; result: T | undefined; retryError: unknown; outcome: string; sql: readonly string[] }> {
  const fired = proxy.arm({ kind, close, match })
  const seen: unknown[] = []
  let result: T | undefined
  let retryError: unknown
  try {
    result = await withRetry(op, { attempts: 4, baseDelayMs: 5, onRetry: (e) => seen.push(e) })
  } catch (error) {
    retryError = error
  }
  expect(proxy.armed).toBe(false) // the fault fired on this call, not on some other statement
  const report = await fired
  const first = expectCode(seen[0], 'DB_TRANSIENT')
  expect(seen).toHaveLength(1) // one fault, one retry
  return { first, result, retryError, outcome: report.serverOutcome, sql: report.sql }
}

/** The raw driver error under a TurnlogError (what map-database-error saw). */
function rawCause(error: TurnlogError): { message: string; code: unknown } {
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined
  return { message: String(cause?.message), code: cause?.code }
}

async function newSession(store: SessionStore, messages: readonly Message[] = []): Promise<SessionId> {
  const id = await store.createSession()
  if (messages.length > 0) await store.append(id, messages)
  return id
}

const isAppend = (sql: string): boolean => sql.includes('append_messages')

describe.each<ProxyCloseMode>(['fin', 'rst'])('append and flush with the socket closed by %s', (close) => {
  it('commit happened, ack lost: the caller gets DB_TRANSIENT, the retry is all duplicates, nothing doubled', async () => {
    // given
    const session = await newSession(direct, [user('q0')])
    const batch = [assistant('a1'), user('q2'), assistant('a3')]
    // when
    const run = await withFault('ack-lost', close, isAppend, () => viaProxy.append(session, batch))
    // then
    expect(run.outcome).toBe('committed')
    const raw = rawCause(run.first)
    if (close === 'fin') expect(raw.message).toBe('Connection terminated unexpectedly')
    else expect(raw.code).toBe('ECONNRESET')
    expect(run.result).toEqual({ version: 4, appended: [], duplicates: batch.map((m) => m.id) })
    const counts = await appendCounts(direct, session)
    expect([...counts.values()]).toEqual([1, 1, 1, 1])
    expect((await direct.load(session)).messages.map((m) => m.id)).toEqual([expect.any(String), ...batch.map((m) => m.id)])
  })

  it('commit did not happen: the statement ran but was rolled back; the retry writes the batch once', async () => {
    // given
    const session = await newSession(direct, [user('q0')])
    const batch = [assistant('a1'), user('q2')]
    // when
    const run = await withFault('commit-lost', close, isAppend, () => viaProxy.append(session, batch))
    // then
    expect(run.outcome).toBe('not-sent')
    expect(run.result).toEqual({ version: 3, appended: batch.map((m) => m.id), duplicates: [] })
    const counts = await appendCounts(direct, session)
    expect([...counts.values()]).toEqual([1, 1, 1])
  })

  it('flush: ack lost, then the whole live list is flushed again: nothing doubled', async () => {
    // given
    const live = [user('q0'), assistant('a1')]
    const session = await newSession(direct, live.slice(0, 1))
    // when
    const run = await withFault('ack-lost', close, isAppend, () => viaProxy.flush(session, live))
    // then
    expect(run.outcome).toBe('committed')
    expect(run.result?.appended).toEqual([])
    expect(run.result?.version).toBe(2)
    const again = await viaProxy.flush(session, [...live, user('q2')])
    expect(again.appended).toHaveLength(1)
    expect([...(await appendCounts(direct, session)).values()]).toEqual([1, 1, 1])
  })
})

describe('a prepared append whose acknowledgement is lost (directConnection)', () => {
  it('is seen by the proxy through its Bind alone, and its retry is all duplicates', async () => {
    // given a direct store whose one connection already prepared the append statement
    const direct1 = await openStore({
      connectionString: proxy.url(db.connectionString),
      migrate: false,
      directConnection: true,
      pool: { max: 1 },
    })
    try {
      const session = await newSession(direct, [user('q0')])
      await direct1.append(session, [assistant('prepares the statement')])
      const batch = [user('q2'), assistant('a3')]
      // when the next append (Bind and Execute of the named statement, no Parse) loses its ack
      const run = await withFault('ack-lost', 'rst', isAppend, () => direct1.append(session, batch))
      // then
      expect(run.outcome).toBe('committed')
      expect(run.result).toEqual({ version: 4, appended: [], duplicates: batch.map((m) => m.id) })
      expect([...(await appendCounts(direct, session)).values()]).toEqual([1, 1, 1, 1])
    } finally {
      await direct1.close()
    }
  })
})

describe('a group commit whose acknowledgement is lost', () => {
  it('reports DB_TRANSIENT to every batch of the group; each retry is all duplicates, nothing doubled', async () => {
    // given three sessions appended to in the same tick (one append_batches statement)
    const sessions = await Promise.all([0, 1, 2].map(() => newSession(direct, [user('q0')])))
    const batches = sessions.map((_, i) => [assistant(`a${i}`), user(`q${i}`)])
    const fired = proxy.arm({ kind: 'ack-lost', close: 'rst', match: (sql) => sql.includes('append_batches') })
    const seen: unknown[][] = sessions.map(() => [])
    // when each caller retries on its own
    const results = await Promise.all(
      sessions.map((s, i) =>
        withRetry(() => viaProxy.append(s, batches[i] ?? []), { attempts: 4, baseDelayMs: 5, onRetry: (e) => seen[i]?.push(e) }),
      ),
    )
    // then the group committed, every caller heard DB_TRANSIENT once, and the retries found their batches
    expect((await fired).serverOutcome).toBe('committed')
    for (const errors of seen) {
      expect(errors).toHaveLength(1)
      expectCode(errors[0], 'DB_TRANSIENT')
    }
    results.forEach((r, i) => expect(r).toEqual({ version: 3, appended: [], duplicates: batches[i]?.map((m) => m.id) }))
    for (const s of sessions) expect([...(await appendCounts(direct, s)).values()]).toEqual([1, 1, 1])
  })
})

/**
 * Every write of the retry-safety table in docs/guarantees.md, through an explicit transaction
 * (COMMIT as a simple query) or an implicit one.
 */
interface Case {
  readonly name: string
  /** Prepares a session; returns the call to make and what one successful call adds to the version. */
  setup(): Promise<{ session: SessionId; call: () => Promise<unknown>; events: number }>
}

const cases: Case[] = [
  {
    name: 'createSession({ id })',
    async setup() {
      const id = randomUUID()
      return { session: id as SessionId, call: () => viaProxy.createSession({ id, tenantId: 'acme' }), events: 0 }
    },
  },
  {
    name: 'compact',
    async setup() {
      const old = [user('q0'), assistant('a0'), user('q1')]
      const session = await newSession(direct, [...old, assistant('a1')])
      const summary = createMessage({ role: 'system', content: 'summary of q0..q1' })
      return { session, call: () => viaProxy.compact(session, { covered: old.map((m) => m.id), summary }), events: 2 }
    },
  },
  {
    name: 'revise',
    async setup() {
      const tool = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'ok' })
      const session = await newSession(direct, [user('q0'), tool])
      return {
        session,
        call: () => viaProxy.revise(session, tool.id, { role: 'tool', tool_call_id: 'call_1', content: 'ok (note)' }),
        events: 1,
      }
    },
  },
  {
    name: 'finalize',
    async setup() {
      const partial = createMessage({ role: 'assistant', content: 'streamed so f' }, { status: 'partial' })
      const session = await newSession(direct, [user('q0'), partial])
      return { session, call: () => viaProxy.finalize(session, partial.id, { role: 'assistant', content: 'streamed so far' }), events: 1 }
    },
  },
  {
    name: 'sync',
    async setup() {
      // the list drops q1/a1 (one retraction), revises a0 (a revision) and adds q2 (an append): three events
      const q0 = user('q0'),
        a0 = assistant('a0')
      const session = await newSession(direct, [q0, a0, user('q1'), assistant('a1')])
      const list = [q0, createMessage({ role: 'assistant', content: 'a0 (edited)' }, { id: a0.id }), user('q2')]
      return { session, call: () => viaProxy.sync(session, list), events: 3 }
    },
  },
  {
    name: 'sync with expectedVersion',
    async setup() {
      // as integrating.md advises: the replay meets a version its first attempt moved, and the list in effect
      const q0 = user('q0'),
        a0 = assistant('a0')
      const session = await newSession(direct, [q0, a0, user('q1'), assistant('a1')])
      const { version } = await direct.getSession(session)
      const list = [q0, createMessage({ role: 'assistant', content: 'a0 (edited)' }, { id: a0.id }), user('q2')]
      return { session, call: () => viaProxy.sync(session, list, { expectedVersion: version }), events: 3 }
    },
  },
  {
    name: 'fork(…, { id })',
    async setup() {
      const at = assistant('a0')
      const parent = await newSession(direct, [user('q0'), at, user('q1')])
      const child = randomUUID()
      return { session: child as SessionId, call: () => viaProxy.fork(parent, { at: at.id, id: child }), events: 3 }
    },
  },
]

describe.each<ProxyFaultKind>(['ack-lost', 'commit-lost'])('retry-safe writes under %s', (kind) => {
  it.each(cases)("$name: DB_TRANSIENT, then the retry leaves exactly one call's effect", async (c) => {
    // given
    const { session, call, events } = await c.setup()
    const before = c.name.startsWith('fork') || c.name.startsWith('createSession') ? 0 : (await direct.getSession(session)).version
    // when
    const run = await withFault(kind, 'fin', (sql) => /insert|update/i.test(sql), call)
    // then
    expect(run.retryError).toBeUndefined()
    expect(run.outcome).toBe(kind === 'ack-lost' ? 'committed' : 'not-sent')
    const info = await direct.getSession(session)
    expect(info.version).toBe(before + events)
    const seqs: number[] = []
    for await (const e of direct.events(session)) seqs.push(e.seq)
    expect(seqs).toEqual(Array.from({ length: before + events }, (_, i) => i + 1))
    expect((await direct.rebuild({ sessionId: session, verify: true })).drift).toEqual([])
  })
})

describe('rewind with expectedVersion (the one write that is not idempotent by itself)', () => {
  it('ack lost: the retry fails with VERSION_CONFLICT instead of retracting more', async () => {
    // given
    const keep = user('q0')
    const session = await newSession(direct, [keep, assistant('a0'), user('q1'), assistant('a1')])
    // when
    const run = await withFault(
      'ack-lost',
      'fin',
      (sql) => /update/i.test(sql),
      () => viaProxy.rewind(session, { after: keep.id }, { expectedVersion: 4 }),
    )
    // then
    expect(run.outcome).toBe('committed')
    expect(expectCode(run.retryError, 'VERSION_CONFLICT').details['actualVersion']).toBe(5)
    expect((await direct.load(session)).messages.map((m) => m.id)).toEqual([keep.id])
    expect((await direct.getSession(session)).version).toBe(5)
  })

  it('commit lost: the retry performs the rewind once', async () => {
    // given
    const keep = user('q0')
    const session = await newSession(direct, [keep, assistant('a0'), user('q1')])
    // when
    const run = await withFault(
      'commit-lost',
      'fin',
      (sql) => /update/i.test(sql),
      () => viaProxy.rewind(session, { after: keep.id }, { expectedVersion: 3 }),
    )
    // then
    expect(run.outcome).toBe('not-sent')
    expect(run.result).toEqual({ version: 4, retracted: [expect.any(String), expect.any(String)] })
    expect((await direct.load(session)).messages.map((m) => m.id)).toEqual([keep.id])
  })
})

describe('the raw errors behind DB_TRANSIENT', () => {
  it('an explicit transaction whose COMMIT loses its connection surfaces the failed rollback, mapped to DB_TRANSIENT', async () => {
    // given
    const a = user('q0')
    const session = await newSession(direct, [a, assistant('a0')])
    // when
    const run = await withFault(
      'commit-lost',
      'fin',
      (sql) => /update/i.test(sql),
      () => viaProxy.rewind(session, { after: a.id }),
    )
    // then: kysely rolls back after the failed COMMIT; the rollback on the dead client is what surfaces
    // (kysely rethrows the rollback's error, so "Connection terminated unexpectedly" of the COMMIT is lost)
    expect(rawCause(run.first).message).toBe('Client has encountered a connection error and is not queryable')
    expect(run.first.message).toMatch(/^connection failure: /)
  })
})
