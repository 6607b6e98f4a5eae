import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type TurnlogError } from '@turnlog/core'
import {
  LAG_COUNT_CAP,
  dropSubscription,
  listSubscriptions,
  openStore,
  readCommittedEvents,
  rebaseAfterRestore,
  rebaseSubscription,
  type Checkpoint,
  type PostgresStore,
  type SubscribedEvent,
  type Subscription,
} from '@turnlog/postgres'
import { createTestDatabase, findPostgresBinDir, migrateByOpening } from '@turnlog/testing'
import { sql } from 'kysely'
import pg from 'pg'
import {
  gate,
  sessionWith,
  sleep,
  subscribeRecordingSeqs,
  usePrivateClusterStore,
  waitFor as waitUntil,
} from './support/subscription-support.js'

// The promises of docs/subscriptions.md that no other test guarded: stop() mid-call and mid-retry, the
// default attempts and the back-off's argument, skipping a poison event, one checkpoint write per batch,
// `from` on an existing name, catchUp and held-back events, catchUp and the lock, lag() ignoring the
// filter and its cap, reconnect: false, re-taking the lock after a broken connection, store.close(),
// handler calls never concurrent, a transactional batch cut by a lost connection, a projection through
// store.withTransaction(context.transaction), application_name, notifications only under a live lease,
// a consumer's client of the caller's pg.Pool destroyed on stop, the cluster-wide oldest open
// transaction, readCommittedEvents' limit counting scanned rows, names (length in characters, drop,
// hashtext collisions), { kysely } stores, tenant and reader logins, rebaseAfterRestore while a consumer
// runs and forced, a back-off that is not a number. A private server: another test file's open
// transaction would hold delivery back.

let store: PostgresStore
let adminUrl: string | undefined
let connectionString: string

usePrivateClusterStore((opened, url, conn) => {
  store = opened
  adminUrl = url
  connectionString = conn
})

const msg = (content: string): Message => createMessage({ role: 'user', content })
const waitFor = (what: string, predicate: () => boolean | Promise<boolean>, subscriptions: readonly Subscription[] = []): Promise<void> =>
  waitUntil(what, predicate, 30_000, store, subscriptions)

/** The log key of the `message_appended` event of `messageId`. */
async function keyOf(messageId: string): Promise<Checkpoint> {
  const { rows } = await sql<{ tx_id: string; global_position: string }>`
    select tx_id::text as tx_id, global_position from turnlog.events where message_id = ${messageId} and type = 'message_appended'`.execute(
    store.db,
  )
  return { txId: rows[0]!.tx_id, globalPosition: Number(rows[0]!.global_position) }
}

/** The key just before an event's: a checkpoint from which that event is the next one. */
const justBefore = (key: Checkpoint): Checkpoint => ({ txId: key.txId, globalPosition: key.globalPosition - 1 })

async function storedCheckpoint(name: string): Promise<Checkpoint | undefined> {
  return (await listSubscriptions(store)).find((s) => s.name === name)?.checkpoint
}

const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  )

describe('stop()', () => {
  it.each([false, true])(
    'during a handler call finishes it, commits its checkpoint, and leaves no duplicate (transactional: %s)',
    async (transactional) => {
      // given: five events and a handler that blocks on the third
      const { session, messages } = await sessionWith(store, 5)
      const name = `stop-mid-call-${transactional}`
      const entered = gate()
      const release = gate()
      const seen: number[] = []
      const sub = store.subscribe(
        { name, filter: { sessionId: session } },
        async (e) => {
          seen.push(e.seq)
          if (e.seq === 3) {
            entered.open()
            await release.wait
          }
        },
        { transactional },
      )
      await entered.wait

      // when: stop() is called while the handler runs, and the handler then returns
      const stopped = sub.stop()
      release.open()
      await stopped

      // then: the call finished and its checkpoint committed; nothing after it was started
      expect(sub.state).toBe('stopped')
      await expect(sub.done).resolves.toBeUndefined()
      expect(seen).toEqual([1, 2, 3])
      expect(sub.delivered).toBe(3)
      expect(await storedCheckpoint(name)).toEqual(await keyOf(messages[2]!.id))
      // and the next consumer of the name starts after it: no duplicate
      const { sub: next, seen: rest } = subscribeRecordingSeqs(store, { name, filter: { sessionId: session } })
      await next.catchUp()
      expect(rest).toEqual([4, 5])
      await next.stop()
    },
  )

  it('during a pending retry abandons it: done resolves, the checkpoint stays before the failing event', async () => {
    // given: a handler that fails on event 2, with a one-minute back-off
    const { session, messages } = await sessionWith(store, 3)
    const calls: string[] = []
    const errors: TurnlogError[] = []
    const backingOff = gate()
    const sub = store.subscribe(
      { name: 'stop-mid-retry', filter: { sessionId: session } },
      (e, context) => {
        calls.push(`${e.seq}#${context.attempt}`)
        if (e.seq === 2) throw new Error('fails')
      },
      {
        backoff: () => {
          backingOff.open()
          return 60_000
        },
        onError: (e) => errors.push(e),
      },
    )
    // (the back-off is asked right before the consumer starts waiting)
    await backingOff.wait

    // when
    await sub.stop()

    // then: stopped (not failed), the retry never ran, event 1 checkpointed and event 2 not
    expect(sub.state).toBe('stopped')
    expect(sub.error).toBeNull()
    expect(errors).toEqual([])
    await expect(sub.done).resolves.toBeUndefined()
    expect(calls).toEqual(['1#1', '2#1'])
    expect(await storedCheckpoint('stop-mid-retry')).toEqual(await keyOf(messages[0]!.id))
    // and stop() again still resolves
    await expect(sub.stop()).resolves.toBeUndefined()
  })
})

