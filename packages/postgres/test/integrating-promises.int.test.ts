/**
 * docs/integrating.md, docs/getting-started.md, docs/architecture.md and the READMEs of turnlog,
 * @turnlog/core and @turnlog/postgres: the promises no other test pinned down (an audit of the
 * documents, promise by promise). Each `describe` quotes the promise it holds the store to; outcomes
 * are checked on Postgres and, where the document covers it, on embedded PGlite.
 *
 * - `sync`'s limits: a final message listed as partial stays final (also when its content changed); a
 *   redacted message is kept as stored whatever the list holds for it (never un-redacted); a partial
 *   message listed final with the same content is finalized; ephemeral messages are never stored and
 *   identical copies are one message; one id with two contents is `MESSAGE_CONFLICT`, nothing written;
 *   a summary id already live is kept (a replay writes nothing).
 * - The message keeps `externalId` and `externalScope`, "and so does the store": `load`, a fork's copy,
 *   `revise`'s `message`.
 * - `append` never persists scaffolding; `flush` never removes a message the list dropped; a JSON round
 *   trip of a message is the same message.
 * - `openStore`'s options are checked before anything connects (`maxBatchBytes` too), with
 *   `details.field`; `migrate: false` creates nothing; `{ pool }`: `close()` leaves the caller's pool open.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { INTERRUPTED_TOOL_RESULT, createMessage, isMessage, parseMessage, serializeMessage, toWire, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import {
  createTestDatabase,
  rollBackSession,
  STORE_KINDS,
  turnlogRejection,
  useTestStore,
  useTestStoreOfKind,
  type TestDatabase,
} from '@turnlog/testing'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string, options: { status?: 'partial' } = {}): Message => createMessage({ role: 'assistant', content }, options)
/** The message `m` with other content under the same id (what a runtime's edited list holds). */
const edited = (m: Message, content: string, options: { status?: 'partial' } = {}): Message =>
  createMessage({ ...(m.payload as object), content } as never, { id: m.id, ...options })

/**
 * A session whose question (a card number) and tool result (the card again) were redacted after the
 * call between them was appended, and what `load` returns of it.
 */
async function redactedSession(store: PostgresStore): Promise<{ sid: string; secret: Message; messages: Message[]; version: number }> {
  const sid = await store.createSession()
  const secret = user('my card is 4111 1111 1111 1111')
  const call = createMessage({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }],
  })
  const result = createMessage({ role: 'tool', tool_call_id: 'call_9', content: 'the card again: 4111' })
  await store.append(sid, [secret, call, result])
  await store.redact(sid, secret.id)
  await store.redact(sid, result.id)
  const { messages, version } = await store.load(sid)
  return { sid, secret, messages, version }
}

/** What `load` shows of a session: content and status of each live message, in order. */
async function shown(store: PostgresStore, sid: string): Promise<{ id: string; content: unknown; status: string }[]> {
  return (await store.load(sid)).messages.map((m) => ({ id: m.id, content: m.payload.content, status: m.status ?? 'final' }))
}

