/**
 * The store's import and admin operations, called directly (the file importer of `@turnlog/audit` has
 * its own tests, which run through them): `importSessions` restores sessions exactly, is idempotent,
 * extends a longer log, refuses a forged link naming the record's line, commits the sessions a failing
 * source yielded before its error; `atomically` commits or rolls back a group of calls;
 * `findSessionIds`, `countConflicts` and `dropSubscription` do what the CLI needs without SQL of its own.
 */
import { describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import {
  GENESIS_HASH,
  contentHash,
  createMessage,
  eventChainHash,
  isTurnlogError,
  type ChatMessage,
  type ImportedEvent,
  type ImportedSession,
  type JsonValue,
  type StoredEvent,
} from '@turnlog/core'
import { dropSubscription, listSubscriptions, type PostgresStore } from '@turnlog/postgres'
import { caught, useTestStore } from '@turnlog/testing'

let store: PostgresStore

useTestStore((t) => ({ store } = t))

/** One event of {@link sessionOf}: an append (of `messageId`, fresh when absent; a fork's copy with `copy`) or a rewind of `ids`. */
/** An event of {@link sessionOf}: an append (a fork's copy with `copy`, labelled `label` or the session's parent), or a rewind. */
type EventSpec = { readonly messageId?: string; readonly copy?: boolean; readonly label?: unknown } | { readonly rewind: readonly string[] }

/**
 * A session of the events `specs` with its chain links, its records on lines `line`, `line + 1`, …; a
 * fork (of a parent the database need not hold) when one of them is a copy.
 */
function sessionOf(specs: readonly EventSpec[], line = 1): ImportedSession {
  const id = randomUUID()
  const parentId = specs.some((spec) => 'copy' in spec && spec.copy === true) ? randomUUID() : null
  const events: ImportedEvent[] = []
  let prev = GENESIS_HASH
  for (const [i, spec] of specs.entries()) {
    const seq = i + 1
    const recordedAt = new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString()
    const chat: ChatMessage = { role: seq % 2 === 1 ? 'user' : 'assistant', content: `message ${seq}` }
    const event =
      'rewind' in spec
        ? {
            seq,
            eventId: randomUUID(),
            type: 'messages_retracted',
            messageId: null,
            contentHash: null,
            payload: null,
            data: { ids: [...spec.rewind], target: { from: spec.rewind[0] ?? null } },
            recordedAt,
          }
        : {
            seq,
            eventId: randomUUID(),
            type: 'message_appended',
            messageId: spec.messageId ?? randomUUID(),
            contentHash: contentHash(chat),
            payload: chat as unknown as JsonValue,
            data:
              spec.copy === true
                ? { createdAt: recordedAt, inheritedFrom: ('label' in spec ? spec.label : parentId) as JsonValue }
                : { createdAt: recordedAt },
            recordedAt,
          }
    const hash = eventChainHash(prev, { ...event, sessionId: id })
    events.push({ ...event, hash, line: line + seq })
    prev = hash
  }
  const at = new Date(Date.UTC(2025, 0, 1)).toISOString()
  const parent = parentId === null ? null : { sessionId: parentId, version: 1, at: randomUUID() }
  return { id, tenantId: null, metadata: { source: 'test' }, createdAt: at, updatedAt: at, parent, events, line }
}

/** A session of `n` appended messages with its chain links, its records on lines `line`, `line + 1`, …. */
function session(n: number, line = 1): ImportedSession {
  return sessionOf(
    Array.from({ length: n }, () => ({})),
    line,
  )
}

async function eventsOf(id: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(id)) out.push(e)
  return out
}