describe('failures', () => {
  it('default maxAttempts is 5, the back-off gets attempts 1..4; details.checkpoint is the stored one; rebase toCheckpoint: failedEvent skips it', async () => {
    // given: a handler that always fails on event 2, a back-off that records its argument
    const { session, messages } = await sessionWith(store, 4)
    const name = 'poison'
    const attempts: number[] = []
    const backoffs: number[] = []
    const sub = store.subscribe(
      { name, filter: { sessionId: session } },
      (e, context) => {
        if (e.seq !== 2) return
        attempts.push(context.attempt)
        throw new Error('poison event')
      },
      {
        backoff: (attempt) => {
          backoffs.push(attempt)
          return 1
        },
      },
    )

    // when
    const error = (await rejection(sub.done)) as TurnlogError

    // then: five calls, four back-offs, the checkpoint before the failing event in the error and in the table
    expect(isTurnlogError(error, 'SUBSCRIPTION_FAILED')).toBe(true)
    expect(attempts).toEqual([1, 2, 3, 4, 5])
    expect(backoffs).toEqual([1, 2, 3, 4])
    const first = await keyOf(messages[0]!.id)
    expect(error.details).toMatchObject({ attempts: 5, checkpoint: first })
    expect(await storedCheckpoint(name)).toEqual(first)
    const failedEvent = (error.details as { failedEvent: Checkpoint & { seq: number } }).failedEvent
    expect(failedEvent).toMatchObject({ ...(await keyOf(messages[1]!.id)), seq: 2 })

    // when: skipping the poison event is decided explicitly, as documented
    await rebaseSubscription(store, name, { toCheckpoint: failedEvent })
    const { sub: resumed, seen } = subscribeRecordingSeqs(store, { name, filter: { sessionId: session } })
    await resumed.catchUp()

    // then: delivery resumes after it
    expect(seen).toEqual([3, 4])
    await resumed.stop()
  })

  it.each([
    ['a numeric string', '600000'],
    ['a bigint', 600_000n],
  ])('a back-off that returns something other than a number (%s) means no delay', async (_what, delay) => {
    // given: a handler that always fails, and a back-off that answers with a non-number worth ten minutes
    const { session } = await sessionWith(store, 1)
    const calls: number[] = []
    const sub = store.subscribe(
      { name: `backoff-not-a-number-${typeof delay}`, filter: { sessionId: session } },
      (_e, context) => {
        calls.push(context.attempt)
        throw new Error('always')
      },
      { maxAttempts: 3, backoff: (() => delay) as unknown as () => number },
    )

    // when / then: the retries follow at once and it fails (a ten-minute wait would outlast the test);
    // the 20 s timer is cleared after the race, or it would hold the jest worker open that long
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), 20_000)))
    const stopped = await Promise.race([rejection(sub.done), deadline]).finally(() => clearTimeout(timer))
    expect(stopped).toMatchObject({ code: 'SUBSCRIPTION_FAILED' })
    expect(calls).toEqual([1, 2, 3])
    await sub.stop()
  })
})

