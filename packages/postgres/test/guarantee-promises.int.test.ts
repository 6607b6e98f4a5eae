/**
 * docs/guarantees.md, the promises no other test pins down (an audit of the document, promise by
 * promise): each `describe` quotes the promise it holds the store to. What the database is sent is
 * watched with the statement-log driver hook; outcomes are checked on Postgres and, where the promise
 * covers it, on embedded PGlite.
 *
 * - Atomicity: invalid input (INVALID_MESSAGE, INVALID_INPUT, MESSAGE_TOO_LARGE, BATCH_TOO_LARGE) is
 *   refused before any statement is sent, and before the version is checked.
 * - Identical copies in one call: only the de-duplicated batch reaches the database (group commit
 *   included); one id with two contents is MESSAGE_CONFLICT with `inBatch: true` and `storedHash` the
 *   first copy's hash.
 * - Conflict evidence is best effort: when its statement fails, the caller still gets
 *   MESSAGE_CONFLICT with the same details; on PGlite, inside a caller's transaction, it is written
 *   once that transaction ends (rolled back or committed).
 * - A compaction whose summary id is already stored is MESSAGE_CONFLICT naming the id, writes nothing
 *   and records no evidence.
 * - Only a replay of what is already in effect succeeds whatever `expectedVersion` says; `sync` too
 *   checks the version before anything about the session's state.
 * - The owner (no tenant) still gets `foreign_session` for an id another tenant holds.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, toMessage, type AppendResult, type Message, type SessionId, type TurnlogError } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, nestedObject, openTestStore, turnlogRejection, type TestDatabase } from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'
import { logStatements, type LoggedStatement, type StatementLog } from './support/statement-log.js'

let db: TestDatabase
let log: StatementLog
const stores: { postgres?: PostgresStore; small?: PostgresStore; pglite?: PostgresStore } = {}
let closePglite: (() => Promise<void>) | undefined

/** Limits of the `small` store: 1 KiB per payload, 4 KiB per call. */
const MAX_MESSAGE_BYTES = 1024
const MAX_BATCH_BYTES = 4096

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  stores.postgres = await openStore({ connectionString: db.connectionString, migrate: false })
  stores.small = await openStore({
    connectionString: db.connectionString,
    migrate: false,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    maxBatchBytes: MAX_BATCH_BYTES,
  })
  ;({ store: stores.pglite, close: closePglite } = await openTestStore('pglite'))
  log = logStatements(db.name)
}, 60_000)

afterAll(async () => {
  log?.restore()
  await stores.postgres?.close()
  await stores.small?.close()
  await closePglite?.()
  await db?.drop()
})

const user = (content: string, id?: string): Message => createMessage({ role: 'user', content }, id === undefined ? {} : { id })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const scaffolding = (content: string): Message => createMessage({ role: 'user', content }, { ephemeral: true })

/** The statements sent while `fn` ran (its result or error is ignored). */
async function sentDuring(fn: () => Promise<unknown>): Promise<LoggedStatement[]> {
  const before = log.statements.length
  await fn().catch(() => undefined)
  return log.statements.slice(before)
}