describe.each(STORE_KINDS)('docs/integrating.md, "flush or sync": the limits of sync (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('"a final message listed as partial stays final": with the same content, nothing is written', async () => {
    const sid = await store.createSession()
    const a = assistant('done')
    await store.append(sid, [a])

    const result = await store.sync(sid, [edited(a, 'done', { status: 'partial' })])

    expect(result).toMatchObject({ version: 1, appended: [], revised: [], finalized: [] })
    expect(await shown(store, sid)).toEqual([{ id: a.id, content: 'done', status: 'final' }])
  })

  it('"a final message listed as partial stays final": with changed content, the revision is final too', async () => {
    const sid = await store.createSession()
    const a = assistant('done')
    await store.append(sid, [a])

    const result = await store.sync(sid, [edited(a, 'done, edited', { status: 'partial' })])

    expect(result).toMatchObject({ version: 2, revised: [a.id] })
    expect(await shown(store, sid)).toEqual([{ id: a.id, content: 'done, edited', status: 'final' }])
  })

  it('"a partial message listed final with the same content is finalized"; listed partial with new content it stays partial', async () => {
    const sid = await store.createSession()
    const streaming = assistant('Hel', { status: 'partial' })
    const other = assistant('wor', { status: 'partial' })
    await store.append(sid, [streaming, other])

    const first = await store.sync(sid, [edited(streaming, 'Hel'), edited(other, 'world', { status: 'partial' })])

    expect(first).toMatchObject({ version: 4, revised: [other.id], finalized: [streaming.id] })
    expect(await shown(store, sid)).toEqual([
      { id: streaming.id, content: 'Hel', status: 'final' },
      { id: other.id, content: 'world', status: 'partial' },
    ])
  })

  it('"a redacted message is kept as stored whatever the list holds for it": its original or other content never comes back', async () => {
    const sid = await store.createSession()
    const secret = user('my card is 4111 1111 1111 1111')
    const reply = assistant('noted')
    await store.append(sid, [secret, reply])
    await store.redact(sid, secret.id)
    const version = (await store.getSession(sid)).version

    const withOriginal = await store.sync(sid, [secret, reply])
    const withOther = await store.sync(sid, [edited(secret, 'something else'), reply])

    expect(withOriginal).toEqual({ version, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
    expect(withOther).toEqual({ version, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
    const loaded = await store.load(sid)
    expect(JSON.stringify(loaded.messages)).not.toContain('4111')
    expect(JSON.stringify(loaded.messages)).not.toContain('something else')
    expect(loaded.messages.map((m) => m.id)).toEqual([secret.id, reply.id])
  })

  it('"Afterwards load(session).messages equals the list (its non-ephemeral messages; identical copies are one)"', async () => {
    const sid = await store.createSession()
    const a = user('a')
    const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })
    const b = assistant('b')

    const result = await store.sync(sid, [a, nudge, { ...a } as Message, b, JSON.parse(JSON.stringify(b)) as Message])

    expect(result).toMatchObject({ version: 2, appended: [a.id, b.id] })
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([a.id, b.id])
    expect(await store.sync(sid, [a, nudge, b])).toMatchObject({ version: 2, appended: [], retracted: [] })
  })

  it('"Copies with different content under one id are MESSAGE_CONFLICT and nothing of that call is written" (sync)', async () => {
    const sid = await store.createSession()
    const kept = user('kept')
    await store.append(sid, [kept])
    const a = user('a')

    const error = await turnlogRejection(store.sync(sid, [user('new'), a, edited(a, 'a, changed')]))

    expect(error.code).toBe('MESSAGE_CONFLICT')
    expect((await store.getSession(sid)).version).toBe(1)
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([kept.id])
  })

  it('"In one transaction it appends …, retracts …": a refused append leaves the retraction and the revision unwritten', async () => {
    const sid = await store.createSession()
    const other = await store.createSession()
    const [a, b, c] = [user('a'), assistant('b'), user('c')]
    await store.append(sid, [a, b, c])
    const elsewhere = user('stored in another session')
    await store.append(other, [elsewhere])

    // b dropped (a retraction), c edited (a revision), then a new message whose id another session holds
    const error = await turnlogRejection(store.sync(sid, [a, edited(c, 'c, edited'), elsewhere]))

    expect([error.code, error.details['reason']]).toEqual(['MESSAGE_CONFLICT', 'foreign_session'])
    expect((await store.getSession(sid)).version).toBe(3)
    expect(await shown(store, sid)).toEqual([
      { id: a.id, content: 'a', status: 'final' },
      { id: b.id, content: 'b', status: 'final' },
      { id: c.id, content: 'c', status: 'final' },
    ])
  })

  it('"A summary id that is already live is kept (a replay after an ambiguous commit writes nothing)"', async () => {
    const sid = await store.createSession()
    const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
    await store.append(sid, [a, b, c, d])
    const summary = createMessage({ role: 'system', content: 'a and b, summarised' })
    const list = [summary, c, d]

    const first = await store.sync(sid, list, { compaction: { summaryIds: [summary.id] } })
    const replay = await store.sync(sid, list, { compaction: { summaryIds: [summary.id] } })

    expect(first.compacted).toEqual([{ summary: [summary.id], covered: [a.id, b.id] }])
    expect(replay).toEqual({ version: first.version, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([summary.id, c.id, d.id])
  })
})

describe.each(STORE_KINDS)('docs/integrating.md, the loop and its live list (%s)', (kind) => {
  let store: PostgresStore
  let db: TestDatabase | undefined
  useTestStoreOfKind(kind, (t) => ({ store, db } = t))

  it('"The message keeps both (message.externalId, message.externalScope), and so does the store": load, a fork, revise', async () => {
    const sid = await store.createSession()
    const inbound = createMessage({ role: 'user', content: 'hi' }, { externalId: '9001', scope: 'telegram:42' })
    const global = createMessage({ role: 'user', content: 'hi again' }, { externalId: 'msg-1', scope: null })
    await store.append(sid, [inbound, global])

    const loaded = (await store.load(sid)).messages
    const child = await store.fork(sid, { at: global.id })
    const forked = (await store.load(child)).messages
    const revised = await store.revise(sid, inbound.id, { role: 'user', content: 'hi (edited)' })

    const keys = (m: Message): unknown => ({ id: m.id, externalId: m.externalId, externalScope: m.externalScope })
    const expected = [
      { id: inbound.id, externalId: '9001', externalScope: 'telegram:42' },
      { id: global.id, externalId: 'msg-1', externalScope: undefined },
    ]
    expect(loaded.map(keys)).toEqual(expected)
    expect(forked.map(keys)).toEqual(expected)
    expect(keys(revised.message)).toEqual(expected[0])
    expect((await store.load(sid)).messages.map(keys)).toEqual(expected)
  })

  it('"applyTo is a non-enumerable property (results stay plain data …)"; it is pure: a new array, live itself unchanged', async () => {
    const sid = await store.createSession()
    const [a, b, c] = [user('a'), assistant('b', { status: 'partial' }), user('c')]
    let live: Message[] = [a, b, c]
    await store.flush(sid, live)

    const results = [
      await store.revise(sid, b.id, { role: 'assistant', content: 'b, more' }, { status: 'partial' }),
      await store.finalize(sid, b.id),
      await store.rewind(sid, { from: c.id }),
      await store.compact(sid, { covered: [a.id], summary: createMessage({ role: 'system', content: 'summary of a' }) }),
    ]

    for (const result of results) {
      expect(Object.keys(result)).not.toContain('applyTo')
      expect(JSON.parse(JSON.stringify(result))).not.toHaveProperty('applyTo')
      const before = [...live]
      const next = result.applyTo(live)
      expect(next).not.toBe(live)
      expect(live).toEqual(before)
      live = next
    }
    expect(live.map((m) => m.id)).toEqual((await store.load(sid)).messages.map((m) => m.id))
  })

  it('"revise … message: the message as it now stands (same id, createdAt, externalId, format and meta; new content …)"', async () => {
    const sid = await store.createSession()
    const note = createMessage({ kind: 'note', text: 'v1' }, { format: 'json', meta: { model: 'm-1', usage: { tokens: 3 } } })
    await store.append(sid, [note])

    const { message } = await store.revise(sid, note.id, { kind: 'note', text: 'v2' })

    const [loaded] = (await store.load(sid)).messages
    for (const m of [message, loaded]) {
      expect(m).toMatchObject({
        id: note.id,
        createdAt: note.createdAt,
        format: 'json',
        meta: note.meta,
        payload: { kind: 'note', text: 'v2' },
      })
    }
    expect(isMessage(message) && Object.isFrozen(message.payload)).toBe(true)
  })

  it('"Scaffolding … is sent to the model by toWire but never stored": append refuses it, nothing of the call written', async () => {
    const sid = await store.createSession()
    const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })

    const error = await turnlogRejection(store.append(sid, [user('a'), nudge]))

    expect([error.code, error.details['messageId']]).toEqual(['INVALID_MESSAGE', nudge.id])
    expect((await store.getSession(sid)).version).toBe(0)
    expect(await store.flush(sid, [nudge])).toMatchObject({ version: 0, appended: [] })
  })

  it('"flush … never removes anything: a message the loop dropped … stays in the log and in load"', async () => {
    const sid = await store.createSession()
    const [a, b, c] = [user('a'), assistant('b'), user('c')]
    await store.flush(sid, [a, b, c])

    const result = await store.flush(sid, [a, c, user('d')])

    expect(result.appended).toHaveLength(1)
    expect((await store.load(sid)).messages.map((m) => m.payload.content)).toEqual(['a', 'b', 'c', 'd'])
  })

  it('"Copy messages ({ ...m }, … JSON round trip): same id, same content → a duplicate", NUL and lone surrogates included', async () => {
    const sid = await store.createSession()
    const tool = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'bytes \u0000 and \ud83d cut' }, { meta: { ms: 12 } })
    await store.flush(sid, [tool])

    // (structuredClone is left out: under Jest its objects come from the host's realm, not plain here)
    const again = await store.flush(sid, [JSON.parse(JSON.stringify(tool)) as Message])
    const appended = await store.append(sid, [{ ...tool }])

    expect(again).toMatchObject({ version: 1, appended: [], duplicates: [tool.id] })
    expect(appended).toMatchObject({ version: 1, appended: [], duplicates: [tool.id] })
    const [loaded] = (await store.load(sid)).messages
    expect(loaded?.payload).toEqual(tool.payload)
  })

  it('"Copy messages (… JSON round trip): same id, same content → a duplicate": also a redacted message as load returns it', async () => {
    const { sid, secret, messages, version } = await redactedSession(store)
    // a loop that keeps its list as JSON (between requests, in another process) and flushes it grown by a turn
    const kept = JSON.parse(JSON.stringify(messages)) as Message[]
    const parsed = messages.map((m) => parseMessage(serializeMessage(m)))
    // on Postgres, also from a store that never saw the session (another process: no flush cache)
    const others = kind === 'pglite' ? [] : [await openStore({ connectionString: (db as TestDatabase).connectionString, migrate: false })]

    try {
      for (const s of [store, ...others]) {
        expect(await s.flush(sid, kept)).toMatchObject({ version, appended: [] })
        expect(await s.append(sid, parsed)).toMatchObject({ version, appended: [] })
      }
      // "a list built from several sources": the loaded messages and their JSON copies are identical copies
      expect(await store.flush(sid, [...messages, ...kept])).toMatchObject({ version, appended: [] })
      expect(toWire([...messages, ...kept])).toHaveLength(messages.length)
      const next = user('a new turn')
      expect(await (others[0] ?? store).flush(sid, [...kept, next])).toMatchObject({ version: version + 1, appended: [next.id] })
      expect(JSON.stringify((await store.load(sid)).messages)).not.toContain('4111')
      expect(await store.conflicts(sid)).toEqual([])
      // other content under a redacted id, and a placeholder under an id that was never redacted, still conflict
      const plain = user('plain')
      await store.append(sid, [plain])
      for (const clash of [edited(secret, 'something else'), edited(plain, '[redacted]')]) {
        expect((await turnlogRejection((others[0] ?? store).flush(sid, [clash]))).code).toBe('MESSAGE_CONFLICT')
      }
    } finally {
      for (const s of others) await s.close()
    }
  })

  it("the same inside a caller's transaction (withTransaction): a JSON copy of a redacted message is a duplicate, other content still conflicts", async () => {
    // given: a redacted question and tool result, loaded and kept as JSON
    const { sid, secret, messages, version } = await redactedSession(store)
    const kept = JSON.parse(JSON.stringify(messages)) as Message[]
    const next = user('a new turn')
    // on Postgres, also from a store that never saw the session (no flush cache)
    const others = kind === 'pglite' ? [] : [await openStore({ connectionString: (db as TestDatabase).connectionString, migrate: false })]

    try {
      for (const s of [store, ...others]) {
        // when: flushed (and appended) in the caller's transaction, the copies grown by nothing
        const flushed = await s.db.transaction().execute(async (trx) => {
          const inTx = s.withTransaction(trx)
          return [
            await inTx.flush(sid, kept),
            await inTx.append(
              sid,
              kept.map((m) => parseMessage(serializeMessage(m))),
            ),
          ]
        })
        // then: duplicates, nothing written (before the fix: MESSAGE_CONFLICT, the transaction aborted)
        expect(flushed).toMatchObject([
          { version, appended: [] },
          { version, appended: [] },
        ])
      }
      // when: grown by a turn in a transaction that writes something else too
      const committed = await (others[0] ?? store).db.transaction().execute(async (trx) => {
        const inTx = (others[0] ?? store).withTransaction(trx)
        return inTx.flush(sid, [...kept, next])
      })
      // then: only the new turn is written; nothing of the secret comes back; no conflict recorded
      expect(committed).toMatchObject({ version: version + 1, appended: [next.id] })
      expect(JSON.stringify((await store.load(sid)).messages)).not.toContain('4111')
      expect(await store.conflicts(sid)).toEqual([])
      // then: a placeholder under an id that was never redacted, and other content under a redacted id, still conflict
      const plain = user('plain')
      await store.append(sid, [plain])
      for (const clash of [edited(secret, 'something else'), edited(plain, '[redacted]')]) {
        const refused = await turnlogRejection(
          store.db.transaction().execute(async (trx) => store.withTransaction(trx).flush(sid, [clash])),
        )
        expect(refused.code).toBe('MESSAGE_CONFLICT')
      }
      expect((await store.load(sid)).version).toBe(version + 2)
    } finally {
      for (const s of others) await s.close()
    }
  })

  it('"A loaded list … is a fresh Message[] the loop may push to": trusted, frozen messages in an array of its own', async () => {
    const sid = await store.createSession()
    await store.append(sid, [user('a')])

    const first = (await store.load(sid)).messages
    const second = (await store.load(sid)).messages
    first.push(user('b'))

    expect(second).toHaveLength(1)
    expect(first[0] !== undefined && isMessage(first[0]) && Object.isFrozen(first[0].payload)).toBe(true)
    expect(await store.flush(sid, first)).toMatchObject({ version: 2 })
  })
})