describe('checkpoints and from', () => {
  it('from a checkpoint delivers what follows it; the checkpoint commits once per batch; from is ignored once the name exists', async () => {
    // given: seven events, one per transaction, and nothing else written after the first
    const { session, messages } = await sessionWith(store, 7)
    const name = 'batches'
    const start = await keyOf(messages[0]!.id)
    const observed: { seq: number; stored: Checkpoint | undefined }[] = []

    // when: a consumer starts from the first event's key with batches of 3 rows, and each handler call
    // looks at the stored checkpoint
    const sub = store.subscribe(
      { name, from: start },
      async (e) => {
        expect(e.sessionId).toBe(session)
        observed.push({ seq: e.seq, stored: await storedCheckpoint(name) })
      },
      { batchSize: 3 },
    )
    await sub.catchUp()
    await sub.stop()

    // then: events 2..7; during a batch the stored checkpoint is still the previous batch's end
    const fourth = await keyOf(messages[3]!.id)
    expect(observed).toEqual([
      { seq: 2, stored: start },
      { seq: 3, stored: start },
      { seq: 4, stored: start },
      { seq: 5, stored: fourth },
      { seq: 6, stored: fourth },
      { seq: 7, stored: fourth },
    ])
    expect(await storedCheckpoint(name)).toEqual(await keyOf(messages[6]!.id))

    // when: an eighth event, then the name subscribed again with a from that would skip it or replay all
    await store.append(session, [msg('message 8')])
    for (const from of ['now', 'start'] as const) {
      const seen: number[] = []
      const again = store.subscribe({ name, from, filter: { sessionId: session } }, (e) => {
        seen.push(e.seq)
      })
      await again.catchUp()
      await again.stop()
      // then: the stored checkpoint wins: event 8 once (the first time), nothing replayed
      expect(seen).toEqual(from === 'now' ? [8] : [])
    }
  })
})

describe('catchUp', () => {
  it('waits for committed events held back by an open transaction', async () => {
    // given: a caught-up consumer
    const s1 = await store.createSession()
    const s2 = await store.createSession()
    const seen: string[] = []
    const sub = store.subscribe({ name: 'catch-up-held-back', from: 'now' }, (e) => {
      seen.push(e.messageId ?? '')
    })
    await sub.catchUp()
    // and T1 appended and stays open while T2 appends and commits
    const m1 = msg('T1')
    const m2 = msg('T2')
    const inserted = gate()
    const finish = gate()
    const t1 = store.db.transaction().execute(async (trx) => {
      await store.withTransaction(trx).append(s1, [m1])
      inserted.open()
      await finish.wait
    })
    await inserted.wait
    await store.append(s2, [m2])

    // when: catchUp is called
    let settled = false
    const caughtUp = sub.catchUp().then((c) => {
      settled = true
      return c
    })

    // then: it does not resolve while T2's event is held back
    await waitFor('the consumer to see the held-back event', () => sub.heldBack, [sub])
    await sleep(300)
    expect(settled).toBe(false)
    expect(seen).toEqual([])

    // when: T1 commits
    finish.open()
    await t1

    // then: it resolves with both delivered, T1's first
    const checkpoint = await caughtUp
    expect(seen).toEqual([m1.id, m2.id])
    expect(checkpoint).toEqual(await keyOf(m2.id))
    await sub.stop()
  })

  it('a waiting consumer: checkpoint null, lag from the stored checkpoint, catchUp waits for the lock, SUBSCRIPTION_STOPPED after stop()', async () => {
    // given: a holder, and two consumers waiting for the name
    const { session } = await sessionWith(store, 1)
    const name = 'waiters'
    // (the holder polls once a minute without LISTEN: it will not take the event meant for the taker)
    const holder = store.subscribe({ name, filter: { sessionId: session } }, () => {}, { listen: false, pollIntervalMs: 60_000 })
    await holder.catchUp()
    const stopped = store.subscribe({ name, filter: { sessionId: session } }, () => {}, { lockRetryMs: 20 })
    const { sub: taker, seen } = subscribeRecordingSeqs(store, { name, filter: { sessionId: session } }, { lockRetryMs: 20 })
    await waitFor('both waiting', () => stopped.state === 'waiting' && taker.state === 'waiting', [stopped, taker])

    // then: no checkpoint of their own; lag() measures from the stored one
    expect(stopped.checkpoint).toBeNull()
    expect((await stopped.lag()).checkpoint).toEqual(holder.checkpoint)

    // when: one is stopped while its catchUp waits
    const pending = stopped.catchUp()
    await stopped.stop()

    // then: the catch-up rejects with SUBSCRIPTION_STOPPED, and so does a later one
    expect(await rejection(pending)).toMatchObject({ code: 'SUBSCRIPTION_STOPPED' })
    expect(await rejection(stopped.catchUp())).toMatchObject({ code: 'SUBSCRIPTION_STOPPED' })
    await expect(stopped.done).resolves.toBeUndefined()

    // when: the other's catchUp is pending, an event commits, and the holder stops
    let settled = false
    const caughtUp = taker.catchUp().then(() => (settled = true))
    await store.append(session, [msg('for the taker')])
    await sleep(200)
    expect(settled).toBe(false)
    await holder.stop()

    // then: it takes the name and catches up with the event
    await caughtUp
    expect(seen).toEqual([2])
    await taker.stop()
  })
})

