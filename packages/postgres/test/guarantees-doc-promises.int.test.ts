/**
 * docs/guarantees.md, checked where the suites named there left a promise unasserted: "Retry safety
 * after an ambiguous commit" (a replay of each committed write writes nothing, also after the session
 * moved on; a sync replayed with its `expectedVersion` writes nothing; a rewind replayed with `expectedVersion` is refused; `withRetry` retries `DB_TRANSIENT` only,
 * with capped exponential back-off), "History" (a compaction records the covered messages' current
 * hashes; how `fork` and `createSession` answer a taken session id; a fork and its parent share only a
 * redaction), "The caller's live list" (`revise` and `finalize` return the message exactly as `load`
 * returns it) and "Projections" (`rebuild()` refuses a recompute the fold disagrees with). Postgres and
 * PGlite.
 *
 * `createSession({ id })` returns the id of any session of the caller's tenant, a fork included (the
 * openai-agents adapter reopens a fork that way); the doc said it answered "the same way" as `fork`.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { TurnlogError, contentHash, createMessage, newSessionId, type Message } from '@turnlog/core'
import { withRetry, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, turnlogRejection, useTestStore, useTestStoreOfKind } from '@turnlog/testing'
import { sql } from 'kysely'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

/** Every event of a session, as stored. */
async function eventCount(store: PostgresStore, sessionId: string): Promise<number> {
  let n = 0
  for await (const _ of store.events(sessionId)) n++
  return n
}