describe('packages/core/README.md, toWire', () => {
  it('"deep, mutable copies of the payloads only"; repairPairing answers an unanswered call after its block, drops orphans, and leaves a result outside its block where it is', () => {
    const call = createMessage(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { meta: { model: 'm' } },
    )
    const orphan = createMessage({ role: 'tool', tool_call_id: 'zz', content: 'orphan' })
    const late = createMessage({ role: 'tool', tool_call_id: 'c1', content: 'late' })
    const next = user('next')

    const wire = toWire([orphan, call, next, late], { repairPairing: true })

    expect(wire).toEqual([
      call.payload,
      { role: 'tool', tool_call_id: 'c2', content: INTERRUPTED_TOOL_RESULT },
      next.payload,
      late.payload, // the documented limit: answered, so not moved into the call's block
    ])
    expect(JSON.stringify(wire)).not.toContain(call.id)
    expect(Object.isFrozen(wire[0])).toBe(false)
  })
})

/** `promise`, or a rejection once `ms` passed without it settling. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${String(ms)} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** True when `promise` has not settled after `ms`. */
async function pendingAfter(ms: number, promise: Promise<unknown>): Promise<boolean> {
  const waiting = Symbol('waiting')
  const first = await Promise.race([
    promise.then(
      () => null,
      () => null,
    ),
    new Promise((r) => setTimeout(() => r(waiting), ms)),
  ])
  return first === waiting
}