describe('lag', () => {
  it('counts ignore the filter; nextEventAgeMs is null when nothing is left', async () => {
    // given: a caught-up consumer of session a, stopped
    const a = await store.createSession()
    const b = await store.createSession()
    const sub = store.subscribe({ name: 'lag-filter', from: 'now', filter: { sessionId: a } }, () => {})
    await sub.catchUp()
    await sub.stop()
    const idle = await sub.lag()
    expect(idle).toMatchObject({ visible: 0, heldBack: 0, capped: false, nextEventAgeMs: null })

    // when: three events of b and one of a commit
    for (let i = 0; i < 3; i++) await store.append(b, [msg(`b ${i}`)])
    await store.append(a, [msg('a')])

    // then: all four count, although the filter would deliver one
    const lag = await sub.lag()
    expect(lag).toMatchObject({ visible: 4, heldBack: 0, capped: false })
    expect(lag.nextEventAgeMs).toEqual(expect.any(Number))
  })
})

describe('connections', () => {
  it("reconnect: false fails with DB_TRANSIENT when the connection is terminated; it shows as 'turnlog subscription <name>'", async () => {
    // given: a running consumer
    const name = 'no-reconnect'
    const sub = store.subscribe({ name, from: 'now' }, () => {}, { reconnect: false })
    await sub.catchUp()
    const pid = (await listSubscriptions(store)).find((s) => s.name === name)?.holderPid
    expect(pid).toEqual(expect.any(Number))
    const { rows } = await sql<{ application_name: string }>`
      select application_name from pg_stat_activity where pid = ${pid}::int`.execute(store.db)
    expect(rows.map((r) => r.application_name)).toEqual([`turnlog subscription ${name}`])

    // when: the server ends its session
    await sql`select pg_terminate_backend(${pid}::int, 5000)`.execute(store.db)

    // then: it fails instead of reconnecting, and the name is free
    expect(await rejection(sub.done)).toMatchObject({ code: 'DB_TRANSIENT' })
    expect(sub.state).toBe('failed')
    expect((await listSubscriptions(store)).find((s) => s.name === name)?.active).toBe(false)
  })

  it('after its connection breaks, a consumer re-takes the lock or finds the name taken over; nothing is delivered twice', async () => {
    // given: a running consumer and one waiting for the name, both recording
    const session = await store.createSession()
    const seen: string[] = []
    const record = (who: string) => (e: SubscribedEvent) => {
      seen.push(`${who}:${e.seq}`)
    }
    const name = 'takeover-on-reconnect'
    const first = store.subscribe({ name, from: 'now', filter: { sessionId: session } }, record('first'), { lockRetryMs: 20 })
    await first.catchUp()
    const second = store.subscribe({ name, from: 'now', filter: { sessionId: session } }, record('second'), { lockRetryMs: 20 })
    await waitFor('the second waiting', () => second.state === 'waiting', [second])
    await store.append(session, [msg('before')])
    await waitFor('the first event', () => seen.length === 1, [first, second])

    // when: the holder's connection is terminated, and more events come
    const pid = (await listSubscriptions(store)).find((s) => s.name === name)?.holderPid
    await sql`select pg_terminate_backend(${pid}::int, 5000)`.execute(store.db)
    for (let i = 0; i < 3; i++) await store.append(session, [msg(`after ${i}`)])

    // then: one of them runs, the other waits (whichever took the lock), and each event arrives once, in order
    await waitFor('all four', () => seen.length >= 4, [first, second])
    await waitFor('one running, one waiting', () => [first.state, second.state].sort().join() === 'running,waiting', [first, second])
    expect(seen.map((s) => Number(s.split(':')[1]))).toEqual([1, 2, 3, 4])
    expect(seen[0]).toBe('first:1')
    await first.stop()
    await second.stop()
    expect(seen).toHaveLength(4)
  })

  it("store.close() stops the store's subscriptions and releases their names", async () => {
    // given: a second store with a running consumer
    const other = await openStore({ connectionString, migrate: false })
    const sub = other.subscribe({ name: 'closed-with-store', from: 'now' }, () => {})
    await sub.catchUp()
    expect((await listSubscriptions(store)).find((s) => s.name === 'closed-with-store')?.active).toBe(true)

    // when
    await other.close()

    // then
    expect(sub.state).toBe('stopped')
    await expect(sub.done).resolves.toBeUndefined()
    expect((await listSubscriptions(store)).find((s) => s.name === 'closed-with-store')?.active).toBe(false)
  })

  it("a store on the caller's pg.Pool: the consumer's client is destroyed on stop, never returned with its lock", async () => {
    // given: a store on a pool of the caller's, and a consumer on it
    // (idle clients are never closed by the pool: only destroying the consumer's ends its backend)
    const pool = new pg.Pool({ connectionString, max: 3, idleTimeoutMillis: 0 })
    const pooled = await openStore({ pool, migrate: false })
    try {
      const sub = pooled.subscribe({ name: 'on-a-pool', from: 'now' }, () => {})
      await sub.catchUp()
      const pid = (await listSubscriptions(store)).find((s) => s.name === 'on-a-pool')?.holderPid

      // when
      await sub.stop()

      // then: its backend ended and the name is free (a client back in the pool would still hold the lock)
      await waitFor('the backend to end', async () => {
        const { rows } = await sql<{ n: string }>`select count(*)::text as n from pg_stat_activity where pid = ${pid}::int`.execute(
          store.db,
        )
        return rows[0]?.n === '0'
      })
      expect((await listSubscriptions(store)).find((s) => s.name === 'on-a-pool')?.active).toBe(false)
    } finally {
      await pooled.close()
      await pool.end()
    }
  })

  it('transactional: a connection lost before the batch commits rolls back the projection with the checkpoint; redelivery writes it once, with attempt 2', async () => {
    // given: a projection without a key (a duplicate would show), three events per batch
    await sql`create table projection_log (seq int not null)`.execute(store.db)
    const { session, messages } = await sessionWith(store, 4)
    const name = 'crash-mid-batch'
    const calls: string[] = []
    let killed = false
    const sub = store.subscribe(
      { name, from: justBefore(await keyOf(messages[0]!.id)), filter: { sessionId: session } },
      async (e, context) => {
        calls.push(`${e.seq}#${context.attempt}`)
        await sql`insert into projection_log (seq) values (${e.seq})`.execute(context.transaction!)
        if (e.seq === 3 && !killed) {
          // when: the consumer's connection is terminated after the batch's last handler call, before its commit
          killed = true
          const pid = (await listSubscriptions(store)).find((s) => s.name === name)?.holderPid
          await sql`select pg_terminate_backend(${pid}::int, 5000)`.execute(store.db)
        }
      },
      { transactional: true, batchSize: 3 },
    )
    await waitFor(
      'all four',
      async () => (await storedCheckpoint(name))?.globalPosition === (await keyOf(messages[3]!.id)).globalPosition,
      [sub],
    )

    // then: the first batch was handed over again (at most one batch), each call of it counted as a second
    // attempt, and the projection holds each event once
    expect(calls).toEqual(['1#1', '2#1', '3#1', '1#2', '2#2', '3#2', '4#1'])
    const { rows } = await sql<{ seq: number }>`select seq from projection_log order by seq`.execute(store.db)
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4])
    expect(sub.state).toBe('running')
    await sub.stop()
  })
})

