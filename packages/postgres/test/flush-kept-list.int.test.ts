/**
 * A flush checks only the slots its session's list gained since the last flush (the same object at
 * the same index is taken as checked). Each case here changes a flushed list in a way that shortcut
 * must not miss, on a real store, and counts the statements sent: what was already stored costs none,
 * anything else is sent, and every failure of the failure catalogue (docs: a lost write, a skipped
 * revision, a duplicate) is reported exactly as a store that never saw the list before reports it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, toMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { useTestStore, type TestDatabase } from '@turnlog/testing'
import { logStatements, type StatementLog } from './support/statement-log.js'

let db: TestDatabase
let log: StatementLog
let store: PostgresStore
useTestStore((t) => ({ db, store } = t))

beforeAll(() => {
  log = logStatements(db.name)
})

afterAll(() => {
  log?.restore()
})

let n = 0
const user = (content = `u${n++}`): Message => createMessage({ role: 'user', content })

/** Runs `fn` and returns its result (or error code) with the number of statements it sent. */
async function counted(fn: () => Promise<unknown>): Promise<{ outcome: unknown; statements: number }> {
  const before = log.statements.length
  let outcome: unknown
  try {
    outcome = await fn()
  } catch (error) {
    outcome = { code: (error as { code?: unknown }).code, details: (error as { details?: { reason?: unknown } }).details?.reason }
  }
  return { outcome, statements: log.statements.length - before }
}

/** A session whose first messages this store flushed one by one (so its list is kept). */
async function grown(size: number): Promise<{ sid: Awaited<ReturnType<PostgresStore['createSession']>>; live: Message[] }> {
  const sid = await store.createSession()
  const live: Message[] = []
  for (let i = 0; i < size; i++) {
    live.push(user())
    await store.flush(sid, live)
  }
  return { sid, live }
}

const transcript = async (sid: string): Promise<string[]> =>
  (await store.load(sid)).messages.map((m) => `${m.id}:${JSON.stringify(m.payload)}`)

describe('flush of a kept list changed between flushes', () => {
  it('the same array grown in place: only the new message is sent', async () => {
    // given
    const { sid, live } = await grown(5)

    // when
    live.push(user('new'))
    const { outcome, statements } = await counted(() => store.flush(sid, live))

    // then
    expect(statements).toBe(1)
    expect(outcome).toEqual({ version: 6, appended: [live[5]!.id], duplicates: live.slice(0, 5).map((m) => m.id) })
  })

  it('a message edited under its id at the same slot (a new object, frozen or not) is a conflict, never skipped', async () => {
    // given: besides this store, one whose flush cache never saw the list (the reference)
    const { sid, live } = await grown(4)
    const before = await transcript(sid)
    const cold = await openStore({ connectionString: db.connectionString, migrate: false })
    const edited = createMessage({ role: 'user', content: 'edited in place' }, { id: live[1]!.id, createdAt: live[1]!.createdAt })
    const variants = [edited, JSON.parse(JSON.stringify(edited)) as Message, Object.freeze({ ...edited })]

    try {
      for (const variant of variants) {
        // when: the same array with the slot replaced, and a new array that also grew
        live[1] = variant
        const inPlace = await counted(() => store.flush(sid, live))
        const grownToo = await counted(() => store.flush(sid, [...live, user()]))

        // then: what a store that never saw the list says, and nothing written
        const reference = await counted(() => cold.flush(sid, live))
        expect(inPlace.outcome).toEqual({ code: 'MESSAGE_CONFLICT', details: 'content_mismatch' })
        expect(grownToo.outcome).toEqual(inPlace.outcome)
        expect(reference.outcome).toEqual(inPlace.outcome)
        expect(inPlace.statements).toBeGreaterThan(0)
      }
    } finally {
      await cold.close()
    }
    expect(await transcript(sid)).toEqual(before)
  })

  it('a frozen copy or a plain copy replacing the original: the same message, nothing sent', async () => {
    // given
    const { sid, live } = await grown(4)
    const copies = [
      Object.freeze({ ...live[2]! }),
      JSON.parse(JSON.stringify(live[2])) as Message,
      toMessage(JSON.parse(JSON.stringify(live[2])) as unknown),
    ]

    for (const copy of copies) {
      // when
      const list = [...live]
      list[2] = copy
      const { outcome, statements } = await counted(() => store.flush(sid, list))

      // then
      expect({ outcome, statements }).toEqual({ statements: 0, outcome: { version: 4, appended: [], duplicates: live.map((m) => m.id) } })
    }
  })

  it('a plain object edited in place between two flushes is a conflict at the second', async () => {
    // given: a list that holds a plain object (not a message made by createMessage)
    const sid = await store.createSession()
    const plain = JSON.parse(JSON.stringify(user('plain'))) as { payload: { content: string } }
    const live = [user(), plain as unknown as Message]
    await store.flush(sid, live)

    // when
    plain.payload.content = 'plain, edited in place'
    const { outcome, statements } = await counted(() => store.flush(sid, live))

    // then
    expect(outcome).toEqual({ code: 'MESSAGE_CONFLICT', details: 'content_mismatch' })
    expect(statements).toBeGreaterThan(0)
  })

  it('a message moved to another slot, and one listed twice: the same messages, in the new order', async () => {
    // given
    const { sid, live } = await grown(4)
    const [a, b, c, d] = live as [Message, Message, Message, Message]
    const fresh = user('new')

    // when
    const moved = await counted(() => store.flush(sid, [b, a, c, d]))
    const twice = await counted(() => store.flush(sid, [a, b, c, d, fresh, b, fresh]))

    // then
    expect(moved).toEqual({ statements: 0, outcome: { version: 4, appended: [], duplicates: [b.id, a.id, c.id, d.id] } })
    expect(twice.outcome).toEqual({ version: 5, appended: [fresh.id], duplicates: [a.id, b.id, c.id, d.id, fresh.id] })
    expect(twice.statements).toBe(1)
  })

  it('a list that shrank then grew (a rewind in memory, then new messages): the new ones are written, none lost', async () => {
    // given
    const { sid, live } = await grown(6)

    // when: the last three dropped, two new ones in their place (same length as before, then longer)
    live.splice(3)
    const [x, y, z] = [user('x'), user('y'), user('z')]
    live.push(x, y)
    const first = await counted(() => store.flush(sid, live))
    live.push(z)
    const second = await counted(() => store.flush(sid, live))

    // then
    expect(first.outcome).toEqual({ version: 8, appended: [x.id, y.id], duplicates: live.slice(0, 3).map((m) => m.id) })
    expect(second).toEqual({ statements: 1, outcome: { version: 9, appended: [z.id], duplicates: live.slice(0, 5).map((m) => m.id) } })
  })

  it('two sessions sharing message objects: the second is refused (an id belongs to one session), its own list kept apart', async () => {
    // given: session A flushed its list; session B's list holds A's first message object
    const { sid: a, live } = await grown(3)
    const b = await store.createSession()
    const own = user('b only')
    await store.flush(b, [own])

    // when
    const shared = await counted(() => store.flush(b, [own, live[0]!]))
    const aAgain = await counted(() => store.flush(a, live))
    const bAlone = await counted(() => store.flush(b, [own]))

    // then
    expect(shared.outcome).toEqual({ code: 'MESSAGE_CONFLICT', details: 'foreign_session' })
    expect(aAgain).toEqual({ statements: 0, outcome: { version: 3, appended: [], duplicates: live.map((m) => m.id) } })
    expect(bAlone).toEqual({ statements: 0, outcome: { version: 1, appended: [], duplicates: [own.id] } })
  })
})
