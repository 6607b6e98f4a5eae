import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore, SubscribedEvent, Subscription } from '@turnlog/postgres'
import { sql } from 'kysely'
import { gate, sleep, usePrivateClusterStore, waitFor } from './support/subscription-support.js'

// Commit order versus insertion order: the bigserial hazard (domain.md §1, last bullet) and the
// transactions that hold readers back.

let store: PostgresStore

usePrivateClusterStore((opened) => (store = opened))

const msg = (content: string): Message => createMessage({ role: 'user', content })
/** Subscribes with a recording handler; polling so slow that only notifications and held-back re-polls wake it. */
function record(name: string): { sub: Subscription; seen: SubscribedEvent[] } {
  const seen: SubscribedEvent[] = []
  const sub = store.subscribe(
    { name, from: 'now' },
    (e) => {
      seen.push(e)
    },
    { pollIntervalMs: 60_000 },
  )
  return { sub, seen }
}

describe('commit order', () => {
  it('delivers an earlier transaction with a lower position before a later one that committed first, skipping neither', async () => {
    // given: a caught-up subscriber
    const s1 = await store.createSession()
    const s2 = await store.createSession()
    const { sub, seen } = record('out-of-order')
    await sub.catchUp()
    const before = seen.length
    const m1 = msg('T1, lower position, commits last')
    const m2 = msg('T2, higher position, commits first')

    // when: T1 inserts (and so takes the lower global_position) and stays open ...
    const t1Inserted = gate()
    const t1Commit = gate()
    const t1 = store.db.transaction().execute(async (trx) => {
      await store.withTransaction(trx).append(s1, [m1])
      t1Inserted.open()
      await t1Commit.wait
    })
    await t1Inserted.wait
    // ... while T2 inserts and commits
    await store.append(s2, [m2])

    // then: a reader that follows global_position would already see T2's row past T1's gap
    const { rows: visible } = await sql<{ message_id: string; global_position: string }>`
      select message_id::text as message_id, global_position from turnlog.events where message_id in (${m1.id}, ${m2.id})`.execute(store.db)
    expect(visible.map((r) => r.message_id)).toEqual([m2.id])
    // and the subscriber holds T2's event back instead of delivering it past T1's
    await waitFor('the subscriber to see the held-back event', () => sub.heldBack)
    await sleep(200)
    expect(seen.length).toBe(before)
    const lag = await sub.lag()
    expect(lag.heldBack).toBe(1)
    expect(lag.visible).toBe(0)

    // when: T1 commits
    t1Commit.open()
    await t1

    // then: both arrive, T1's first, although its position is lower and it committed later
    await waitFor('both events', () => seen.length === before + 2)
    const [e1, e2] = seen.slice(before)
    expect(e1?.messageId).toBe(m1.id)
    expect(e2?.messageId).toBe(m2.id)
    expect(e1!.globalPosition).toBeLessThan(e2!.globalPosition)
    expect(BigInt(e1!.txId)).toBeLessThan(BigInt(e2!.txId))
    await sub.stop()
  })

  it.each(['commit', 'rollback'] as const)(
    'a long-open transaction delays delivery but loses nothing once it ends (%s)',
    async (outcome) => {
      // given: a caught-up subscriber
      const session = await store.createSession()
      const sibling = await store.createSession()
      const { sub, seen } = record(`long-open-${outcome}`)
      await sub.catchUp()

      // when: a transaction appends and stays open while 20 more events commit after it
      const early = msg(`early, ${outcome}`)
      const inserted = gate()
      const finish = gate()
      let pid = 0
      const open = store.db
        .transaction()
        .execute(async (trx) => {
          pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid
          await store.withTransaction(trx).append(session, [early])
          inserted.open()
          await finish.wait
          if (outcome === 'rollback') throw new Error('roll back')
        })
        .catch((error: unknown) => {
          if (!(error instanceof Error) || error.message !== 'roll back') throw error
        })
      await inserted.wait
      const later: Message[] = []
      for (let i = 0; i < 20; i++) {
        const m = msg(`later ${i}`)
        later.push(m)
        await store.append(sibling, [m])
      }

      // then: none of them is delivered while the transaction is open
      await waitFor('the subscriber to see held-back events', () => sub.heldBack)
      await sleep(300)
      expect(seen).toEqual([])
      const lag = await sub.lag()
      expect(lag.heldBack).toBe(20)
      expect(lag.visible).toBe(0)
      expect(lag.nextEventAgeMs).toBeGreaterThanOrEqual(300)
      // and the culprit is visible to monitoring
      const oldest = await store.oldestOpenTransaction({ scope: 'database' })
      expect(oldest?.pid).toBe(pid)
      expect(oldest?.state).toBe('idle in transaction')
      expect(oldest!.ageMs).toBeGreaterThanOrEqual(300)

      // when: it ends
      const ended = Date.now()
      finish.open()
      await open

      // then: everything after it arrives, in order (a rollback sends no notification: the held-back
      // re-poll finds them, long before the 60 s polling fallback), and a rolled-back event never
      const expected = [...(outcome === 'commit' ? [early] : []), ...later].map((m) => m.id)
      await waitFor('the held-back events', () => seen.length === expected.length, 5_000)
      expect(Date.now() - ended).toBeLessThan(2_000)
      await sub.catchUp()
      expect(seen.map((e) => e.messageId)).toEqual(expected)
      expect(await store.oldestOpenTransaction({ scope: 'database' })).toBeNull()
      await sub.stop()
    },
  )

  it("from 'now' under an older open transaction: events that committed after it began are delivered once it ends (documented)", async () => {
    // given: an open transaction that took its id, then an event that commits after it (a plain SELECT sees it)
    const session = await store.createSession()
    const tookId = gate()
    const finish = gate()
    const open = store.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx)
      tookId.open()
      await finish.wait
    })
    await tookId.wait
    const before = msg('committed before now, behind the open transaction')
    await store.append(session, [before])

    // when: a subscription starts from 'now', then the open transaction ends and one more event comes
    const { sub, seen } = record('now-behind-open')
    await waitFor('the subscriber to see the held-back event', () => sub.heldBack)
    finish.open()
    await open
    const after = msg('after now')
    await store.append(session, [after])

    // then: both arrive, in order: 'now' is the oldest open transaction's horizon, not the newest visible key
    await waitFor('both events', () => seen.length === 2, 5_000)
    expect(seen.map((e) => e.messageId)).toEqual([before.id, after.id])
    await sub.stop()
  })

  it('refuses an append whose transaction id predates a later append that committed first to the same session', async () => {
    // given: a transaction that took its id early (it wrote something else first)
    const session = await store.createSession()
    await store.append(session, [msg('seq 1')])
    const tookId = gate()
    const proceed = gate()
    const late = msg('appended by the later transaction')
    const early = msg('appended by the earlier transaction')
    const attempt = store.db.transaction().execute(async (trx) => {
      const other = await store.createSession()
      await store.withTransaction(trx).append(other, [msg('takes the transaction id')])
      tookId.open()
      await proceed.wait
      await store.withTransaction(trx).append(session, [early])
    })
    await tookId.wait
    // a later transaction appends to the session and commits first
    await store.append(session, [late])

    // when: the earlier one appends after it
    proceed.open()
    const error = await attempt.then(
      () => null,
      (e: unknown) => e,
    )

    // then: a serialization failure (retry), not an event that would be delivered before seq 2
    expect(isTurnlogError(error, 'DB_TRANSIENT')).toBe(true)
    expect((error as { details: { sqlState?: string } }).details.sqlState).toBe('40001')
    // and a retry in a new transaction succeeds, in order
    await store.append(session, [early])
    const { rows } = await sql<{ seq: string; message_id: string; tx_id: string }>`
      select seq, message_id::text as message_id, tx_id::text as tx_id from turnlog.events
       where session_id = ${session} order by events.tx_id, events.global_position`.execute(store.db)
    expect(rows.map((r) => Number(r.seq))).toEqual([1, 2, 3])
    expect(rows.map((r) => r.message_id).slice(1)).toEqual([late.id, early.id])
  })

  it('wakes on the commit notification, not the polling fallback', async () => {
    // given: a subscriber that would poll once a minute
    const session: SessionId = await store.createSession()
    const arrived = new Map<string, number>()
    const sub = store.subscribe(
      { name: 'latency', from: 'now', filter: { sessionId: session } },
      (e) => {
        arrived.set(e.messageId ?? '', performance.now())
      },
      { pollIntervalMs: 60_000 },
    )
    await sub.catchUp()

    // when: 100 appends commit one after another
    const latencies: number[] = []
    for (let i = 0; i < 100; i++) {
      const m = msg(`live ${i}`)
      await store.append(session, [m])
      const committed = performance.now()
      await waitFor(`event ${i}`, () => arrived.has(m.id), 5_000)
      latencies.push(arrived.get(m.id)! - committed)
      await sleep(2)
    }

    // then
    latencies.sort((a, b) => a - b)
    const p50 = latencies[49]!
    const p95 = latencies[94]!
    const max = latencies[99]!
    process.stdout.write(
      `[subscription] commit→handler latency over 100 appends: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${max.toFixed(1)} ms\n`,
    )
    expect(p95).toBeLessThan(500)
    await sub.stop()
  })
})