describe('transactional handlers', () => {
  it('store.withTransaction(context.transaction) writes with the checkpoint: a failed call leaves nothing, the successful ones once', async () => {
    // given: a projection written as appends to a session of its own, through the store bound to the batch's transaction
    const { session } = await sessionWith(store, 3)
    const projection = await store.createSession()
    let failures = 0
    const sub = store.subscribe(
      { name: 'projection-through-store', filter: { sessionId: session } },
      async (e, context) => {
        await store.withTransaction(context.transaction!).append(projection, [msg(`projected ${e.seq}`)])
        if (e.seq === 2 && failures < 1) {
          failures++
          throw new Error('fails after writing')
        }
      },
      { transactional: true, backoff: () => 1 },
    )

    // when
    await sub.catchUp()
    await sub.stop()

    // then: each event projected once, in order; the failed call's append rolled back with its batch
    const { messages: live } = await store.load(projection)
    expect(live.map((m) => (m.payload as { content: string }).content)).toEqual(['projected 1', 'projected 2', 'projected 3'])
  })
})

describe('handler calls', () => {
  it('are never concurrent, even when events commit while a call is running', async () => {
    // given: a slow handler
    const session = await store.createSession()
    let inFlight = 0
    let maxInFlight = 0
    const seen: number[] = []
    const sub = store.subscribe(
      { name: 'never-concurrent', from: 'now', filter: { sessionId: session } },
      async (e) => {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        await sleep(15)
        seen.push(e.seq)
        inFlight--
      },
      { batchSize: 1 },
    )
    await sub.catchUp()

    // when: ten events commit, each notifying the consumer while it is busy
    for (let i = 1; i <= 10; i++) await store.append(session, [msg(`event ${i}`)])
    await waitFor('ten events', () => seen.length === 10, [sub])

    // then
    expect(maxInFlight).toBe(1)
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    await sub.stop()
  })
})

