/**
 * docs/performance.md ("retry") and docs/guarantees.md: a message this store saw stored in a session
 * travels as its id and content hash alone (payload and data JSON `null`) when it is appended to that
 * session again; the append functions accept that only for a duplicate and refuse a new one with
 * `TLP01`, and the store then sends the batch again in full. The cases: a re-sent turn, a turn mixing
 * known and new messages, a group of concurrent appends, a store whose knowledge is wrong (the session
 * rolled back behind its back, as a restore from an older backup does), and a raw SQL caller.
 */
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { createMessage, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, rollBackSession } from '@turnlog/testing'
import { sql } from 'kysely'
import { useLoggedStores } from './support/logged-stores.js'
import type { LoggedStatement } from './support/statement-log.js'

const logged = useLoggedStores()
const { stores } = logged

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

/** The append statements sent while `fn` ran. */
async function appendsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; sent: LoggedStatement[] }> {
  const before = logged.log.statements.length
  const result = await fn()
  return { result, sent: logged.log.statements.slice(before).filter((s) => /turnlog\.append_(messages|batches)\(/.test(s.text)) }
}

/** The payload and data arrays (parsed) of an append statement: the last two parameters. */
function contents(statement: LoggedStatement): { payloads: unknown[]; data: unknown[] } {
  const values = statement.values
  return {
    payloads: JSON.parse(values[values.length - 2] as string) as unknown[],
    data: JSON.parse(values[values.length - 1] as string) as unknown[],
  }
}

/** What the session holds, as `load` gives it back: ids and payloads in order. */
async function stored(store: PostgresStore, sid: string): Promise<{ version: number; messages: { id: string; payload: unknown }[] }> {
  const { version, messages } = await store.load(sid)
  return { version, messages: messages.map((m) => ({ id: m.id, payload: m.payload })) }
}

describe.each(['unnamed statements', 'directConnection'] as const)('append of messages this store saw stored (%s)', (kind) => {
  it('a re-sent turn travels as ids and hashes: nothing written, every message a duplicate', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const turn = [user('question'), assistant('answer')]
    const first = await appendsDuring(() => store.append(sid, turn))
    expect(contents(first.sent[0]!).payloads).toEqual(turn.map((m) => m.payload))

    // when
    const again = await appendsDuring(() => store.append(sid, turn))

    // then: one statement, without the contents, and the outcome of a duplicate
    expect(again.sent).toHaveLength(1)
    expect(contents(again.sent[0]!)).toEqual({ payloads: [null, null], data: [null, null] })
    expect(again.result).toEqual({ version: 2, appended: [], duplicates: turn.map((m) => m.id) })
    expect(await stored(store, sid)).toEqual({ version: 2, messages: turn.map((m) => ({ id: m.id, payload: m.payload })) })
  })

  it('a turn mixing known and new messages sends the new ones in full and stores them exactly', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const known = user('known')
    await store.append(sid, [known])
    const fresh = assistant('new, with a NUL \u0000 and a lone surrogate \ud800')

    // when
    const { result, sent } = await appendsDuring(() => store.append(sid, [known, fresh]))

    // then
    expect(sent).toHaveLength(1)
    const { payloads, data } = contents(sent[0]!)
    expect(payloads).toEqual([null, fresh.payload])
    expect(data[0]).toBeNull()
    expect(data[1]).not.toBeNull()
    expect(result).toEqual({ version: 2, appended: [fresh.id], duplicates: [known.id] })
    expect(await stored(store, sid)).toEqual({
      version: 2,
      messages: [known, fresh].map((m) => ({ id: m.id, payload: m.payload })),
    })
  })

  it('the same message with other content is sent in full and is a conflict with its evidence', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const original = user('original')
    await store.append(sid, [original])
    const changed = { ...original, payload: { role: 'user', content: 'changed' } } as Message

    // when
    const attempt = appendsDuring(() => store.append(sid, [changed]))

    // then
    await expect(attempt).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })
    const [record] = await store.conflicts(sid)
    expect(record?.incomingPayload).toEqual({ role: 'user', content: 'changed' })
  })

  it('a store whose knowledge is wrong (the session rolled back behind its back) sends the batch again in full', async () => {
    // given: messages this store appended, then a restore of the session to before them
    const store = stores[kind]
    const sid = await store.createSession()
    const first = user('kept by the backup')
    const lost = [assistant('lost by the restore'), user('lost too')]
    await store.append(sid, [first])
    await store.append(sid, lost)
    await rollBackSession(store, sid, 1)

    // when: the same messages appended again, with one new one
    const added = assistant('new after the restore')
    const { result, sent } = await appendsDuring(() => store.append(sid, [...lost, added]))

    // then: refused without the contents, sent again in full, stored exactly and chained
    expect(sent).toHaveLength(2)
    expect(contents(sent[0]!).payloads).toEqual([null, null, added.payload])
    expect(contents(sent[1]!).payloads).toEqual([...lost, added].map((m) => m.payload))
    expect(result).toEqual({ version: 4, appended: [...lost, added].map((m) => m.id), duplicates: [] })
    expect(await stored(store, sid)).toEqual({
      version: 4,
      messages: [first, ...lost, added].map((m) => ({ id: m.id, payload: m.payload })),
    })
    expect((await verifyChain(store, sid)).ok).toBe(true)
    // and what it knows now is right: the next re-send travels without contents again
    const next = await appendsDuring(() => store.append(sid, lost))
    expect(next.sent).toHaveLength(1)
    expect(contents(next.sent[0]!).payloads).toEqual([null, null])
    expect(next.result.duplicates).toEqual(lost.map((m) => m.id))
  })
})