describe('docs/architecture.md, "Write path" (Postgres)', () => {
  let db: TestDatabase
  let store: PostgresStore
  useTestStore((t) => ({ db, store } = t))

  it('"classifies each id without locking …, so a retry of a batch that landed writes and waits for nothing"; nor does a conflict', async () => {
    const sid = await store.createSession()
    const landed = [user('a'), assistant('b')]
    await store.append(sid, landed)
    // other processes (no flush cache): their calls reach the database (a store keeps one session's
    // appends in call order, so the control that waits gets a store of its own)
    const other = await openStore({ connectionString: db.connectionString, migrate: false })
    const control = await openStore({ connectionString: db.connectionString, migrate: false })
    // a writer holding the session's lock: an append inside a transaction left open
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let lockTaken: () => void = () => {}
    const taken = new Promise<void>((resolve) => (lockTaken = resolve))
    const writer = store.db.transaction().execute(async (trx) => {
      await store.withTransaction(trx).append(sid, [user('in flight')])
      lockTaken()
      await held
      throw new Error('rolled back on purpose')
    })
    await taken
    try {
      // the control: a new message waits for the lock
      const blocked = control.append(sid, [user('new')])
      expect(await pendingAfter(500, blocked)).toBe(true)

      const retried = await within(5_000, other.append(sid, landed))
      const flushed = await within(5_000, other.flush(sid, landed))
      const conflict = await within(5_000, turnlogRejection(other.append(sid, [edited(landed[0] as Message, 'a, changed')])))

      expect(retried).toEqual({ version: 2, appended: [], duplicates: landed.map((m) => m.id) })
      expect(flushed).toEqual({ version: 2, appended: [], duplicates: landed.map((m) => m.id) })
      expect(conflict.code).toBe('MESSAGE_CONFLICT')
      release()
      await expect(writer).rejects.toThrow('rolled back on purpose')
      expect(await within(5_000, blocked)).toMatchObject({ version: 3 })
    } finally {
      release()
      await writer.catch(() => undefined)
      await other.close()
      await control.close()
    }
  })
})