describe('notifications', () => {
  it("are sent only while a consumer holds a live listening lease, and never with turnlog.notify = 'off'", async () => {
    // given: a listener of its own, and no live lease (earlier consumers' leases ended)
    const listener = new pg.Client({ connectionString })
    await listener.connect()
    let notes = 0
    listener.on('notification', () => notes++)
    await listener.query('listen turnlog_events')
    await sql`update turnlog.subscriptions set listening_until = null`.execute(store.db)
    const session = await store.createSession()
    try {
      // when: an append commits with no consumer listening
      await store.append(session, [msg('nobody listens')])
      await sleep(100)
      await listener.query('select 1')
      // then: no notification
      expect(notes).toBe(0)

      // when: a listening consumer runs (it renews its lease before it idles)
      const sub = store.subscribe({ name: 'lease', from: 'now' }, () => {}, { pollIntervalMs: 60_000 })
      await sub.catchUp()
      await waitFor('the lease', async () => {
        const { rows } = await sql<{ live: boolean }>`
          select listening_until > now() as live from turnlog.subscriptions where name = 'lease'`.execute(store.db)
        return rows[0]?.live === true
      })
      await store.append(session, [msg('someone listens')])
      // then: a notification arrives
      await waitFor('a notification', () => notes === 1)

      // when: a writer turns notifications off for its transaction
      await store.db.transaction().execute(async (trx) => {
        await sql`select set_config('turnlog.notify', 'off', true)`.execute(trx)
        await store.withTransaction(trx).append(session, [msg('quietly')])
      })
      await sleep(100)
      await listener.query('select 1')
      // then: none, although the consumer still listens
      expect(notes).toBe(1)
      await sub.stop()
    } finally {
      await listener.end()
    }
  })
})

describe('monitoring', () => {
  // needs a second database of a server of the file's own: skipped (and shown so) without the binaries
  const onPrivateServer = findPostgresBinDir() === undefined ? it.skip : it
  onPrivateServer('oldestOpenTransaction is cluster-wide by default; scope database sees only this database', async () => {
    if (adminUrl === undefined) throw new Error('the private server did not start')
    // given: a transaction with an id, open in another database of the cluster
    const other = new pg.Client({ connectionString: adminUrl, application_name: 'elsewhere' })
    await other.connect()
    try {
      await other.query('begin')
      const { rows } = await other.query<{ xid: string; pid: number; db: string }>(
        'select pg_current_xact_id()::text as xid, pg_backend_pid() as pid, current_database() as db',
      )
      const open = rows[0]!

      // when
      const cluster = await store.oldestOpenTransaction()
      const here = await store.oldestOpenTransaction({ scope: 'database' })

      // then
      expect(cluster).toMatchObject({
        pid: open.pid,
        xid: open.xid,
        database: open.db,
        state: 'idle in transaction',
        applicationName: 'elsewhere',
      })
      expect(here).toBeNull()
      await other.query('commit')
      expect(await store.oldestOpenTransaction()).toBeNull()
    } finally {
      await other.end()
    }
  })
})

describe('readCommittedEvents', () => {
  it('limit counts scanned rows, matching or not; last moves past the skipped ones', async () => {
    // given: a1, b1, b2, a2, one transaction each
    const a = await store.createSession()
    const b = await store.createSession()
    const [a1, b1, b2, a2] = [msg('a1'), msg('b1'), msg('b2'), msg('a2')]
    await store.append(a, [a1])
    await store.append(b, [b1])
    await store.append(b, [b2])
    await store.append(a, [a2])
    const filter = { sessionId: a }

    // when: pages of two rows, only a's events wanted
    const p1 = await readCommittedEvents(store.db, justBefore(await keyOf(a1.id)), { limit: 2, filter })
    const p2 = await readCommittedEvents(store.db, p1.last!, { limit: 2, filter })
    const p3 = await readCommittedEvents(store.db, p2.last!, { limit: 2, filter })

    // then
    const ids = (events: readonly SubscribedEvent[]): (string | null)[] => events.map((e) => e.messageId)
    expect([p1.scanned, ids(p1.events), p1.last]).toEqual([2, [a1.id], await keyOf(b1.id)])
    expect([p2.scanned, ids(p2.events), p2.last]).toEqual([2, [a2.id], await keyOf(a2.id)])
    expect([p3.scanned, p3.events, p3.last]).toEqual([0, [], null])
  })
})

