import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { readCommittedEvents, START_CHECKPOINT, type Checkpoint, type PostgresStore, type Subscription } from '@turnlog/postgres'
import { sql } from 'kysely'
import { gate, usePrivateClusterStore } from './support/subscription-support.js'

// docs/subscriptions.md: a subscription delivers every event exactly once, in (txId, globalPosition)
// order, whatever order transactions commit in. The case that tells that order apart from
// global_position order (domain.md §1, last bullet): a transaction that takes its id first but appends
// and commits after others did. A reader ordered by global_position alone skips its events (batch size
// 1: the checkpoint has already passed its lower transaction id) or delivers the others twice (a batch
// that holds all of them ends on its key, and the others sort after it again).
//
// Postgres only: PGlite has one connection, so its transactions run one after another and the two
// orders always agree there (nothing to tell apart, nothing that can go wrong).

let store: PostgresStore

usePrivateClusterStore((opened) => (store = opened))

const msgs = (label: string, n: number): Message[] =>
  Array.from({ length: n }, (_, i) => createMessage({ role: 'user', content: `${label} ${i + 1}` }))

interface Seen {
  readonly messageId: string | null
  readonly txId: bigint
  readonly globalPosition: number
}

function record(name: string, from: 'now' | Checkpoint, batchSize: number): { sub: Subscription; seen: Seen[] } {
  const seen: Seen[] = []
  const sub = store.subscribe(
    { name, from },
    (e) => {
      seen.push({ messageId: e.messageId ?? null, txId: BigInt(e.txId), globalPosition: e.globalPosition })
    },
    { batchSize, pollIntervalMs: 50, heldBackPollIntervalMs: 20 },
  )
  return { sub, seen }
}

/**
 * The scenario: A takes its transaction id first (a read of `pg_current_xact_id()`, as any write
 * elsewhere would), B and C append and commit, then A appends and commits, then D. Returns the
 * message ids in (txId, globalPosition) order, which is A, B, C, D although A's positions are the
 * highest but D's.
 */
async function takeIdFirstCommitLast(): Promise<{ expected: string[]; a: Message[]; b: Message[] }> {
  const [sa, sb, sc, sd]: [SessionId, SessionId, SessionId, SessionId] = [
    await store.createSession(),
    await store.createSession(),
    await store.createSession(),
    await store.createSession(),
  ]
  const a = msgs('A: took its id first, commits last', 2)
  const b = msgs('B: appends and commits while A is open', 3)
  const c = msgs('C: appends and commits while A is open', 2)
  const d = msgs('D: after everything', 1)
  const tookId = gate()
  const goOn = gate()
  let aTx = 0n
  const txA = store.db.transaction().execute(async (trx) => {
    aTx = BigInt((await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(trx)).rows[0]!.xid)
    tookId.open()
    await goOn.wait
    await store.withTransaction(trx).append(sa, a)
  })
  await tookId.wait
  await store.append(sb, b)
  await store.append(sc, c)
  goOn.open()
  await txA
  await store.append(sd, d)

  // the two orders really differ here: A has the lowest transaction id but higher positions than B and C
  const { rows } = await sql<{ message_id: string; tx_id: string; global_position: string }>`
    select message_id::text as message_id, tx_id::text as tx_id, global_position from turnlog.events
     where message_id in (${sql.join([...a, ...b, ...c, ...d].map((m) => m.id))})
     order by events.tx_id, events.global_position`.execute(store.db)
  const expected = rows.map((r) => r.message_id)
  expect(expected).toEqual([...a, ...b, ...c, ...d].map((m) => m.id))
  expect(BigInt(rows[0]!.tx_id)).toBe(aTx)
  const byPosition = [...rows].sort((x, y) => Number(x.global_position) - Number(y.global_position)).map((r) => r.message_id)
  expect(byPosition).toEqual([...b, ...c, ...a, ...d].map((m) => m.id))
  return { expected, a, b }
}

describe('subscription order when transaction-id order and position order differ', () => {
  it.each([1, 2, 1000])(
    'a live subscriber (batch size %i) delivers every event exactly once, in (txId, globalPosition) order',
    async (batchSize) => {
      // given: a caught-up subscriber, and a replay subscriber that will start from the same checkpoint
      const live = record(`live-${batchSize}`, 'now', batchSize)
      const start = await live.sub.catchUp()

      // when: a transaction takes its id first and commits last
      const { expected, a, b } = await takeIdFirstCommitLast()

      // then: the live subscriber delivers each event once, A's first
      await live.sub.catchUp()
      expect(live.seen.map((e) => e.messageId)).toEqual(expected)
      expect(live.seen[0]!.txId).toBeLessThan(live.seen[a.length]!.txId)
      expect(live.seen[0]!.globalPosition).toBeGreaterThan(live.seen[a.length + b.length - 1]!.globalPosition)
      // and nothing more arrives later (a reader that re-reads past its checkpoint would repeat B, C, D)
      await new Promise((resolve) => setTimeout(resolve, 150))
      await live.sub.catchUp()
      expect(live.seen.map((e) => e.messageId)).toEqual(expected)
      await live.sub.stop()

      // when: a new subscriber replays the same stretch of the log after the fact
      const replay = record(`replay-${batchSize}`, start, batchSize)
      await replay.sub.catchUp()
      await new Promise((resolve) => setTimeout(resolve, 150))
      await replay.sub.catchUp()

      // then: the same events, once each, in the same order
      expect(replay.seen.map((e) => e.messageId)).toEqual(expected)
      await replay.sub.stop()
    },
  )

  it.each([1, 1000])('readCommittedEvents pages (limit %i) cover the stretch once each, in order', async (limit) => {
    // given
    const { rows } = await sql<{ tx_id: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as tx_id`.execute(store.db)
    const from: Checkpoint = { ...START_CHECKPOINT, txId: rows[0]!.tx_id }
    const { expected } = await takeIdFirstCommitLast()

    // when: paging from the checkpoint before the scenario to the end
    const read: string[] = []
    let after = from
    for (let page = 0; page < 100; page++) {
      const result = await readCommittedEvents(store.db, after, { limit })
      for (const e of result.events) read.push(e.messageId ?? '')
      if (result.last === null) break
      after = result.last
    }

    // then
    expect(read).toEqual(expected)
  })
})
