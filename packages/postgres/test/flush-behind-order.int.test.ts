/**
 * docs/guarantees.md ("Durability of what the runtime saw") and docs/architecture.md (the flush cache):
 * a flush that finds the log behind a version this store saw (a restore from an older backup, a
 * failover to a replica that missed commits) writes what the log lost **in the caller's list order**.
 *
 * The incident it reproduces: the flush used to send only the messages its cache did not know, found
 * the log behind from the result, and then checked the whole list again: the list's new messages were
 * already written, so the lost ones landed after them. A lost assistant tool call landed after its new
 * tool result (an orphan result, then an unanswered call: providers refuse such a list, every resume
 * failed). Now a flush of a session this store saw sends its new messages on the condition that the
 * log is still at the version this store last saw; a log found behind refuses it (nothing written) and
 * the flush checks the whole list and writes it in order. Here the stored order is compared with the
 * caller's list (load, transcript, the hash chain), and a driver hook counts the statements: the
 * common flush still sends one.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { createMessage, toolPairing, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, rollBackSession, turnlogRejection, type TestDatabase } from '@turnlog/testing'
import { logStatements, type LoggedStatement, type StatementLog } from './support/statement-log.js'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const toolCall = (callId: string): Message =>
  createMessage({
    role: 'assistant',
    content: '',
    tool_calls: [{ id: callId, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
  })
const toolResult = (callId: string): Message => createMessage({ role: 'tool', tool_call_id: callId, content: '{"ok":true}' })

const KINDS = ['group commit', 'groupCommit: false', 'directConnection'] as const
type Kind = (typeof KINDS)[number]

const stores = {} as Record<Kind, PostgresStore>
let db: TestDatabase | undefined
let log: StatementLog
beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  stores['group commit'] = await openStore({ connectionString: db.connectionString, migrate: false })
  stores['groupCommit: false'] = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
  stores.directConnection = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true })
  log = logStatements(db.name)
})
afterAll(async () => {
  log?.restore()
  for (const s of Object.values(stores)) await s.close()
  await db?.drop()
})

/** The append statements sent while `fn` ran. */
async function appendsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; sent: LoggedStatement[] }> {
  const before = log.statements.length
  const result = await fn()
  return { result, sent: log.statements.slice(before).filter((s) => /turnlog\.append_(messages|batches)\(/.test(s.text)) }
}

const ids = (messages: readonly Message[]): string[] => messages.map((m) => m.id)

/** The session as stored: the live list's ids, the transcript's ids in log order, pairing, chain. */
async function storedOrder(
  store: PostgresStore,
  sid: string,
): Promise<{ live: string[]; transcript: string[]; pairingOk: boolean; chainOk: boolean }> {
  const { messages } = await store.load(sid)
  const transcript = await store.transcript(sid)
  const pairing = toolPairing(messages)
  return {
    live: ids(messages),
    transcript: transcript.entries.map((e) => e.message.id),
    pairingOk: pairing.orphans.length === 0 && pairing.unanswered.length === 0,
    chainOk: (await verifyChain(store, sid)).ok,
  }
}

describe.each(KINDS)('a flush that finds the log behind what this store saw (%s)', (kind) => {
  it('a lost assistant tool call is written before its new tool result (the list order), never after it', async () => {
    // given: the store flushed a question and the assistant's tool call; a restore lost the call
    const store = stores[kind]
    const sid = await store.createSession()
    const [question, call] = [user('What is in README.md?'), toolCall(`call_${kind.length}`)]
    await store.flush(sid, [question, call])
    await rollBackSession(store, sid, 1)

    // when: the next flush after the tool ran
    const result = toolResult(`call_${kind.length}`)
    const live = [question, call, result]
    const flushed = await store.flush(sid, live)

    // then: stored in the list's order, the call before its result; the flush reports what it wrote
    expect(await storedOrder(store, sid)).toEqual({ live: ids(live), transcript: ids(live), pairingOk: true, chainOk: true })
    expect(flushed).toEqual({ version: 3, appended: [call.id, result.id], duplicates: [question.id] })
  })

  it('several lost messages and several new ones: the log holds the list, in order; the next flush sends nothing', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const [a, b, c] = [user('kept by the backup'), assistant('lost by the restore'), user('lost too')]
    await store.flush(sid, [a])
    await store.flush(sid, [a, b, c])
    await rollBackSession(store, sid, 1)

    // when
    const [d, e] = [assistant('new'), user('new too')]
    const live = [a, b, c, d, e]
    const flushed = await store.flush(sid, live)

    // then
    expect(await storedOrder(store, sid)).toEqual({ live: ids(live), transcript: ids(live), pairingOk: true, chainOk: true })
    expect(flushed).toEqual({ version: 5, appended: ids([b, c, d, e]), duplicates: [a.id] })
    const again = await appendsDuring(() => store.flush(sid, live))
    expect(again).toEqual({ result: { version: 5, appended: [], duplicates: ids(live) }, sent: [] })
  })

  it("with the caller's expectedVersion: the log's actual version writes the list in order; the version this store saw is refused, nothing written", async () => {
    // given
    const store = stores[kind]
    const other = stores[kind === 'group commit' ? 'directConnection' : 'group commit']
    const sid = await store.createSession()
    const [question, call] = [user('q'), toolCall('call_expected')]
    await store.flush(sid, [question, call])
    await rollBackSession(store, sid, 1)
    const live = [question, call, toolResult('call_expected')]

    // when: the version this store saw (2) is stale now
    const stale = await turnlogRejection(store.flush(sid, live, { expectedVersion: 2 }))

    // then
    expect([stale.code, stale.details['actualVersion']]).toEqual(['VERSION_CONFLICT', 1])
    // (read through another store: a load by this one would make it forget the session)
    expect((await other.load(sid)).version).toBe(1)

    // when: the log's version
    const flushed = await store.flush(sid, live, { expectedVersion: 1 })

    // then
    expect(flushed).toEqual({ version: 3, appended: ids(live.slice(1)), duplicates: [question.id] })
    expect(await storedOrder(store, sid)).toEqual({ live: ids(live), transcript: ids(live), pairingOk: true, chainOk: true })
  })

  it('the whole session lost (rolled back to version 0): the list is written as it stands', async () => {
    const store = stores[kind]
    const sid = await store.createSession()
    const first = [user('one'), toolCall('call_zero')]
    await store.flush(sid, first)
    await rollBackSession(store, sid, 0)

    const live = [...first, toolResult('call_zero'), assistant('done')]
    const flushed = await store.flush(sid, live)

    expect(flushed).toEqual({ version: 4, appended: ids(live), duplicates: [] })
    expect(await storedOrder(store, sid)).toEqual({ live: ids(live), transcript: ids(live), pairingOk: true, chainOk: true })
  })
})