describe.each(STORE_KINDS)('docs/guarantees.md promises (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  describe('Retry safety after an ambiguous commit: a replay of a committed call writes nothing', () => {
    it('createSession({ id, metadata }), revise, finalize, compact and sync replayed: same results, version and events unchanged', async () => {
      // given: each call committed once
      const id = newSessionId()
      expect(await store.createSession({ id, metadata: { a: 1 } })).toBe(id)
      const [q, r] = [user('q'), createMessage({ role: 'assistant', content: 'draft' }, { status: 'partial' })]
      const [x, y] = [user('x'), assistant('y')]
      await store.append(id, [q, r, x, y])
      await store.revise(id, q.id, { role: 'user', content: 'q2' })
      await store.finalize(id, r.id, { role: 'assistant', content: 'final' })
      const summary = createMessage({ role: 'system', content: 'summary of x and y' })
      await store.compact(id, { covered: [x.id, y.id], summary })
      const list = [...(await store.load(id)).messages, user('z')]
      await store.sync(id, list)
      const before = { version: (await store.getSession(id)).version, events: await eventCount(store, id) }

      // when: every call sent again, as after a lost acknowledgement
      const replays = {
        create: await store.createSession({ id, metadata: { a: 1 } }),
        revise: (await store.revise(id, q.id, { role: 'user', content: 'q2' })).version,
        finalize: (await store.finalize(id, r.id, { role: 'assistant', content: 'final' })).version,
        compact: (await store.compact(id, { covered: [x.id, y.id], summary })).version,
        sync: await store.sync(id, list),
      }

      // then
      expect(replays.create).toBe(id)
      expect([replays.revise, replays.finalize, replays.compact, replays.sync.version]).toEqual(Array(4).fill(before.version))
      expect(replays.sync).toMatchObject({ appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
      expect({ version: (await store.getSession(id)).version, events: await eventCount(store, id) }).toEqual(before)
    })

    it('fork(…, { id }) replayed after the parent moved on (appended, revised, rewound past the point): the id, nothing written', async () => {
      // given
      const parent = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(parent, [a, b, c])
      const child = newSessionId()
      await store.fork(parent, { at: b.id, id: child })
      const childBefore = { version: (await store.getSession(child)).version, events: await eventCount(store, child) }
      await store.append(parent, [assistant('d')])
      await store.revise(parent, b.id, { role: 'assistant', content: 'b2' })
      await store.rewind(parent, { after: a.id })

      // when
      const replay = await store.fork(parent, { at: b.id, id: child })

      // then
      expect(replay).toBe(child)
      expect({ version: (await store.getSession(child)).version, events: await eventCount(store, child) }).toEqual(childBefore)
      expect((await store.load(child)).messages.map((m) => m.payload)).toEqual([a.payload, b.payload])
    })

    it('a sync replayed with its expectedVersion writes nothing; a list not in effect under that version is VERSION_CONFLICT', async () => {
      // given: a sync that appended, retracted and revised, committed under version 3
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const list = [a, createMessage({ role: 'assistant', content: 'b, edited' }, { id: b.id }), user('d')]
      const first = await store.sync(sid, list, { expectedVersion: 3 })
      const before = { version: (await store.getSession(sid)).version, events: await eventCount(store, sid) }

      // when: the caller, unsure, sends it again with the same version; then a list that differs from the live one
      const replay = await store.sync(sid, list, { expectedVersion: 3 })
      const stale = await turnlogRejection(store.sync(sid, [a, b], { expectedVersion: 3 }))
      const reordered = await turnlogRejection(store.sync(sid, [...list].reverse(), { expectedVersion: 3 }))

      // then: the replay is the nothing-done result at the current version; the others the version conflict
      expect(first).toMatchObject({ version: 6, appended: [list[2]!.id], retracted: [c.id], revised: [b.id] })
      expect(replay).toEqual({ version: 6, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
      expect([stale.code, stale.details['actualVersion']]).toEqual(['VERSION_CONFLICT', 6])
      expect(reordered.code).toBe('VERSION_CONFLICT')
      expect({ version: (await store.getSession(sid)).version, events: await eventCount(store, sid) }).toEqual(before)
    })

    it('a rewind replayed with its expectedVersion is VERSION_CONFLICT, never a second retraction', async () => {
      // given: the rewind committed
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const first = await store.rewind(sid, { from: c.id }, { expectedVersion: 3 })

      // when: the caller, unsure, sends it again with the same version
      const error = await turnlogRejection(store.rewind(sid, { from: c.id }, { expectedVersion: 3 }))
      const after = await turnlogRejection(store.rewind(sid, { after: a.id }, { expectedVersion: 3 }))

      // then
      expect(first).toEqual({ version: 4, retracted: [c.id] })
      expect([error.code, error.details['actualVersion']]).toEqual(['VERSION_CONFLICT', 4])
      expect(after.code).toBe('VERSION_CONFLICT')
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([a.id, b.id])
    })
  })

  describe('History: a taken session id', () => {
    it('fork({ id }) with another point, another parent or a plain session’s id: SESSION_EXISTS, nothing written', async () => {
      // given
      const parent = await store.createSession()
      const other = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(parent, [a, b])
      const o = user('o')
      await store.append(other, [o])
      const child = await store.fork(parent, { at: b.id, id: newSessionId() })
      const plain = await store.createSession()

      // when
      const codes = [
        (await turnlogRejection(store.fork(parent, { at: a.id, id: child }))).code,
        (await turnlogRejection(store.fork(other, { at: o.id, id: child }))).code,
        (await turnlogRejection(store.fork(parent, { at: b.id, id: plain }))).code,
      ]

      // then
      expect(codes).toEqual(['SESSION_EXISTS', 'SESSION_EXISTS', 'SESSION_EXISTS'])
      expect((await store.getSession(child)).parent).toMatchObject({ sessionId: parent, at: b.id })
      expect(await eventCount(store, plain)).toBe(0)
    })

    it('createSession({ id }) answers by tenant only: a fork or a session with other metadata in the caller’s tenant is returned as is, another tenant’s is SESSION_EXISTS', async () => {
      // given: a fork, and a plain session with metadata (an adapter reopens either by its id: openai-agents TurnlogSession)
      const parent = await store.createSession({ tenantId: 't1' })
      const a = user('a')
      await store.append(parent, [a])
      const child = await store.fork(parent, { at: a.id, id: newSessionId() })
      const plain = await store.createSession({ id: newSessionId(), tenantId: 't1', metadata: { v: 1 } })

      // when
      const reopened = [
        await store.createSession({ id: child, tenantId: 't1' }),
        await store.createSession({ id: plain, tenantId: 't1', metadata: { v: 2 } }),
      ]
      const other = await turnlogRejection(store.createSession({ id: child, tenantId: 't2' }))

      // then: nothing written, nothing changed
      expect(reopened).toEqual([child, plain])
      expect(other.code).toBe('SESSION_EXISTS')
      expect(await store.getSession(child)).toMatchObject({ version: 2, parent: { sessionId: parent, at: a.id } })
      expect(await store.getSession(plain)).toMatchObject({ version: 0, metadata: { v: 1 } })
    })
  })

  describe('History: forks', () => {
    it('later writes to one session leave the other as it was, but for redact, which scrubs the message in parent and fork alike', async () => {
      // given
      const parent = await store.createSession()
      const [a, b] = [user('secret: 4111 1111'), assistant('b')]
      await store.append(parent, [a, b])
      const child = await store.fork(parent, { at: b.id })
      await store.revise(parent, b.id, { role: 'assistant', content: 'b, parent only' })

      // when: redacted through the child
      await store.redact(child, a.id, { reason: 'erasure request' })

      // then
      const [p, c] = [(await store.load(parent)).messages, (await store.load(child)).messages]
      expect(c.map((m) => m.payload)).toEqual([{ role: 'user', content: '[redacted]' }, b.payload])
      expect(p.map((m) => m.payload)).toEqual([
        { role: 'user', content: '[redacted]' },
        { role: 'assistant', content: 'b, parent only' },
      ])
    })
  })

  describe('History: a compaction records every covered id and its content hash', () => {
    it('the hash of the content each covered message has now: after a revision and a finalize with new content', async () => {
      // given
      const sid = await store.createSession()
      const a = user('a')
      const b = createMessage({ role: 'assistant', content: 'stream' }, { status: 'partial' })
      const c = user('c')
      await store.append(sid, [a, b, c])
      await store.revise(sid, a.id, { role: 'user', content: 'a, revised' })
      await store.finalize(sid, b.id, { role: 'assistant', content: 'stream, final' })
      const live = (await store.load(sid)).messages

      // when
      await store.compact(sid, { covered: [a.id, b.id], summary: createMessage({ role: 'system', content: 's' }) })

      // then
      let compacted: unknown
      for await (const e of store.events(sid)) if (e.type === 'messages_compacted') compacted = e.data
      expect(compacted).toMatchObject({
        covered: live.slice(0, 2).map((m) => ({ id: m.id, contentHash: contentHash(m) })),
      })
      expect(contentHash(live[0] as Message)).not.toBe(contentHash(a))
    })
  })

  describe("The caller's live list: revise and finalize return the message as load returns it", () => {
    it('with externalId and scope, format, meta and createdAt: the result message equals the loaded one', async () => {
      // given
      const sid = await store.createSession()
      const inbound = createMessage(
        { kind: 'note', text: 'v1' },
        { format: 'json', externalId: 'm-7', scope: 'chat:1', meta: { model: 'x' }, status: 'partial' },
      )
      await store.append(sid, [user('first'), inbound])

      // when / then: revise (still partial), then finalize
      const revised = await store.revise(sid, inbound.id, { kind: 'note', text: 'v2' }, { status: 'partial' })
      expect({ ...revised.message }).toEqual({ ...(await store.load(sid)).messages[1] })
      expect(revised.message).toMatchObject({ externalId: 'm-7', externalScope: 'chat:1', createdAt: inbound.createdAt, status: 'partial' })
      const finalized = await store.finalize(sid, inbound.id)
      const loaded = (await store.load(sid)).messages[1]
      expect({ ...finalized.message }).toEqual({ ...loaded })
      expect(finalized.message.status).toBeUndefined()
      expect(finalized.message.payload).toEqual({ kind: 'note', text: 'v2' })
    })
  })
})

describe('Projections: rebuild() verifies what it recomputed against the fold before committing (Postgres)', () => {
  let store: PostgresStore
  useTestStore((t) => ({ store } = t))

  it('a recompute that disagrees with the fold (a sabotaged SQL function) is CORRUPT_LOG and commits nothing', async () => {
    // given: a session with a drifted projection, and a recompute that drops each session's first live row
    const sid = await store.createSession()
    const [a, b, c] = [user('a'), assistant('b'), user('c')]
    await store.append(sid, [a, b, c])
    await store.revise(sid, b.id, { role: 'assistant', content: 'b2' })
    await sql`delete from turnlog.live_messages where session_id = ${sid} and message_id = ${c.id}`.execute(store.db)
    await sql`alter function turnlog.rebuild_sessions_unchecked(uuid[]) rename to rebuild_sessions_unchecked_real`.execute(store.db)
    await sql
      .raw(
        `create function turnlog.rebuild_sessions_unchecked(p uuid[]) returns void language plpgsql as $$
         begin
           perform turnlog.rebuild_sessions_unchecked_real(p);
           delete from turnlog.live_messages l where l.session_id = any (p)
              and l.position = (select min(o.position) from turnlog.live_messages o where o.session_id = l.session_id);
         end $$`,
      )
      .execute(store.db)

    // when
    const error = await turnlogRejection(store.rebuild({ sessionId: sid }))
    const after = (await store.load(sid)).messages.map((m) => m.id)
    await sql`drop function turnlog.rebuild_sessions_unchecked(uuid[])`.execute(store.db)
    await sql`alter function turnlog.rebuild_sessions_unchecked_real(uuid[]) rename to rebuild_sessions_unchecked`.execute(store.db)
    const repaired = await store.rebuild({ sessionId: sid })

    // then: refused, the drifted projection left as it was; the real recompute repairs it
    expect([error.code, error.details['sessionId']]).toEqual(['CORRUPT_LOG', sid])
    expect(error.message).toContain('still differs from the fold')
    expect(after).toEqual([a.id, b.id])
    expect(repaired.rewritten).toBe(1)
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([a.id, b.id, c.id])
  })
})

describe('withRetry (Retry safety)', () => {
  afterEach(() => {
    jest.restoreAllMocks()
  })

  it('retries DB_TRANSIENT only: another error is thrown at once, a transient one until attempts run out', async () => {
    // given
    let conflicts = 0
    let transients = 0
    const conflict = async (): Promise<never> => {
      conflicts++
      throw new TurnlogError('MESSAGE_CONFLICT', 'conflict')
    }
    const transient = async (): Promise<never> => {
      transients++
      throw new TurnlogError('DB_TRANSIENT', 'lost')
    }

    // when
    const a = await withRetry(conflict, { baseDelayMs: 0 }).catch((e: unknown) => e)
    const b = await withRetry(transient, { baseDelayMs: 0, attempts: 3 }).catch((e: unknown) => e)

    // then
    expect([(a as TurnlogError).code, conflicts]).toEqual(['MESSAGE_CONFLICT', 1])
    expect([(b as TurnlogError).code, transients]).toEqual(['DB_TRANSIENT', 3])
  })

  it('waits at most baseDelayMs · 2^(n−1) before retry n, capped at maxDelayMs (jitter at its top)', async () => {
    // given: the jitter drawn at its maximum
    jest.spyOn(Math, 'random').mockReturnValue(0.999)
    const stamps: number[] = []
    const failing = (n: number) => async (): Promise<string> => {
      stamps.push(Date.now())
      if (stamps.length < n) throw new TurnlogError('DB_TRANSIENT', 'lost')
      return 'ok'
    }

    // when: four attempts, base 40 ms: waits ≈ 40, 80, 160; then capped at 60: ≈ 40, 60, 60
    await withRetry(failing(4), { baseDelayMs: 40, maxDelayMs: 10_000 })
    const doubling = stamps.slice(1).map((t, i) => t - (stamps[i] ?? 0))
    stamps.length = 0
    await withRetry(failing(4), { baseDelayMs: 40, maxDelayMs: 60 })
    const capped = stamps.slice(1).map((t, i) => t - (stamps[i] ?? 0))

    // then (a timer may fire a little late, never early)
    const near = (waits: number[], expected: number[]): void => {
      expect(waits).toHaveLength(expected.length)
      waits.forEach((w, i) => {
        expect(w).toBeGreaterThanOrEqual((expected[i] ?? 0) - 2)
        expect(w).toBeLessThan((expected[i] ?? 0) + 35)
      })
    }
    near(doubling, [40, 80, 160])
    near(capped, [40, 60, 60])
  })
})