/** The append statements sent while `fn` ran, with the ids each one carries (per session for a group). */
async function appendIdsDuring(fn: () => Promise<unknown>): Promise<{ group: boolean; ids: Map<string, string[]> }[]> {
  const sent = await sentDuring(fn)
  return sent
    .filter((s) => /turnlog\.append_(messages|batches)\(/.test(s.text))
    .map((s) => {
      if (/append_messages\(/.test(s.text)) {
        return { group: false, ids: new Map([[String(s.values[0]), JSON.parse(String(s.values[2])) as string[]]]) }
      }
      // append_batches: session ids, expected versions, batch lengths, the ids of all batches in a row
      const sessions = JSON.parse(String(s.values[0])) as string[]
      const lengths = JSON.parse(String(s.values[2])) as number[]
      const all = JSON.parse(String(s.values[3])) as string[]
      const ids = new Map<string, string[]>()
      let at = 0
      for (const [i, sid] of sessions.entries()) {
        ids.set(sid, all.slice(at, at + (lengths[i] ?? 0)))
        at += lengths[i] ?? 0
      }
      return { group: true, ids }
    })
}

/** Events, sessions, conflicts and the summed version: everything a write can change, as one string. */
async function everything(store: PostgresStore): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|',
      (select count(*) from turnlog.events),
      (select count(*) from turnlog.sessions),
      (select coalesce(sum(version), 0) from turnlog.sessions),
      (select count(*) from turnlog.conflicts)) as s`.execute(store.db)
  return rows[0]?.s ?? ''
}

describe('invalid input is refused before any statement is sent (Atomicity), and before the version (Ordering)', () => {
  /** A session with two messages, version 2; the calls below pass the stale version 1. */
  async function session(): Promise<{ sid: SessionId; stored: Message[] }> {
    const stored = [user('q'), assistant('a')]
    const sid = await stores.small!.createSession()
    await stores.small!.append(sid, stored)
    return { sid, stored }
  }

  const big = (n: number): string => 'x'.repeat(n)
  /** Four messages of about 1,000 code units each: each under maxMessageBytes, together over maxBatchBytes. */
  const overBatch = (): Message[] => [1, 2, 3, 4, 5].map((i) => user(`${i}${big(MAX_MESSAGE_BYTES - 100)}`))
  const tooDeep = { role: 'user', content: 'x', deep: nestedObject(200) }

  /** A call the test makes; the value it is given is built inside (a throw while building is the call's). */
  const cases: readonly [string, string, (sid: SessionId, stored: Message[]) => Promise<unknown>][] = [
    [
      'append with an ephemeral message',
      'INVALID_MESSAGE',
      (sid) => stores.small!.append(sid, [user('ok'), scaffolding('s')], { expectedVersion: 1 }),
    ],
    [
      'append with a message whose id is no UUID',
      'INVALID_INPUT',
      (sid) => stores.small!.append(sid, [user('ok'), { ...user('x'), id: 'nope' } as never], { expectedVersion: 1 }),
    ],
    [
      'append with a batch that is no array',
      'INVALID_INPUT',
      (sid) => stores.small!.append(sid, 'not a list' as never, { expectedVersion: 1 }),
    ],
    [
      'append with a payload over maxMessageBytes',
      'MESSAGE_TOO_LARGE',
      (sid) => stores.small!.append(sid, [user(big(MAX_MESSAGE_BYTES + 1))], { expectedVersion: 1 }),
    ],
    ['append with a batch over maxBatchBytes', 'BATCH_TOO_LARGE', (sid) => stores.small!.append(sid, overBatch(), { expectedVersion: 1 })],
    [
      'flush with new messages over maxBatchBytes',
      'BATCH_TOO_LARGE',
      (sid, stored) => stores.small!.flush(sid, [...stored, ...overBatch()], { expectedVersion: 1 }),
    ],
    [
      'append with a payload nested too deep',
      'INVALID_MESSAGE',
      (sid) => stores.small!.append(sid, [{ ...user('d'), payload: tooDeep } as never], { expectedVersion: 1 }),
    ],
    [
      'revise with a payload that is no object',
      'INVALID_MESSAGE',
      (sid, stored) => stores.small!.revise(sid, stored[0]!.id, 'text', { expectedVersion: 1 }),
    ],
    [
      'revise with a payload over maxMessageBytes',
      'MESSAGE_TOO_LARGE',
      (sid, stored) => stores.small!.revise(sid, stored[0]!.id, { role: 'user', content: big(MAX_MESSAGE_BYTES) }, { expectedVersion: 1 }),
    ],
    [
      'finalize with a payload nested too deep',
      'INVALID_MESSAGE',
      (sid, stored) => stores.small!.finalize(sid, stored[0]!.id, tooDeep, { expectedVersion: 1 }),
    ],
    [
      'compact with an ephemeral summary',
      'INVALID_MESSAGE',
      (sid, stored) => stores.small!.compact(sid, { covered: [stored[0]!.id], summary: scaffolding('sum'), expectedVersion: 1 }),
    ],
    [
      'compact with a summary over maxBatchBytes',
      'BATCH_TOO_LARGE',
      (sid, stored) => stores.small!.compact(sid, { covered: [stored[0]!.id], summary: overBatch(), expectedVersion: 1 }),
    ],
    [
      'rewind to a target that is no id',
      'INVALID_INPUT',
      (sid) => stores.small!.rewind(sid, { after: 'not an id' }, { expectedVersion: 1 }),
    ],
    [
      'createSession with metadata nested too deep',
      'INVALID_MESSAGE',
      () => stores.small!.createSession({ metadata: nestedObject(200) as never }),
    ],
    [
      'createSession with metadata over maxBatchBytes',
      'BATCH_TOO_LARGE',
      () => stores.small!.createSession({ metadata: { text: big(MAX_BATCH_BYTES) } }),
    ],
    [
      'append with a payload nested 100,000 levels',
      'INVALID_MESSAGE',
      (sid) => stores.small!.append(sid, [{ ...user('d'), payload: { role: 'user', content: 'x', deep: nestedObject(100_000) } } as never]),
    ],
    [
      'compact with metadata nested 100,000 levels',
      'INVALID_MESSAGE',
      (sid, stored) =>
        stores.small!.compact(sid, { covered: [stored[0]!.id], summary: user('s'), metadata: nestedObject(100_000) as never }),
    ],
    [
      'fork with metadata nested 100,000 levels',
      'INVALID_MESSAGE',
      (sid, stored) => stores.small!.fork(sid, { at: stored[0]!.id, metadata: nestedObject(100_000) as never }),
    ],
    [
      'fork with metadata over maxBatchBytes',
      'BATCH_TOO_LARGE',
      (sid, stored) => stores.small!.fork(sid, { at: stored[0]!.id, metadata: { text: big(MAX_BATCH_BYTES) } }),
    ],
    [
      'sync with a message whose id is no UUID',
      'INVALID_INPUT',
      (sid, stored) => stores.small!.sync(sid, [...stored, { ...user('x'), id: 'nope' } as never], { expectedVersion: 1 }),
    ],
  ]

  it.each(cases)('%s: %s, no statement sent, nothing written', async (_, code, call) => {
    // given: a session at version 2, and a caller that read version 1
    const { sid, stored } = await session()
    const before = await everything(stores.small!)

    // when
    let error: TurnlogError | undefined
    const sent = await sentDuring(async () => {
      error = await turnlogRejection(call(sid, stored))
    })

    // then: the input's own error (not VERSION_CONFLICT), without a statement
    expect(error?.code).toBe(code)
    expect(sent.map((s) => s.text)).toEqual([])
    expect(await everything(stores.small!)).toBe(before)
  })

  it('known exception: revise and finalize check an object payload against the message format, read first; refused with reads only, nothing written', async () => {
    // given: a chat message, and an object payload the chat format refuses (no role)
    const { sid, stored } = await session()
    const before = await everything(stores.small!)

    // when
    const errors: string[] = []
    const sent = await sentDuring(async () => {
      errors.push((await turnlogRejection(stores.small!.revise(sid, stored[0]!.id, { content: 'no role' }, { expectedVersion: 1 }))).code)
      errors.push((await turnlogRejection(stores.small!.finalize(sid, stored[1]!.id, { content: 'no role' }, { expectedVersion: 1 }))).code)
    })

    // then: the input's error, not VERSION_CONFLICT; statements were sent (the document says none:
    // reported), but only to read the message, in a transaction rolled back
    expect(errors).toEqual(['INVALID_MESSAGE', 'INVALID_MESSAGE'])
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.filter((s) => !/^\s*(begin|rollback|select)\b/i.test(s.text)).map((s) => s.text)).toEqual([])
    expect(await everything(stores.small!)).toBe(before)
  })

  it('property: one invalid message anywhere in a batch of valid ones, any write that takes messages: its error, no statement', async () => {
    // given
    const { sid, stored } = await session()
    const invalid = fc.constantFrom<[string, () => unknown]>(
      ['INVALID_MESSAGE', () => scaffolding('s')],
      ['INVALID_INPUT', () => ({ ...user('x'), id: 'not-a-uuid' })],
      ['INVALID_MESSAGE', () => ({ ...user('x'), payload: { content: 'no role' } })],
      ['INVALID_MESSAGE', () => null],
      ['MESSAGE_TOO_LARGE', () => user(big(MAX_MESSAGE_BYTES + 1))],
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a', 'b', 'nul \u0000', 'lone \ud800'), { maxLength: 5 }),
        invalid,
        fc.nat(),
        fc.constantFrom('append', 'flush'),
        fc.boolean(),
        async (texts, [code, make], at, call, stale) => {
          const batch: unknown[] = [...stored, ...texts.map((t) => user(t))]
          const bad = make()
          // flush skips scaffolding: there an ephemeral message is no error
          if (call === 'flush' && (bad as Message | null)?.ephemeral === true) return
          batch.splice(at % (batch.length + 1), 0, bad)
          const options = stale ? { expectedVersion: 1 } : {}

          // when
          let error: TurnlogError | undefined
          const sent = await sentDuring(async () => {
            error = await turnlogRejection(stores.small![call](sid, batch as Message[], options))
          })

          // then
          expect({ code: error?.code, sent: sent.length }).toEqual({ code, sent: 0 })
        },
      ),
      { numRuns: 60 },
    )
    expect((await stores.small!.getSession(sid)).version).toBe(2)
  })
})

describe('identical copies in one call: only the de-duplicated batch reaches the database (Idempotency)', () => {
  it('append and flush send each id once, at its first occurrence, whatever the copies', async () => {
    const store = stores.postgres!
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a', 'b', 'ok'), { minLength: 1, maxLength: 5 }),
        fc.array(fc.record({ pick: fc.nat(), at: fc.nat(), how: fc.constantFrom('same', 'spread', 'json') }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.constantFrom('append', 'flush'),
        async (texts, copies, call) => {
          // given: a list and copies of its messages inserted anywhere
          const base = texts.map((t, i) => (i % 2 === 0 ? user(t) : assistant(t)))
          const list = [...base]
          for (const c of copies) {
            const m = base[c.pick % base.length]!
            const copy =
              c.how === 'same' ? m : c.how === 'spread' ? toMessage({ ...m }) : toMessage(JSON.parse(JSON.stringify(m)) as unknown)
            list.splice(c.at % (list.length + 1), 0, copy)
          }
          const firstOccurrence = [...new Set(list.map((m) => m.id))]
          const sid = await store.createSession()

          // when
          let result: AppendResult | undefined
          const sent = await appendIdsDuring(async () => (result = await store[call](sid, list)))
          const replay = await store[call](sid, list)

          // then: one statement, carrying every id once, in first-occurrence order; the result lists each
          // id once: all in appended, the copied ones in duplicates; a replay lists every id once as a duplicate
          const copied = firstOccurrence.filter((id) => list.filter((m) => m.id === id).length > 1)
          expect(sent.map((s) => s.ids.get(sid))).toEqual([firstOccurrence])
          expect(result).toEqual({ version: firstOccurrence.length, appended: firstOccurrence, duplicates: copied })
          expect(replay).toEqual({ version: firstOccurrence.length, appended: [], duplicates: firstOccurrence })
          expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(firstOccurrence)
        },
      ),
      { numRuns: 25 },
    )
  })

  it('a group commit of appends with copies sends each session its ids once', async () => {
    // given: twelve sessions, each appended a list with copies, all at once (one store: a group commit)
    const store = stores.postgres!
    const sessions = await Promise.all(Array.from({ length: 12 }, () => store.createSession()))
    const lists = sessions.map((_, i) => {
      const [q, a] = [user(`q${i}`), assistant(`a${i}`)]
      return { unique: [q.id, a.id], list: [q, toMessage({ ...q }), a, q, toMessage(JSON.parse(JSON.stringify(a)) as unknown)] }
    })

    // when
    let results: AppendResult[] = []
    const sent = await appendIdsDuring(
      async () => (results = await Promise.all(sessions.map((sid, i) => store.append(sid, lists[i]!.list)))),
    )

    // then: at least one group statement, and every statement carried each session's ids once
    expect(sent.some((s) => s.group && s.ids.size > 1)).toBe(true)
    const perSession = new Map<string, string[][]>()
    for (const s of sent) for (const [sid, ids] of s.ids) perSession.set(sid, [...(perSession.get(sid) ?? []), ids])
    for (const [i, sid] of sessions.entries()) {
      expect({ sid, sent: perSession.get(sid) }).toEqual({ sid, sent: [lists[i]!.unique] })
      expect(results[i]).toEqual({ version: 2, appended: lists[i]!.unique, duplicates: lists[i]!.unique })
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(lists[i]!.unique)
    }
  })
})

describe.each(['postgres', 'pglite'] as const)('one id with two contents in one call (Idempotency, %s)', (flavor) => {
  it.each(['append', 'flush'] as const)(
    '%s: MESSAGE_CONFLICT, inBatch, storedHash the first copy, evidence recorded, nothing written',
    async (call) => {
      // given
      const store = stores[flavor]!
      const sid = await store.createSession()
      const first = user('first content')
      const other = toMessage({ ...first, payload: { role: 'user', content: 'other content' } })
      const third = toMessage({ ...first, payload: { role: 'user', content: 'third content' } })

      // when: the first copy, a new message, the other content, then a third content
      const error = await turnlogRejection(store[call](sid, [first, assistant('new'), other, first, third]))

      // then
      expect(error.code).toBe('MESSAGE_CONFLICT')
      expect(error.details).toMatchObject({
        messageId: first.id,
        reason: 'content_mismatch',
        inBatch: true,
        storedHash: contentHash(first),
        incomingHash: contentHash(other),
      })
      expect((await store.getSession(sid)).version).toBe(0)
      // PGlite records the evidence without awaiting it: give it its turn on the one connection
      await store.getSession(sid)
      expect((await store.conflicts(sid)).map((c) => [c.messageId, c.reason, c.storedHash, c.incomingHash, c.incomingPayload])).toEqual([
        [first.id, 'content_mismatch', contentHash(first), contentHash(other), other.payload],
      ])
    },
  )
})

describe('conflict evidence is best effort (Idempotency)', () => {
  it.each(['append', 'flush', 'in-batch append'] as const)(
    '%s: when recording fails the caller still gets MESSAGE_CONFLICT with the same details',
    async (call) => {
      // given: a stored message, and the same refused batch twice, once recorded, once with recording failing
      const store = stores.postgres!
      const sid = await store.createSession()
      const stored = user('stored')
      await store.append(sid, [stored])
      const changed = toMessage({ ...stored, payload: { role: 'user', content: 'changed' } })
      const batch = call === 'in-batch append' ? [user('new'), assistant('x'), stored] : [user('new'), changed]
      const inBatch =
        call === 'in-batch append' ? [batch[1]!, toMessage({ ...batch[1]!, payload: { role: 'assistant', content: 'y' } })] : []
      const attempt = (): Promise<unknown> =>
        call === 'flush' ? store.flush(sid, batch) : store.append(sid, call === 'append' ? batch : [...batch, ...inBatch])
      const recorded = await turnlogRejection(attempt())
      const rowsBefore = (await store.conflicts(sid)).length

      // when: the evidence statement fails (a lost connection)
      log.fail = (s) => (/insert into turnlog\.conflicts/.test(s.text) ? new Error('Connection terminated unexpectedly') : undefined)
      let failed: TurnlogError | undefined
      let sent: LoggedStatement[]
      try {
        sent = await sentDuring(async () => {
          failed = await turnlogRejection(attempt())
        })
      } finally {
        log.fail = () => undefined
      }

      // then: the recording was attempted and failed, the error is the same, no row was added, nothing written
      expect(sent.some((s) => /insert into turnlog\.conflicts/.test(s.text))).toBe(true)
      expect(failed?.code).toBe('MESSAGE_CONFLICT')
      expect(failed?.details).toEqual({ ...recorded.details })
      expect(rowsBefore).toBeGreaterThan(0)
      expect((await store.conflicts(sid)).length).toBe(rowsBefore)
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([stored.id])
    },
  )
})

describe.each(['postgres', 'pglite'] as const)('a compaction whose summary id is already stored (Idempotency, %s)', (flavor) => {
  it.each(['in this session', 'in another session'] as const)(
    'stored %s: MESSAGE_CONFLICT naming the id, nothing written, no evidence',
    async (where) => {
      // given: a summary whose id is held by a message of this session or of another one
      const store = stores[flavor]!
      const [sid, owner] = [await store.createSession(), await store.createSession()]
      const [q, a] = [user('q'), assistant('a')]
      await store.append(sid, [q, a])
      const taken = user('holder')
      await store.append(where === 'in this session' ? sid : owner, [taken])
      const summary = createMessage({ role: 'system', content: 'summary' }, { id: taken.id })
      const before = await everything(store)

      // when
      const error = await turnlogRejection(store.compact(sid, { covered: [q.id], summary: [assistant('s0'), summary] }))

      // then
      expect(error.code).toBe('MESSAGE_CONFLICT')
      expect(error.details).toMatchObject({ messageId: taken.id })
      expect(error.message).toContain(taken.id)
      // held in this session: a content_mismatch with both hashes, as for any other
      if (where === 'in this session')
        expect(error.details).toMatchObject({
          reason: 'content_mismatch',
          storedHash: contentHash(taken),
          incomingHash: contentHash(summary),
        })
      else expect(error.details).toMatchObject({ reason: 'foreign_session', otherSessionId: owner })
      await store.getSession(sid)
      expect(await everything(store)).toBe(before)
      expect(await store.conflicts(sid)).toEqual([])
    },
  )
})

describe.each(['postgres', 'pglite'] as const)('a compaction whose summary is stored as a message of this session (%s)', (flavor) => {
  it('is MESSAGE_CONFLICT with equal hashes and says the message is stored, but not as the summary', async () => {
    // given a message appended to the session, then named as a compaction's summary with that content
    const store = stores[flavor]!
    const sid = await store.createSession()
    const [q, note] = [user('q'), createMessage({ role: 'system', content: 'a note' })]
    await store.append(sid, [q, note])
    // when
    const error = await turnlogRejection(store.compact(sid, { covered: [q.id], summary: note }))
    // then the label says what happened: the same content, stored as a message (not a changed content)
    expect(error.details).toMatchObject({ reason: 'content_mismatch', storedHash: contentHash(note), incomingHash: contentHash(note) })
    expect(error.message).toContain('not as this compaction')
  })
})

describe.each(['postgres', 'pglite'] as const)('a replay of what is in effect succeeds whatever the version (Ordering, %s)', (flavor) => {
  it('append of duplicates, revise to the current content, finalize of a final message, a placed compaction: no-ops under a stale version', async () => {
    // given: a session with a revised message, a finalized stream and a compaction, then another write
    const store = stores[flavor]!
    const sid = await store.createSession()
    const [q, a, streamed, old] = [
      user('q'),
      assistant('a'),
      createMessage({ role: 'assistant', content: 'st' }, { status: 'partial' }),
      user('old'),
    ]
    await store.append(sid, [old, q, a, streamed])
    await store.revise(sid, a.id, { role: 'assistant', content: 'a, revised' })
    await store.finalize(sid, streamed.id)
    const summary = createMessage({ role: 'system', content: 'summary of old' })
    await store.compact(sid, { covered: [old.id], summary })
    const stale = (await store.getSession(sid)).version
    await store.append(sid, [user('moved on')])
    const current = (await store.getSession(sid)).version
    const before = await everything(store)

    // when: every replay, with the stale version
    const appendReplay = await store.append(sid, [q, a], { expectedVersion: stale })
    const flushReplay = await store.flush(sid, [q], { expectedVersion: stale })
    const reviseReplay = await store.revise(sid, a.id, { role: 'assistant', content: 'a, revised' }, { expectedVersion: stale })
    const finalizeReplay = await store.finalize(sid, streamed.id, undefined, { expectedVersion: stale })
    const compactReplay = await store.compact(sid, { covered: [old.id], summary, expectedVersion: stale })
    // and the same calls that are not replays
    const notReplays = await Promise.all(
      [
        () => store.append(sid, [q, user('new')], { expectedVersion: stale }),
        () => store.revise(sid, a.id, { role: 'assistant', content: 'a, again' }, { expectedVersion: stale }),
        () => store.finalize(sid, streamed.id, { role: 'assistant', content: 'other' }, { expectedVersion: stale }),
        () => store.compact(sid, { covered: [q.id], summary: user('new summary'), expectedVersion: stale }),
      ].map(async (f) => (await turnlogRejection(f())).code),
    )

    // then: the replays report no change and write nothing; the others are VERSION_CONFLICT
    expect(appendReplay).toEqual({ version: current, appended: [], duplicates: [q.id, a.id] })
    expect(flushReplay).toEqual({ version: current, appended: [], duplicates: [q.id] })
    expect([reviseReplay.unchanged, finalizeReplay.unchanged]).toEqual([true, true])
    expect(compactReplay.summary).toEqual([summary.id])
    expect(notReplays).toEqual(['VERSION_CONFLICT', 'VERSION_CONFLICT', 'VERSION_CONFLICT', 'VERSION_CONFLICT'])
    expect(await everything(store)).toBe(before)
  })
})

describe.each(['postgres', 'pglite'] as const)(
  'the owner, which sees every tenant, still meets foreign_session (Idempotency, %s)',
  (flavor) => {
    it("an id tenant A holds, appended by the owner to tenant B's session: MESSAGE_CONFLICT foreign_session, nothing written", async () => {
      // given: the owner (no tenant) stored a message in tenant A's session
      const store = stores[flavor]!
      const [a, b] = [await store.createSession({ tenantId: 'tenant-a' }), await store.createSession({ tenantId: 'tenant-b' })]
      const m = user('held by tenant a')
      await store.append(a, [m])

      // when: the same message, then another content under its id, into tenant B's session
      const same = await turnlogRejection(store.append(b, [m]))
      const other = await turnlogRejection(store.append(b, [user('b text', m.id)]))

      // then
      for (const error of [same, other]) {
        expect(error.code).toBe('MESSAGE_CONFLICT')
        expect(error.details).toMatchObject({ messageId: m.id, reason: 'foreign_session', otherSessionId: a })
      }
      expect((await store.getSession(b)).version).toBe(0)
    })
  },
)

describe.each(['postgres', 'pglite'] as const)('sync checks the version before the session state (Ordering, %s)', (flavor) => {
  it('a stale sync that would meet a foreign id, a reorder or a retracted message back gets VERSION_CONFLICT, nothing written', async () => {
    // given: the caller read version 2; another writer appended and rewound since
    const store = stores[flavor]!
    const [sid, owner] = [await store.createSession(), await store.createSession()]
    const [a, b, c, foreign] = [user('a'), assistant('b'), user('c'), user('foreign')]
    await store.append(owner, [foreign])
    await store.append(sid, [a, b])
    await store.append(sid, [c])
    await store.rewind(sid, { from: c.id })
    const before = await everything(store)

    // when: lists sync would refuse, or would refuse at the current version
    const codes = await Promise.all(
      [
        [a, b, foreign],
        [b, a],
        [a, b, c],
        [a, b, user('new')],
      ].map(async (list) => {
        const error = await turnlogRejection(store.sync(sid, list, { expectedVersion: 2 }))
        return [error.code, error.details['actualVersion']]
      }),
    )

    // then
    expect(codes).toEqual(Array.from({ length: 4 }, () => ['VERSION_CONFLICT', 4]))
    expect(await everything(store)).toBe(before)
  })
})

describe("conflict evidence inside a caller's transaction on PGlite (Idempotency)", () => {
  it.each(['rolls back', 'commits'] as const)('the transaction %s: the evidence is written once it ends', async (end) => {
    // given: a stored message, and a caller transaction that appends a changed copy of it
    const store = stores.pglite!
    const sid = await store.createSession()
    const stored = user('stored')
    await store.append(sid, [stored])
    const changed = toMessage({ ...stored, payload: { role: 'user', content: 'changed' } })

    // when
    let code: string | undefined
    await store.db
      .transaction()
      .execute(async (trx) => {
        code = (await turnlogRejection(store.withTransaction(trx).append(sid, [user('new'), changed]))).code
        if (end === 'rolls back') throw new Error('the caller gives up')
      })
      .catch(() => undefined)
    // the recording waits for the one connection: a later call runs after it
    await store.getSession(sid)

    // then
    expect(code).toBe('MESSAGE_CONFLICT')
    expect((await store.conflicts(sid)).map((c) => [c.messageId, c.reason, c.incomingHash])).toEqual([
      [stored.id, 'content_mismatch', contentHash(changed)],
    ])
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([stored.id])
  })
})