describe('importSessions', () => {
  it('stores sessions exactly, skips what it has, and extends a longer log', async () => {
    // given
    const a = session(3)
    const b = session(2, 10)
    const progress: unknown[] = []

    // when
    const first = await store.importSessions([{ ...a, events: a.events.slice(0, 2) }, b], { onSession: (o) => progress.push(o) })
    const again = await store.importSessions(
      (async function* () {
        yield a
        yield b
      })(),
    )

    // then
    expect(first).toEqual({ sessions: 2, eventsWritten: 4, eventsSkipped: 0, sessionIds: [a.id, b.id] })
    expect(progress).toEqual([
      { sessionId: a.id, written: 2, skipped: 0 },
      { sessionId: b.id, written: 2, skipped: 0 },
    ])
    expect(again).toEqual({ sessions: 2, eventsWritten: 1, eventsSkipped: 4, sessionIds: [a.id, b.id] })
    const stored = await eventsOf(a.id)
    expect(stored.map((e) => [e.seq, e.eventId, e.messageId, e.hash, e.recordedAt])).toEqual(
      a.events.map((e) => [e.seq, e.eventId, e.messageId, e.hash, e.recordedAt]),
    )
    expect((await store.getSession(a.id)).version).toBe(3)
    expect((await store.load(a.id)).messages).toHaveLength(3)
  })

  it('refuses a forged link naming its line; the sessions before it stay committed, nothing after it is written', async () => {
    // given: the second session's second event carries another link
    const [a, b, c] = [session(2, 1), session(2, 4), session(2, 7)]
    const forged = { ...b, events: [b.events[0] as ImportedEvent, { ...(b.events[1] as ImportedEvent), hash: 'f'.repeat(64) }] }

    // when
    const error = await caught(store.importSessions([a, forged, c]))

    // then
    expect(error).toMatchObject({ code: 'IMPORT_FAILED', details: { line: 6, seq: 2, sessionId: b.id } })
    expect((await store.getSession(a.id)).version).toBe(2)
    expect(isTurnlogError(await caught(store.getSession(b.id)), 'SESSION_NOT_FOUND')).toBe(true)
    expect(isTurnlogError(await caught(store.getSession(c.id)), 'SESSION_NOT_FOUND')).toBe(true)
  })

  it('commits the sessions a source yielded before its own error, then throws that error', async () => {
    // given
    const a = session(1)
    const boom = new Error('disk gone')
    async function* failing(): AsyncGenerator<ImportedSession> {
      yield a
      throw boom
    }

    // when
    const error = await caught(store.importSessions(failing()))

    // then: a turnlog error carrying the source's as its cause
    expect(error).toMatchObject({ code: 'IMPORT_FAILED', cause: boom })
    expect((await store.getSession(a.id)).version).toBe(1)
  })

  it('refuses a malformed record with IMPORT_FAILED naming its line, and garbage with INVALID_INPUT, writing nothing', async () => {
    const a = session(1, 20)
    expect(await caught(store.importSessions([{ ...a, tenantId: 'nul \u0000' }]))).toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 20 },
    })
    expect(await caught(store.importSessions([{ ...a, events: [{ ...(a.events[0] as ImportedEvent), seq: 2 }] }]))).toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 21 },
    })
    expect(await caught(store.importSessions([a, a]))).toMatchObject({ code: 'IMPORT_FAILED', details: { line: 20 } })
    expect(await caught(store.importSessions(42 as never))).toMatchObject({ code: 'INVALID_INPUT' })
    expect(await caught(store.importSessions([null as never]))).toMatchObject({ code: 'INVALID_INPUT' })
    // the duplicate's first copy was committed (each session is its own unit); the others wrote nothing
    expect((await store.getSession(a.id)).version).toBe(1)
  })

  it.each([
    ['an original append twice', (x: string): EventSpec[] => [{ messageId: x }, { rewind: [x] }, { messageId: x }]],
    [
      "a fork's copy, then an original append of its id",
      (x: string): EventSpec[] => [{ messageId: x, copy: true }, { rewind: [x] }, { messageId: x }],
    ],
    [
      "an original append, then a fork's copy of its id",
      (x: string): EventSpec[] => [{ messageId: x }, { rewind: [x] }, { messageId: x, copy: true }],
    ],
    ["a fork's copy twice", (x: string): EventSpec[] => [{ messageId: x, copy: true }, { rewind: [x] }, { messageId: x, copy: true }]],
  ])(
    'refuses a session that appends one message id twice (%s) with IMPORT_FAILED naming the second line; the session is not written',
    async (_, specs) => {
      // given: a good session, then one whose third event appends the id of its first again (after a rewind)
      const x = createMessage({ role: 'user', content: 'x' }).id
      const [good, twice] = [session(1, 30), sessionOf(specs(x), 40)]

      // when
      const error = await caught(store.importSessions([good, twice]))

      // then
      expect(error).toMatchObject({ code: 'IMPORT_FAILED', details: { line: 43, seq: 3, sessionId: twice.id, messageId: x } })
      expect((error as Error).message).toContain('line 41')
      expect((await store.getSession(good.id)).version).toBe(1)
      expect(isTurnlogError(await caught(store.getSession(twice.id)), 'SESSION_NOT_FOUND')).toBe(true)
    },
  )

  it.each([
    ['another session', (): JsonValue => randomUUID()],
    ['JSON null', (): JsonValue => null],
    ['an object', (): JsonValue => ({ sessionId: randomUUID(), seq: 1 })],
  ] as const)(
    "refuses a fork's copy whose data.inheritedFrom is %s, not the session's fork parent, with IMPORT_FAILED naming its line; the session is not written",
    async (_, label) => {
      // given: a good session, then a fork whose second event is a copy labelled otherwise
      const [good, mislabelled] = [session(1, 30), sessionOf([{ copy: true }, { copy: true, label: label() }, {}], 40)]

      // when
      const error = await caught(store.importSessions([good, mislabelled]))

      // then
      expect(error).toMatchObject({ code: 'IMPORT_FAILED', details: { line: 42, seq: 2, sessionId: mislabelled.id, field: 'data' } })
      expect((error as Error).message).toContain('fork parent')
      expect((await store.getSession(good.id)).version).toBe(1)
      expect(isTurnlogError(await caught(store.getSession(mislabelled.id)), 'SESSION_NOT_FOUND')).toBe(true)
    },
  )

  it("refuses a fork's copy in a session that is no fork, naming its line", async () => {
    // given: a session without a parent whose first event is labelled a copy of some session
    const base = sessionOf([{}, {}], 50)
    const first = base.events[0] as ImportedEvent
    const relabelled = {
      ...base,
      events: [{ ...first, data: { ...(first.data as Record<string, JsonValue>), inheritedFrom: randomUUID() } }, ...base.events.slice(1)],
    }

    // when
    const error = await caught(store.importSessions([relabelled]))

    // then: refused before the chain is looked at (the relabelled event's link is now wrong too)
    expect(error).toMatchObject({ code: 'IMPORT_FAILED', details: { line: 51, seq: 1, sessionId: base.id, field: 'data' } })
    expect((error as Error).message).toContain('none: the session is not a fork')
    expect(isTurnlogError(await caught(store.getSession(base.id)), 'SESSION_NOT_FOUND')).toBe(true)
  })
})