describe('docs/architecture.md, the flush cache: "The cache can never be wrong" (Postgres)', () => {
  let store: PostgresStore
  useTestStore((t) => ({ store } = t))

  it("a log that lost commits this store saw (a restore, a failover) is noticed: the flush writes what the log lacks, in the list's order", async () => {
    const sid = await store.createSession()
    const [first, q1, a1] = [user('kept by the backup'), user('lost by the restore'), assistant('lost too')]
    await store.flush(sid, [first, q1, a1])
    await rollBackSession(store, sid, 1)

    const q2 = user('a new turn')
    await store.flush(sid, [first, q1, a1, q2])

    // every message of the list is stored, in the list's order (the lost ones before the new one)
    const stored = (await store.load(sid)).messages.map((m) => m.id)
    expect(stored).toEqual([first, q1, a1, q2].map((m) => m.id))
    // and a load that finds the log behind what this store saw makes it forget too
    await rollBackSession(store, sid, 1)
    await store.load(sid)
    expect((await store.flush(sid, [first, q1, a1, q2])).appended).toHaveLength(3)
  })
})

describe('docs/getting-started.md, "Postgres": opening a store', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase()
  }, 60_000)
  afterAll(async () => {
    await db?.drop()
  })

  /** A connection string nothing listens on: a store that connected first would fail with a connection error. */
  const nowhere = 'postgres://turnlog@127.0.0.1:1/nowhere'

  it('"Its options are checked before anything connects … INVALID_INPUT with details.field naming it": maxBatchBytes too', async () => {
    for (const bad of [0, -1, 1.5, '1024', 512 * 1024 * 1024]) {
      const onServer = await turnlogRejection(openStore({ connectionString: nowhere, maxBatchBytes: bad as never }))
      expect([onServer.code, onServer.details['field']]).toEqual(['INVALID_INPUT', 'config.maxBatchBytes'])
    }
    // embedded, with a data directory: refused before the directory is made
    const parent = mkdtempSync(join(tmpdir(), 'turnlog-options-'))
    try {
      const dataDir = join(parent, 'db')
      const embedded = await turnlogRejection(openStore({ embedded: true, dataDir, maxBatchBytes: 0 }))
      expect([embedded.code, embedded.details['field']]).toEqual(['INVALID_INPUT', 'config.maxBatchBytes'])
      expect(existsSync(dataDir)).toBe(false)
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })

  it('"A key it does not know is refused too … (`maxMessagesBytes`: did you mean maxMessageBytes?)": never a silently ignored limit', async () => {
    const error = await turnlogRejection(openStore({ embedded: true, maxMessagesBytes: 8 } as never))
    expect([error.code, error.details['field'], error.message]).toEqual([
      'INVALID_INPUT',
      'config.maxMessagesBytes',
      expect.stringContaining('did you mean maxMessageBytes?'),
    ])
  })

  it('"migrate: false to skip": an unmigrated database stays empty', async () => {
    const store = await openStore({ connectionString: db.connectionString, migrate: false })
    await store.close()

    const client = new pg.Client({ connectionString: db.connectionString })
    await client.connect()
    try {
      const { rows } = await client.query<{ n: string }>(`select count(*)::text as n from pg_namespace where nspname = 'turnlog'`)
      expect(rows[0]?.n).toBe('0')
    } finally {
      await client.end()
    }
  })

  it('"openStore({ pool }) — a pg.Pool you own (close() leaves it open)"', async () => {
    const pool = new pg.Pool({ connectionString: db.connectionString, max: 2 })
    try {
      const store = await openStore({ pool })
      const sid = await store.createSession()
      await store.close()

      const { rows } = await pool.query<{ n: string }>('select count(*)::text as n from turnlog.sessions where session_id = $1', [sid])
      expect(rows[0]?.n).toBe('1')
      expect(pool.ended).toBe(false)
    } finally {
      await pool.end()
    }
  })
})