describe.each(KINDS)('what the common flush sends (%s)', (kind) => {
  it('a new message of a session this store saw: one statement, carrying the version this store saw as its condition', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const list = [user('q'), assistant('a')]
    await store.flush(sid, list)

    // when
    const next = [...list, user('q2')]
    const { result, sent } = await appendsDuring(() => store.flush(sid, next))

    // then: one append_messages call, $2 (expected) = 2
    expect(result).toEqual({ version: 3, appended: [next[2]!.id], duplicates: ids(list) })
    expect(sent).toHaveLength(1)
    expect(sent[0]!.text).toContain('turnlog.append_messages(')
    expect(Number(sent[0]!.values[1])).toBe(2)
  })

  it('a session this store never saw: one statement, no condition', async () => {
    const store = stores[kind]
    const other = stores[kind === 'group commit' ? 'directConnection' : 'group commit']
    const sid = await other.createSession()
    const { result, sent } = await appendsDuring(() => store.flush(sid, [user('first')]))
    expect(result.version).toBe(1)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.values[1]).toBeNull()
  })

  it('another writer moved the log: the condition is refused, the messages are sent again without it and land after the other writer’s', async () => {
    // given
    const store = stores[kind]
    const other = stores[kind === 'group commit' ? 'directConnection' : 'group commit']
    const sid = await store.createSession()
    const mine = user('mine')
    await store.flush(sid, [mine])
    const theirs = user('theirs')
    await other.append(sid, [theirs])

    // when
    const next = assistant('my next')
    const { result, sent } = await appendsDuring(() => store.flush(sid, [mine, next]))

    // then: two statements (the refused one wrote nothing), the log is not treated as behind
    expect(result).toEqual({ version: 3, appended: [next.id], duplicates: [mine.id] })
    expect(sent.map((s) => (s.values[1] === null ? null : Number(s.values[1])))).toEqual([1, null])
    expect((await storedOrder(store, sid)).live).toEqual(ids([mine, theirs, next]))
    // and the next flush goes with the version it saw now, in one statement
    const after = await appendsDuring(() => store.flush(sid, [mine, next, user('later')]))
    expect(after.sent.map((s) => Number(s.values[1]))).toEqual([3])
  })

  it('concurrent flushes of one session by one store: the stored order is the list order, no whole-list re-check', async () => {
    // given
    const store = stores[kind]
    const sid = await store.createSession()
    const base = [user('start')]
    await store.flush(sid, base)
    const grown = [assistant('one'), user('two'), assistant('three'), user('four')]
    const lists = grown.map((_, i) => [...base, ...grown.slice(0, i + 1)])

    // when: every flush at once, each list the one before plus a message
    const { result, sent } = await appendsDuring(() => Promise.all(lists.map((l) => store.flush(sid, l))))

    // then
    expect(Math.max(...result.map((r) => r.version))).toBe(5)
    expect((await storedOrder(store, sid)).live).toEqual(ids([...base, ...grown]))
    // no statement carried the whole list again (a re-check would send `start` too)
    for (const s of sent) expect(JSON.stringify(s.values)).not.toContain(base[0]!.id)
    if (kind !== 'groupCommit: false') {
      // the group commit sends a session's next batch after the previous returned: no condition is refused
      expect(sent).toHaveLength(lists.length)
    }
  })
})