describe('names', () => {
  it('a name has 1 to 200 characters, counted as characters (code points), not UTF-16 units', async () => {
    // given: names of 200 and 201 characters outside the BMP (two UTF-16 units each)
    const longest = '\u{1F600}'.repeat(200)
    const tooLong = '\u{1F600}'.repeat(201)

    // when / then: 201 characters are refused before anything starts; 200 run and are stored as given
    expect(() => store.subscribe({ name: tooLong }, () => {})).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    expect(() => store.subscribe({ name: '' }, () => {})).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    const sub = store.subscribe({ name: longest, from: 'now' }, () => {})
    await sub.catchUp()
    await sub.stop()
    expect((await listSubscriptions(store)).map((s) => s.name)).toContain(longest)
  })

  it('a dropped name starts afresh from its from', async () => {
    // given: a name that consumed a session's events, dropped
    const { session } = await sessionWith(store, 2)
    const first = subscribeRecordingSeqs(store, { name: 'dropped', filter: { sessionId: session } })
    await first.sub.catchUp()
    await first.sub.stop()
    expect(await dropSubscription(store, 'dropped')).toBe(true)

    // when: subscribed again from the start
    const { sub, seen } = subscribeRecordingSeqs(store, { name: 'dropped', from: 'start', filter: { sessionId: session } })
    await sub.catchUp()

    // then: everything again
    expect(first.seen).toEqual([1, 2])
    expect(seen).toEqual([1, 2])
    await sub.stop()
  })

  it('two names with the same hashtext share a lock: one waits for the other', async () => {
    // given: two names with the same hashtext (found by the server itself)
    const { rows } = await sql<{ names: string[] }>`
      select array_agg(n order by n) as names
        from (select 'collide-' || i as n from generate_series(1, 300000) i) t
       group by hashtext(n) having count(*) > 1 limit 1`.execute(store.db)
    const [one, two] = rows[0]!.names as [string, string]
    const holder = store.subscribe({ name: one, from: 'now' }, () => {})
    await holder.catchUp()

    // when: the other name is subscribed without waiting, then with waiting
    const refused = store.subscribe({ name: two, from: 'now' }, () => {}, { waitForLock: false })
    const waiting = store.subscribe({ name: two, from: 'now' }, () => {}, { lockRetryMs: 20 })

    // then: refused, and waiting until the holder of the other name stops
    expect(await rejection(refused.done)).toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    await waitFor('waiting', () => waiting.state === 'waiting', [waiting])
    await holder.stop()
    await waiting.catchUp()
    expect(waiting.state).toBe('running')
    await waiting.stop()
  })

  it('a store opened with { kysely } needs a connectionString for its consumers', async () => {
    // given: a store on the caller's Kysely
    const wrapped = await openStore({ kysely: store.db, migrate: false })
    try {
      // when / then: without a connection of its own the consumer ends with INVALID_INPUT and stores nothing
      const without = wrapped.subscribe({ name: 'kysely-store', from: 'now' }, () => {})
      expect(await rejection(without.done)).toMatchObject({ code: 'INVALID_INPUT' })
      expect((await listSubscriptions(store)).map((s) => s.name)).not.toContain('kysely-store')
      // and with one it runs
      const withOwn = wrapped.subscribe({ name: 'kysely-store', from: 'now' }, () => {}, { connectionString })
      await withOwn.catchUp()
      expect((await listSubscriptions(store)).find((s) => s.name === 'kysely-store')?.active).toBe(true)
      await withOwn.stop()
    } finally {
      await wrapped.close()
    }
  })
})

describe('roles and row security', () => {
  it("a tenant's consumer delivers only its tenant's events; turnlog_reader can list and measure lag but not consume", async () => {
    // given: a tenant login, a reader login, and one session per tenant
    const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(store.db)
    const suffix = rows[0]!.db.replace(/[^a-z0-9_]/g, '_')
    const login = async (name: string, group: string, tenant?: string): Promise<string> => {
      await sql.raw(`create role "${name}" login password 'pw'`).execute(store.db)
      await sql.raw(`grant ${group} to "${name}"`).execute(store.db)
      if (tenant !== undefined)
        await sql`insert into turnlog.tenant_roles (role_name, tenant_id) values (${name}, ${tenant})`.execute(store.db)
      const url = new URL(connectionString)
      url.username = name
      url.password = 'pw'
      return url.toString()
    }
    const tenantName = `sub_tenant_${suffix}`.slice(0, 63)
    const readerName = `sub_reader_${suffix}`.slice(0, 63)
    const tenantUrl = await login(tenantName, 'turnlog_writer', 'tenant-a')
    const readerUrl = await login(readerName, 'turnlog_reader', 'tenant-a')
    const mine = await store.createSession({ tenantId: 'tenant-a' })
    const theirs = await store.createSession({ tenantId: 'tenant-b' })
    const [a, b] = [msg('tenant a'), msg('tenant b')]
    await store.append(mine, [a])
    await store.append(theirs, [b])
    const tenantStore = await openStore({ connectionString: tenantUrl, migrate: false })
    const readerStore = await openStore({ connectionString: readerUrl, migrate: false })
    try {
      // when: the tenant consumes the whole log
      const seen: SubscribedEvent[] = []
      const sub = tenantStore.subscribe({ name: 'tenant-a-feed', from: 'start' }, (e) => {
        seen.push(e)
      })
      await sub.catchUp()
      await sub.stop()

      // then: its own event, and nothing of another tenant
      expect(seen.map((e) => e.messageId)).toContain(a.id)
      expect(seen.filter((e) => e.sessionId !== mine)).toEqual([])

      // when: the reader tries to consume
      const refused = readerStore.subscribe({ name: 'reader-feed', from: 'now' }, () => {}, { reconnect: false })
      const error = await rejection(refused.done)

      // then: refused (it may not write a checkpoint), yet it lists its tenant's subscriptions (only those) and measures lag
      expect(isTurnlogError(error, 'PERMISSION_DENIED')).toBe(true)
      expect((await listSubscriptions(readerStore)).map((s) => [s.name, s.tenantId])).toEqual([['tenant-a-feed', 'tenant-a']])
      expect((await refused.lag()).checkpoint).toEqual({ txId: '0', globalPosition: 0 })
    } finally {
      await tenantStore.close()
      await readerStore.close()
      await sql.raw(`drop owned by "${tenantName}", "${readerName}"`).execute(store.db)
      await sql`delete from turnlog.tenant_roles where role_name in (${tenantName}, ${readerName})`.execute(store.db)
      await sql.raw(`drop role "${tenantName}"`).execute(store.db)
      await sql.raw(`drop role "${readerName}"`).execute(store.db)
    }
  })
})