describe('atomically', () => {
  it('commits what the work wrote when it resolves, and nothing when it throws', async () => {
    // given
    const kept = await store.createSession()
    const message = createMessage({ role: 'user', content: 'kept' })

    // when
    const result = await store.atomically(async (s) => s.append(kept, [message]))
    const refused = await caught(
      store.atomically(async (s) => {
        const id = await s.createSession()
        await s.append(id, [createMessage({ role: 'user', content: 'rolled back' })])
        throw new Error(`giving up on ${id}`)
      }),
    )

    // then: the work's own error comes back as it was thrown
    expect(result.appended).toEqual([message.id])
    expect((refused as Error).message).toMatch(/^giving up on /)
    const id = (refused as Error).message.slice('giving up on '.length)
    expect(isTurnlogError(await caught(store.getSession(id)), 'SESSION_NOT_FOUND')).toBe(true)
    expect(isTurnlogError(await caught(store.atomically(42 as never)), 'INVALID_INPUT')).toBe(true)
  })
})

describe('lookups for the CLI', () => {
  it('findSessionIds matches the start or the end of an id; countConflicts counts every recorded conflict', async () => {
    // given
    const id = await store.createSession()
    const m = createMessage({ role: 'user', content: 'one' })
    await store.append(id, [m])
    const before = await store.countConflicts()
    await caught(store.append(id, [{ ...m, payload: { role: 'user', content: 'other' } }]))

    // then
    expect(await store.findSessionIds(id.slice(0, 8))).toContain(id)
    expect(await store.findSessionIds(id.slice(-8).toUpperCase())).toContain(id)
    expect(await store.findSessionIds('0123456789abcdef0123456789abcdef0123456789')).toEqual([])
    expect(await caught(store.findSessionIds('%'))).toMatchObject({ code: 'INVALID_INPUT' })
    expect(await store.countConflicts()).toBe(before + 1)
  })

  it('dropSubscription removes an idle subscription row, and refuses while a consumer holds the name', async () => {
    // given
    const name = `drop-${randomUUID()}`
    const running = store.subscribe({ name, from: 'now' }, () => {})
    await running.catchUp()

    // when
    const whileHeld = await caught(dropSubscription(store, name))
    await running.stop()
    const dropped = await dropSubscription(store, name)

    // then
    expect(whileHeld).toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    expect(dropped).toBe(true)
    expect(await dropSubscription(store, name)).toBe(false)
    expect((await listSubscriptions(store)).map((s) => s.name)).not.toContain(name)
  })
})
