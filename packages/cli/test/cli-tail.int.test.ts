/**
 * `turnlog tail`, run as the real binary against real Postgres while the test writes through a store:
 * lines in commit order, --limit, --session, SIGINT, the ephemeral subscription removed afterwards, and
 * a durable --name that resumes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { listSubscriptions, openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { runTurnlog } from './support/run-turnlog.js'
import { spawnTurnlog } from './support/spawn-turnlog.js'

interface TailedEvent {
  sessionId: string
  seq: number
  type: string
  messageId: string | null
  payload: { role: string; content?: unknown } | null
  txId: string
  globalPosition: number
}

let db: TestDatabase
let store: PostgresStore
let url: string

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  url = db.connectionString
  store = await openStore({ connectionString: url, migrate: false })
})

afterAll(async () => {
  await store?.close()
  await db?.drop()
})

const msg = (content: string): Message => createMessage({ role: 'user', content })
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const tailNames = async (): Promise<string[]> =>
  (await listSubscriptions(store)).map((s) => s.name).filter((n) => n.startsWith('turnlog-tail-'))

/** Waits until a tail's subscription has its checkpoint (with `--from now`: from here on, nothing is missed). */
async function waitForSubscription(find: () => Promise<boolean>, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await find())) {
    if (Date.now() > deadline) throw new Error(`the tail never subscribed; stderr:\n${stderr()}`)
    await sleep(20)
  }
}

const short = (id: string): string => id.slice(-8)

describe('turnlog tail', () => {
  let a: SessionId
  let b: SessionId

  it('--from now --json --limit 5 prints the next five events as JSONL in commit order, exits 0 and removes its subscription', async () => {
    // given: a session with an event from before the tail starts
    a = await store.createSession()
    await store.append(a, [msg('before the tail')])
    const tail = spawnTurnlog(['tail', '--database-url', url, '--from', 'now', '--json', '--limit', '5'])
    await waitForSubscription(async () => (await tailNames()).length === 1, tail.stderr)
    // when: six events in five transactions, across two sessions
    const [a1, a2, b1, b2, b3] = [msg('a1'), msg('a2'), msg('b1'), msg('b2'), msg('b3')] as [Message, Message, Message, Message, Message]
    await store.append(a, [a1, a2])
    b = await store.createSession()
    await store.append(b, [b1])
    await store.rewind(a, { after: a1.id })
    await store.append(b, [b2])
    await store.append(b, [b3]) // the sixth: past --limit
    const exit = await tail.exit()
    // then
    expect(exit.stderr).toBe('')
    expect(exit.code).toBe(0)
    const lines = exit.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(5)
    const events = lines.map((l) => JSON.parse(l) as TailedEvent)
    expect(events.map((e) => [e.sessionId, e.seq, e.type, e.messageId])).toEqual([
      [a, 2, 'message_appended', a1.id],
      [a, 3, 'message_appended', a2.id],
      [b, 1, 'message_appended', b1.id],
      [a, 4, 'messages_retracted', null],
      [b, 2, 'message_appended', b2.id],
    ])
    expect(events[0]?.payload).toEqual({ role: 'user', content: 'a1' })
    // commit order: the (txId, globalPosition) keys ascend
    for (let i = 1; i < events.length; i++) {
      const [prev, cur] = [events[i - 1] as TailedEvent, events[i] as TailedEvent]
      expect(BigInt(cur.txId) > BigInt(prev.txId) || (cur.txId === prev.txId && cur.globalPosition > prev.globalPosition)).toBe(true)
    }
    expect(await tailNames()).toEqual([])
  }, 90_000)

  it('--session follows one session in text mode and stops on SIGINT with exit 0', async () => {
    // given: session b has three events (b1, b2, b3); a has more
    const tail = spawnTurnlog(['tail', '--database-url', url, '--session', b, '--from', 'start'])
    const replayed = await tail.waitForLines(3)
    // when: one more event in each session, then Ctrl-C
    const b4 = msg('b4 with a\nnewline')
    await store.append(a, [msg('a3')])
    await store.append(b, [b4])
    const all = await tail.waitForLines(4)
    tail.child.kill('SIGINT')
    const exit = await tail.exit()
    // then: only b's events, one line each
    expect(exit.code).toBe(0)
    expect(replayed[0]).toMatch(new RegExp(`^…${short(b)}\\s+seq\\s+1\\s+message_appended\\s+…\\w{8}\\s+user\\s+"b1"$`))
    expect(all).toHaveLength(4)
    expect(all.every((l) => l.startsWith(`…${short(b)}`))).toBe(true)
    expect(all[3]).toContain(`…${short(b4.id)}`)
    expect(all[3]).toContain('"b4 with a⏎newline"')
    expect(exit.stdout.trimEnd().split('\n')).toHaveLength(4)
    expect(exit.stderr).toMatch(/following ephemeral subscription "turnlog-tail-[0-9a-f]+" from the start of the log; session /)
    expect(exit.stderr).toMatch(/stopped after 4 event\(s\) \(SIGINT\); subscription "turnlog-tail-[0-9a-f]+" removed/)
    expect(await tailNames()).toEqual([])
  }, 90_000)

  it('a durable --name resumes after the last event printed; bad options exit 2', async () => {
    // when: two runs of two events each over b's four events
    const args = [
      'tail',
      '--database-url',
      url,
      '--name',
      'tail-test',
      '--session',
      b,
      '--types',
      'message_appended',
      '--from',
      'start',
      '--json',
      '--limit',
      '2',
    ]
    const first = await runTurnlog(args, { timeoutMs: 15_000 })
    const second = await runTurnlog(args, { timeoutMs: 15_000 })
    const badType = await runTurnlog(['tail', '--database-url', url, '--types', 'message_appended,nope'])
    const badSession = await runTurnlog(['tail', '--database-url', url, '--session', 'not-a-uuid', '--json'])
    // then
    expect([first.code, second.code]).toEqual([0, 0])
    const seqs = (run: { stdout: string }): number[] =>
      run.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as TailedEvent).seq)
    expect(seqs(first)).toEqual([1, 2])
    expect(seqs(second)).toEqual([3, 4])
    expect((await listSubscriptions(store)).find((s) => s.name === 'tail-test')).toMatchObject({ active: false, delivered: 4 })
    expect(badType.code).toBe(2)
    expect(badType.stderr).toMatch(/unknown event type in --types: nope/)
    expect(badSession.code).toBe(2)
    expect(badSession.json<{ error: { code: string } }>().error.code).toBe('INVALID_INPUT')
  }, 90_000)
})