describe('a group of concurrent flushes, one session behind (append_batches)', () => {
  it('the behind session is written in its list order, the others commit in the group', async () => {
    // given: eight sessions flushed by one store, one of them rolled back behind it
    const store = stores['group commit']
    const sessions = await Promise.all(Array.from({ length: 8 }, () => store.createSession()))
    const lists = sessions.map((_, i) => [user(`q${i}`), toolCall(`call_g${i}`)])
    await Promise.all(sessions.map((sid, i) => store.flush(sid, lists[i]!)))
    await rollBackSession(store, sessions[3]!, 1)

    // when: each list with its tool result, at once
    const next = lists.map((l, i) => [...l, toolResult(`call_g${i}`)])
    const { result, sent } = await appendsDuring(() => Promise.all(sessions.map((sid, i) => store.flush(sid, next[i]!))))

    // then
    for (const [i, sid] of sessions.entries()) {
      expect(await storedOrder(store, sid)).toEqual({ live: ids(next[i]!), transcript: ids(next[i]!), pairingOk: true, chainOk: true })
      expect(result[i]).toEqual(
        i === 3
          ? { version: 3, appended: ids(next[i]!.slice(1)), duplicates: [next[i]![0]!.id] }
          : { version: 3, appended: [next[i]![2]!.id], duplicates: ids(lists[i]!) },
      )
    }
    expect(sent.some((s) => s.text.includes('turnlog.append_batches('))).toBe(true)
  })
})

describe('embedded (PGlite): the same order', () => {
  it('a lost tool call is written before its new tool result', async () => {
    const { store, close: closeStore } = await openTestStore('pglite')
    try {
      const sid = await store.createSession()
      const [question, call] = [user('q'), toolCall('call_pglite')]
      await store.flush(sid, [question, call])
      await rollBackSession(store, sid, 1)

      const live = [question, call, toolResult('call_pglite')]
      const flushed = await store.flush(sid, live)

      expect(flushed).toEqual({ version: 3, appended: ids(live.slice(1)), duplicates: [question.id] })
      expect(await storedOrder(store, sid)).toEqual({ live: ids(live), transcript: ids(live), pairingOk: true, chainOk: true })
    } finally {
      await closeStore()
    }
  })
})