describe('a group of concurrent appends (append_batches)', () => {
  it('known messages travel without contents; a session whose knowledge is wrong is sent again in full, the others commit', async () => {
    // given: eight sessions with a turn each, one of them then rolled back behind the store's back
    const store = stores.directConnection
    const sessions = await Promise.all(Array.from({ length: 8 }, () => store.createSession()))
    const turns = sessions.map((_, i) => [user(`q${i}`), assistant(`a${i}`)])
    await Promise.all(sessions.map((sid, i) => store.append(sid, turns[i]!)))
    await rollBackSession(store, sessions[3]!, 0)

    // when: every turn re-sent at once, each with a new message
    const added = sessions.map((_, i) => user(`next ${i}`))
    const { result, sent } = await appendsDuring(() => Promise.all(sessions.map((sid, i) => store.append(sid, [...turns[i]!, added[i]!]))))

    // then: some statement was a group, known messages went without contents, every outcome is exact
    expect(sent.some((s) => s.text.includes('append_batches'))).toBe(true)
    expect(sent.some((s) => contents(s).payloads.includes(null))).toBe(true)
    result.forEach((r, i) => {
      const restored = i === 3
      expect(r).toEqual({
        version: 3,
        appended: restored ? [...turns[i]!, added[i]!].map((m) => m.id) : [added[i]!.id],
        duplicates: restored ? [] : turns[i]!.map((m) => m.id),
      })
    })
    for (const [i, sid] of sessions.entries()) {
      expect(await stored(store, sid)).toEqual({
        version: 3,
        messages: [...turns[i]!, added[i]!].map((m) => ({ id: m.id, payload: m.payload })),
      })
      expect((await verifyChain(store, sid)).ok).toBe(true)
    }
  })
})

describe('embedded (PGlite): the same outcomes (the driver hook does not see its statements)', () => {
  it('a re-sent turn is all duplicates; after the session is rolled back behind the store, the batch is stored whole', async () => {
    // given
    const { store, close: closeStore } = await openTestStore('pglite')
    try {
      const sid = await store.createSession()
      const first = user('kept')
      const lost = [assistant('lost by the restore'), user('lost too')]
      await store.append(sid, [first, ...lost])

      // when / then: a re-send is a duplicate
      expect(await store.append(sid, [first, ...lost])).toEqual({ version: 3, appended: [], duplicates: [first, ...lost].map((m) => m.id) })

      // when: rolled back behind the store's back, then appended again
      await rollBackSession(store, sid, 1)
      const result = await store.append(sid, lost)

      // then: stored whole and chained
      expect(result).toEqual({ version: 3, appended: lost.map((m) => m.id), duplicates: [] })
      expect(await stored(store, sid)).toEqual({ version: 3, messages: [first, ...lost].map((m) => ({ id: m.id, payload: m.payload })) })
      expect((await verifyChain(store, sid)).ok).toBe(true)
    } finally {
      await closeStore()
    }
  })
})

describe('a raw SQL caller', () => {
  it.each([
    ['append_messages', false],
    ['append_batches', true],
  ] as const)('%s: a new message without its content is refused with TLP01 and nothing is written', async (fn, group) => {
    // given
    const store = stores['unnamed statements']
    const sid = await store.createSession()
    const m = user('never sent')
    const ids = JSON.stringify([m.id])
    const hashes = JSON.stringify(['00'.repeat(32)])
    const events = JSON.stringify([crypto.randomUUID()])

    // when
    const call = group
      ? sql`select * from turnlog.append_batches(${JSON.stringify([sid])}::json, '[null]'::json, '[1]'::json, ${ids}::json,
              ${hashes}::json, ${events}::json, '[null]'::json, '[null]'::json)`.execute(store.db)
      : sql`select * from turnlog.append_messages(${sid}::uuid, null, ${ids}::json, ${hashes}::json, ${events}::json,
              '[null]'::json, '[null]'::json)`.execute(store.db)

    // then
    await expect(call).rejects.toMatchObject({ code: 'TLP01' })
    expect((await store.getSession(sid)).version).toBe(0)
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from turnlog.events where session_id = ${sid}`.execute(store.db)
    expect(rows[0]?.n).toBe(0)
  })
})
