/**
 * docs/guarantees.md, Durability: a flush whose every message is known durable to this store (from its
 * own appends and loads) sends no statement at all and returns the last version this store observed
 * for the session. The contract suite only sees results (and accepts either version), so a flush that
 * always asks the database would pass it; here a driver hook counts the statements actually sent.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, toMessage, type Message } from '@turnlog/core'
import fc from 'fast-check'
import { useLoggedStores } from './support/logged-stores.js'

const logged = useLoggedStores()
const { stores } = logged

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const scaffolding = (content: string): Message => createMessage({ role: 'user', content }, { ephemeral: true })

/** Runs `fn` and returns its result with the number of statements it sent. */
async function counted<T>(fn: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = logged.log.statements.length
  const result = await fn()
  return { result, statements: logged.log.statements.length - before }
}

describe.each(['unnamed statements', 'directConnection'] as const)('a flush of messages known durable (%s)', (kind) => {
  it('after this store appended them: no statement, the version of that append', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const live = [user('q'), assistant('a'), user('q2')]
    const { result: appended, statements: appendStatements } = await counted(() => store.append(sid, live))
    expect(appendStatements).toBeGreaterThan(0) // the hook sees this store's statements

    // when: the same list, copies of it, and the list with scaffolding around it
    const same = await counted(() => store.flush(sid, live))
    const copies = await counted(() =>
      store.flush(
        sid,
        live.map((m) => toMessage(JSON.parse(JSON.stringify(m)) as unknown)),
      ),
    )
    const withScaffolding = await counted(() => store.flush(sid, [scaffolding('continue'), ...live, scaffolding('(empty)')]))
    const shrunk = await counted(() => store.flush(sid, live.slice(1)))

    // then
    const ids = live.map((m) => m.id)
    expect(same).toEqual({ statements: 0, result: { version: appended.version, appended: [], duplicates: ids } })
    expect(copies).toEqual({ statements: 0, result: { version: 3, appended: [], duplicates: ids } })
    expect(withScaffolding).toEqual({ statements: 0, result: { version: 3, appended: [], duplicates: ids } })
    expect(shrunk).toEqual({ statements: 0, result: { version: 3, appended: [], duplicates: ids.slice(1) } })
  })

  it('after this store loaded them: no statement, the loaded version', async () => {
    // given: another store wrote the session; this one only loads it
    const store = stores[kind]
    const other = stores[kind === 'directConnection' ? 'unnamed statements' : 'directConnection']
    const sid = await other.createSession()
    await other.append(sid, [user('one'), assistant('two')])
    await other.append(sid, [user('three')])
    const loaded = await store.load(sid)

    // when
    const { result, statements } = await counted(() => store.flush(sid, loaded.messages))

    // then
    expect(statements).toBe(0)
    expect(result).toEqual({ version: 3, appended: [], duplicates: loaded.messages.map((m) => m.id) })
  })

  it('after loads at several versions (a revision between them): every list any of them returned, no statement', async () => {
    // given: another store writes; this one loads at version 2, again at 2, at 3, then after a revision
    const store = stores[kind]
    const other = stores[kind === 'directConnection' ? 'unnamed statements' : 'directConnection']
    const sid = await other.createSession()
    const q = user('q')
    await other.append(sid, [q, assistant('first answer')])
    const first = await store.load(sid)
    const again = await store.load(sid)
    await other.append(sid, [user('q2')])
    const third = await store.load(sid)
    const answer = first.messages[1] as Message
    await other.revise(sid, answer.id, { role: 'assistant', content: 'revised answer' })
    const revised = await store.load(sid)
    expect([first.version, again.version, third.version, revised.version]).toEqual([2, 2, 3, 4])

    // when: each list flushed as loaded (the first holds the answer as it was before the revision)
    const flushes = []
    for (const loaded of [revised, third, first]) flushes.push(await counted(() => store.flush(sid, loaded.messages)))

    // then: the pairs of every load were learnt, the earlier content of the revised answer too
    expect(flushes.map((f) => f.statements)).toEqual([0, 0, 0])
    expect(flushes[0]?.result).toEqual({ version: 4, appended: [], duplicates: revised.messages.map((m) => m.id) })
  })

  it('returns the last version this store observed even when another writer moved it (documented), and asks the database when told to', async () => {
    // given
    const store = stores[kind]
    const other = stores[kind === 'directConnection' ? 'unnamed statements' : 'directConnection']
    const sid = await store.createSession()
    const live = [user('mine')]
    await store.append(sid, live)
    await other.append(sid, [user('theirs')])

    // when
    const cached = await counted(() => store.flush(sid, live))
    const checked = await counted(() => store.flush(sid, live, { expectedVersion: 2 }))

    // then
    expect(cached).toEqual({ statements: 0, result: { version: 1, appended: [], duplicates: [live[0]!.id] } })
    expect(checked.statements).toBeGreaterThan(0)
    expect(checked.result).toEqual({ version: 2, appended: [], duplicates: [live[0]!.id] })
  })

  it('sends a statement when one message is not known durable (new, or changed under its id)', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const live = [user('q'), assistant('a')]
    await store.append(sid, live)

    // when
    const added = await counted(() => store.flush(sid, [...live, user('new')]))
    const changed = createMessage({ role: 'assistant', content: 'a, edited in place' }, { id: live[1]!.id })
    const before = logged.log.statements.length
    await expect(store.flush(sid, [live[0]!, changed])).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })
    const changedStatements = logged.log.statements.length - before
    const unknownSession = await store.createSession()
    const fresh = await counted(() => store.flush(unknownSession, []))

    // then
    expect(added.statements).toBeGreaterThan(0)
    expect(added.result.version).toBe(3)
    expect(changedStatements).toBeGreaterThan(0)
    expect(fresh.statements).toBeGreaterThan(0) // a session this store never saw a version of
  })

  it('property: any sublist of durable messages, reordered, copied, with scaffolding: no statement, the exact version', async () => {
    // given: a session this store appended in three batches
    const store = stores[kind]
    const sid = await store.createSession()
    const durable = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? user(`u${i}`) : assistant(`a${i}`)))
    await store.append(sid, durable.slice(0, 3))
    await store.append(sid, durable.slice(3, 5))
    const { version } = await store.append(sid, durable.slice(5))
    expect(version).toBe(8)

    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(durable),
        fc.array(fc.nat({ max: 8 }), { maxLength: 3 }),
        fc.boolean(),
        async (picked, scaffoldAt, copy) => {
          // when
          const list: Message[] = picked.map((m) => (copy ? toMessage(JSON.parse(JSON.stringify(m)) as unknown) : m))
          for (const at of scaffoldAt) list.splice(Math.min(at, list.length), 0, scaffolding(`nudge ${at}`))
          const { result, statements } = await counted(() => store.flush(sid, list))
          // then
          expect(statements).toBe(0)
          expect(result).toEqual({ version: 8, appended: [], duplicates: picked.map((m) => m.id) })
        },
      ),
      { numRuns: 40 },
    )
  })
})