describe('rebaseAfterRestore', () => {
  it('refuses while a consumer runs; with force it rewrites every event to the frozen id and resumes without skipping', async () => {
    // given: a running consumer
    const { session } = await sessionWith(store, 2)
    const running = subscribeRecordingSeqs(store, { name: 'forced', filter: { sessionId: session } })
    await running.sub.catchUp()

    // when / then: no rebase while it holds its name, and nothing changes
    const { rows: before } = await sql<{ n: string }>`select count(*)::text as n from turnlog.events where tx_id = '2'::xid8`.execute(
      store.db,
    )
    expect(await rejection(rebaseAfterRestore(store, { force: true }))).toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    const { rows: after } = await sql<{ n: string }>`select count(*)::text as n from turnlog.events where tx_id = '2'::xid8`.execute(
      store.db,
    )
    expect(after).toEqual(before)

    // when: stopped, then forced (no id is ahead: not needed, done anyway); a third event follows
    await running.sub.stop()
    const { rows: total } = await sql<{ n: string }>`select count(*)::text as n from turnlog.events`.execute(store.db)
    const result = await rebaseAfterRestore(store, { force: true })
    await store.append(session, [msg('after the rebase')])
    const { sub, seen } = subscribeRecordingSeqs(store, { name: 'forced', filter: { sessionId: session } })
    await sub.catchUp()

    // then: every event rewritten, every checkpoint on the frozen id, and only the new event delivered
    expect(result.needed).toBe(false)
    expect(result.eventsRewritten).toBe(Number(total[0]!.n))
    expect(result.subscriptions.every((s) => s.to.txId === '2')).toBe(true)
    expect(seen).toEqual([3])
    await sub.stop()
  })
})

describe('lag at scale', () => {
  it('counts stop at LAG_COUNT_CAP and say so (capped)', async () => {
    // given: a database of its own whose log holds LAG_COUNT_CAP + 1 events of one session
    const big = await createTestDatabase({ ...(adminUrl === undefined ? {} : { adminUrl }), migrate: migrateByOpening })
    const bigStore = await openStore({ connectionString: big.connectionString, migrate: false })
    const release = gate()
    try {
      const session = await bigStore.createSession()
      const n = LAG_COUNT_CAP + 1
      await sql`insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
                select ${session}, g, gen_random_uuid(), 'message_appended', gen_random_uuid(), decode(${'00'.repeat(32)}, 'hex'),
                       '{"role":"user","content":"x"}'::json, '{}'::json
                  from generate_series(1, ${n}) g`.execute(bigStore.db)
      await sql`update turnlog.sessions set version = ${n} where session_id = ${session}`.execute(bigStore.db)

      // when: a consumer from the start is busy with the first event
      const sub = bigStore.subscribe({ name: 'capped' }, async () => {
        await release.wait
      })
      await waitUntil('the consumer to run', () => sub.state === 'running' && sub.checkpoint !== null, 30_000, bigStore, [sub])
      const lag = await sub.lag()

      // then: the count stops at the cap and says so
      expect(lag).toMatchObject({ visible: LAG_COUNT_CAP, heldBack: 0, capped: true, checkpoint: { txId: '0', globalPosition: 0 } })
      expect(lag.nextEventAgeMs).toEqual(expect.any(Number))
      release.open()
      await sub.stop()
    } finally {
      release.open()
      await bigStore.close()
      await big.drop()
    }
  }, 120_000)
})
