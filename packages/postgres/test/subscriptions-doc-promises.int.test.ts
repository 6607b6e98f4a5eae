import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type TurnlogError } from '@turnlog/core'
import {
  dropSubscription,
  listSubscriptions,
  rebaseSubscription,
  START_CHECKPOINT,
  type PostgresStore,
  type SubscriptionState,
} from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { execFile } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import { sessionWith, subscribeRecordingSeqs, usePrivateClusterStore, waitFor } from './support/subscription-support.js'

// Promises of docs/subscriptions.md that no other test pinned: the API tables (`from`, `waitForLock`,
// `maxAttempts`, `delivered`, `done`, `stop()`, `onStateChange`, `context`), dropSubscription, and the
// PGlite section. A server of the file's own (see usePrivateClusterStore): the horizon is cluster-wide.

let store: PostgresStore
let embedded: PostgresStore
let connectionString: string

usePrivateClusterStore((opened, _adminUrl, url) => {
  store = opened
  connectionString = url
})
useTestStoreOfKind('pglite', (t) => ({ store: embedded } = t))

const DIST = pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href

// A consumer in a process of its own (the built package): Node ends a process with code 1 on an
// unhandled rejection, which jest would otherwise intercept.
const CHILD = `
const [mode, dist, url, session] = process.argv.slice(1)
if (mode === 'probe') Promise.reject(new Error('probe'))
const { openStore } = await import(dist)
const store = await openStore({ connectionString: url, migrate: false })
const sub = store.subscribe({ name: 'unobserved-failure', filter: { sessionId: session } }, () => { throw new Error('no') }, { maxAttempts: 1 })
while (sub.state !== 'failed') await new Promise((r) => setTimeout(r, 10))
await new Promise((r) => setTimeout(r, 50))
process.stdout.write('failed ' + sub.error.code + '\\n')
await store.close()
`

function runChild(mode: 'subscribe' | 'probe', session: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', CHILD, mode, DIST, connectionString, session],
      { timeout: 15_000 },
      (error, stdout) => {
        if (error !== null && typeof error.code !== 'number') reject(new Error('the child process did not run', { cause: error }))
        else resolve({ code: error === null ? 0 : (error.code as number), stdout })
      },
    )
  })
}

const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (e: unknown) => e,
  )

describe('subscribe config and options (API tables)', () => {
  it('a from checkpoint this cluster has not reached ends the consumer with INVALID_INPUT and stores no checkpoint', async () => {
    // given: a transaction id far past this cluster's counter
    const sub = store.subscribe({ name: 'from-the-future', from: { txId: '9000000000000', globalPosition: 0 } }, () => {})

    // when
    const error = await caught(sub.done)

    // then
    expect(isTurnlogError(error, 'INVALID_INPUT')).toBe(true)
    expect((error as TurnlogError).details).toMatchObject({ field: 'config.from.txId' })
    expect(sub.state).toBe('failed')
    expect((await listSubscriptions(store)).some((s) => s.name === 'from-the-future')).toBe(false)
  })

  it('maxAttempts: 1 fails at the first failed call, without a back-off or a retry', async () => {
    // given
    const { session } = await sessionWith(store, 2)
    const attempts: number[] = []
    const backoffCalls: number[] = []
    const sub = store.subscribe(
      { name: 'one-attempt', filter: { sessionId: session } },
      (e, context) => {
        attempts.push(context.attempt)
        if (e.seq === 1) throw new Error('no')
      },
      {
        maxAttempts: 1,
        backoff: (n) => {
          backoffCalls.push(n)
          return 0
        },
      },
    )

    // when
    const error = await caught(sub.done)

    // then
    expect(isTurnlogError(error, 'SUBSCRIPTION_FAILED')).toBe(true)
    expect((error as TurnlogError).details).toMatchObject({ attempts: 1, failedEvent: { sessionId: session, seq: 1 } })
    expect(attempts).toEqual([1])
    expect(backoffCalls).toEqual([])
    expect(sub.delivered).toBe(0)
  })

  it("context is { subscription: the name, attempt, transaction: undefined without transactional }; checkpoints' txId is a decimal string", async () => {
    // given
    const { session } = await sessionWith(store, 1)
    const contexts: unknown[] = []
    const sub = store.subscribe({ name: 'context-shape', filter: { sessionId: session } }, (_e, context) => {
      contexts.push({ ...context })
    })

    // when
    const checkpoint = await sub.catchUp()
    await sub.stop()

    // then
    expect(contexts).toEqual([{ subscription: 'context-shape', attempt: 1, transaction: undefined }])
    expect(START_CHECKPOINT).toEqual({ txId: '0', globalPosition: 0 })
    expect(checkpoint.txId).toMatch(/^[1-9][0-9]*$/)
    expect(sub.checkpoint).toEqual(checkpoint)
  })
  it("from 'now' starts at { txId: the snapshot's xmin, globalPosition: 0 }", async () => {
    // given: this server's horizon before and after the consumer starts (no other transaction runs here)
    const xmin = async (): Promise<bigint> => {
      const { rows } = await sql<{ x: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as x`.execute(store.db)
      return BigInt(rows[0]!.x)
    }
    const before = await xmin()
    const sub = store.subscribe({ name: 'from-now-key', from: 'now' }, () => {})

    // when
    const checkpoint = await sub.catchUp()
    const stored = (await listSubscriptions(store)).find((s) => s.name === 'from-now-key')?.checkpoint
    const after = await xmin()
    await sub.stop()

    // then: the stored row was created at xmin then, position 0 (nothing was appended meanwhile)
    expect(stored).toEqual(checkpoint)
    expect(checkpoint.globalPosition).toBe(0)
    expect(BigInt(checkpoint.txId)).toBeGreaterThanOrEqual(before)
    expect(BigInt(checkpoint.txId)).toBeLessThanOrEqual(after)
  })
})

describe('Subscription members (API table)', () => {
  it('delivered counts the successful calls whose checkpoint committed, by this consumer: not the events the filter skipped, nor a failed one', async () => {
    // given: three events of one session, two of another, a filter on the first; the third event fails
    const { session } = await sessionWith(store, 3)
    await sessionWith(store, 2)
    const sub = store.subscribe(
      { name: 'delivered-count', filter: { sessionId: session } },
      (e) => {
        if (e.seq === 3) throw new Error('no')
      },
      { maxAttempts: 2, backoff: () => 0, batchSize: 2 },
    )

    // when
    const error = await caught(sub.done)

    // then
    expect(isTurnlogError(error, 'SUBSCRIPTION_FAILED')).toBe(true)
    expect(sub.delivered).toBe(2)
    expect((await listSubscriptions(store)).find((s) => s.name === 'delivered-count')?.delivered).toBe(2)

    // when: a second consumer of the name delivers the rest: the stored total adds up, each counts its own
    const next = store.subscribe({ name: 'delivered-count', filter: { sessionId: session } }, () => {})
    await next.catchUp()
    await next.stop()

    // then
    expect(next.delivered).toBe(1)
    expect((await listSubscriptions(store)).find((s) => s.name === 'delivered-count')?.delivered).toBe(3)
  })

  it('stop() never rejects: on a failed subscription, twice, at once after subscribe, and on a consumer waiting for the name; catchUp after stop() is SUBSCRIPTION_STOPPED', async () => {
    // given: a failed subscription
    const { session } = await sessionWith(store, 1)
    const failed = store.subscribe(
      { name: 'stop-after-failure', filter: { sessionId: session } },
      () => {
        throw new Error('no')
      },
      { maxAttempts: 1 },
    )
    const failure = await caught(failed.done)

    // when / then
    await expect(failed.stop()).resolves.toBeUndefined()
    await expect(failed.stop()).resolves.toBeUndefined()
    expect(failed.state).toBe('failed')
    await expect(failed.catchUp()).rejects.toBe(failure)

    // given: a consumer stopped at once, before it connected
    const early = store.subscribe({ name: 'stop-at-once' }, () => {})
    await expect(early.stop()).resolves.toBeUndefined()
    expect(early.state).toBe('stopped')
    await expect(early.done).resolves.toBeUndefined()

    // given: a holder and a consumer waiting for its name
    const holder = store.subscribe({ name: 'stop-while-waiting' }, () => {}, { pollIntervalMs: 50 })
    await holder.catchUp()
    const waiting = store.subscribe({ name: 'stop-while-waiting' }, () => {}, { lockRetryMs: 50 })
    await waitFor('the second consumer to wait', () => waiting.state === 'waiting')

    // when
    await waiting.stop()
    await waiting.stop()

    // then
    expect(waiting.state).toBe('stopped')
    await expect(waiting.done).resolves.toBeUndefined()
    await expect(waiting.catchUp()).rejects.toMatchObject({ code: 'SUBSCRIPTION_STOPPED' })
    expect(waiting.checkpoint).toBeNull()
    await holder.stop()
    await expect(holder.catchUp()).rejects.toMatchObject({ code: 'SUBSCRIPTION_STOPPED' })
  })

  it('done of a failed subscription nobody awaits is not an unhandled rejection (a process of its own: Node would exit 1)', async () => {
    // given: a session whose event the child's handler refuses
    const { session } = await sessionWith(store, 1)

    // when: the child lets a subscription fail without looking at done; and, to show the check can
    // fail, a child that leaves a rejection unhandled
    const failed = await runChild('subscribe', session)
    const probe = await runChild('probe', session)

    // then
    expect(failed).toEqual({ code: 0, stdout: 'failed SUBSCRIPTION_FAILED\n' })
    expect(probe.code).not.toBe(0)
  })

  it('onStateChange is called on each change from starting: running, stopped; a second consumer: waiting, running once the first stops, stopped', async () => {
    // given
    const first: SubscriptionState[] = []
    const second: SubscriptionState[] = []
    const a = store.subscribe({ name: 'state-changes', from: 'now' }, () => {}, {
      onStateChange: (state, sub) => {
        expect(sub.name).toBe('state-changes')
        first.push(state)
      },
    })
    await a.catchUp()
    const b = store.subscribe({ name: 'state-changes' }, () => {}, { lockRetryMs: 50, onStateChange: (state) => second.push(state) })
    await waitFor('the second consumer to wait', () => b.state === 'waiting')

    // when
    await a.stop()
    await b.catchUp()
    await b.stop()

    // then (`starting` is the initial state: the first change reported is the next one)
    expect(first).toEqual(['running', 'stopped'])
    expect(second).toEqual(['waiting', 'running', 'stopped'])
  })
})

describe('dropSubscription (Other functions)', () => {
  it('refuses while a consumer holds the name (SUBSCRIPTION_LOCKED, the row kept); false for an unknown name; true once stopped', async () => {
    // given
    const { session } = await sessionWith(store, 2)
    const { sub } = subscribeRecordingSeqs(store, { name: 'drop-held', filter: { sessionId: session } })
    await sub.catchUp()

    // when / then
    await expect(dropSubscription(store, 'drop-held')).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    expect((await listSubscriptions(store)).find((s) => s.name === 'drop-held')?.active).toBe(true)
    expect(await dropSubscription(store, 'drop-never-created')).toBe(false)
    await sub.stop()
    expect(await dropSubscription(store, 'drop-held')).toBe(true)
    expect(await dropSubscription(store, 'drop-held')).toBe(false)
    expect((await listSubscriptions(store)).some((s) => s.name === 'drop-held')).toBe(false)
  })
})

describe('wake-ups: the listening lease', () => {
  it('lasts three poll intervals, at least 10 s; a consumer with listen: false takes none and still delivers by polling', async () => {
    // given: no live lease
    await sql`update turnlog.subscriptions set listening_until = null`.execute(store.db)
    const session = await store.createSession()
    const short = store.subscribe({ name: 'lease-short', from: 'now' }, () => {}, { pollIntervalMs: 100 })
    const long = store.subscribe({ name: 'lease-long', from: 'now' }, () => {}, { pollIntervalMs: 20_000 })
    const { sub: quiet, seen } = subscribeRecordingSeqs(
      store,
      { name: 'lease-off', from: 'now', filter: { sessionId: session } },
      {
        listen: false,
        pollIntervalMs: 50,
      },
    )

    // when: each has found nothing to read (it renews its lease right before the idle probe)
    await Promise.all([short.catchUp(), long.catchUp(), quiet.catchUp()])
    const { rows } = await sql<{ name: string; seconds: number | null }>`
      select name, extract(epoch from listening_until - now())::float8 as seconds from turnlog.subscriptions
       where name in ('lease-short', 'lease-long', 'lease-off') order by name`.execute(store.db)
    await store.append(session, [createMessage({ role: 'user', content: 'polled' })])
    await waitFor('the polling consumer', () => seen.length === 1, 5_000)
    await Promise.all([short.stop(), long.stop(), quiet.stop()])

    // then
    const lease = Object.fromEntries(rows.map((r) => [r.name, r.seconds]))
    expect(lease['lease-short']).toBeGreaterThan(8)
    expect(lease['lease-short']).toBeLessThanOrEqual(10)
    expect(lease['lease-long']).toBeGreaterThan(58)
    expect(lease['lease-long']).toBeLessThanOrEqual(60)
    expect(lease['lease-off']).toBeNull()
    expect(seen).toEqual([1])
  })
})

describe('embedded PGlite (the doc section)', () => {
  const pollIntervalMs = 20

  it("from 'now' delivers only what is appended after; filters by type and session", async () => {
    // given: a session with events before the subscription starts
    const session = await embedded.createSession()
    await embedded.append(session, [createMessage({ role: 'user', content: 'before' })])
    const other = await embedded.createSession()
    const seen: string[] = []
    const sub = embedded.subscribe(
      { name: 'embedded-now', from: 'now', filter: { sessionId: session, types: ['message_appended'] } },
      (e) => {
        seen.push(`${e.type}#${e.seq}`)
      },
      { pollIntervalMs },
    )
    await sub.catchUp()

    // when: an append to the session, one to another session, and a revision (another type)
    const after = createMessage({ role: 'user', content: 'after' })
    await embedded.append(session, [after])
    await embedded.append(other, [createMessage({ role: 'user', content: 'elsewhere' })])
    await embedded.revise(session, after.id, { role: 'user', content: 'after, revised' })
    await embedded.append(session, [createMessage({ role: 'user', content: 'last' })])
    await waitFor('the last append', () => seen.length >= 2, 5_000)
    const checkpoint = await sub.catchUp()
    await sub.stop()

    // then
    expect(seen).toEqual(['message_appended#2', 'message_appended#4'])
    expect((await listSubscriptions(embedded)).find((s) => s.name === 'embedded-now')?.checkpoint).toEqual(checkpoint)
  })

  it('dropSubscription and rebase refuse while a consumer holds the name (SUBSCRIPTION_LOCKED); drop is true once stopped, false after', async () => {
    // given
    const session = await embedded.createSession()
    await embedded.append(session, [createMessage({ role: 'user', content: 'one' })])
    const { sub } = subscribeRecordingSeqs(embedded, { name: 'embedded-drop', filter: { sessionId: session } }, { pollIntervalMs })
    await sub.catchUp()

    // when / then
    await expect(dropSubscription(embedded, 'embedded-drop')).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    await expect(rebaseSubscription(embedded, 'embedded-drop', { toNow: true })).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    await sub.stop()
    expect(await dropSubscription(embedded, 'embedded-drop')).toBe(true)
    expect(await dropSubscription(embedded, 'embedded-drop')).toBe(false)

    // and a later subscription of the name starts afresh from its from
    const { sub: again, seen } = subscribeRecordingSeqs(
      embedded,
      { name: 'embedded-drop', filter: { sessionId: session } },
      { pollIntervalMs },
    )
    await again.catchUp()
    await again.stop()
    expect(seen).toEqual([1])
  })

  it('a waiting consumer takes over at the committed checkpoint when the holder stops; a handler failure stops it with SUBSCRIPTION_FAILED', async () => {
    // given: a holder that delivered one event, and a consumer waiting for the name
    const session = await embedded.createSession()
    await embedded.append(session, [createMessage({ role: 'user', content: 'one' })])
    const { sub: holder } = subscribeRecordingSeqs(embedded, { name: 'embedded-wait', filter: { sessionId: session } }, { pollIntervalMs })
    await holder.catchUp()
    const calls: string[] = []
    const waiting = embedded.subscribe(
      { name: 'embedded-wait', filter: { sessionId: session } },
      (e, context) => {
        calls.push(`${e.seq}#${context.attempt}`)
        if (e.seq === 3) throw new Error('no')
      },
      { pollIntervalMs, lockRetryMs: 20, maxAttempts: 2, backoff: () => 0 },
    )
    await waitFor('the second consumer to wait', () => waiting.state === 'waiting', 5_000)
    await embedded.append(session, [createMessage({ role: 'user', content: 'two' }), createMessage({ role: 'user', content: 'three' })])

    // when
    await holder.stop()
    const error = await caught(waiting.done)

    // then
    expect(isTurnlogError(error, 'SUBSCRIPTION_FAILED')).toBe(true)
    expect(calls).toEqual(['2#1', '3#1', '3#2'])
    expect((await listSubscriptions(embedded)).find((s) => s.name === 'embedded-wait')).toMatchObject({
      active: false,
      delivered: 2,
      lastError: { code: 'SUBSCRIPTION_FAILED' },
    })
  })

  it("a handler without transactional may call the store's own methods", async () => {
    // given: a handler that appends to another session through the store
    const session = await embedded.createSession()
    await embedded.append(session, [createMessage({ role: 'user', content: 'one' })])
    const relay = await embedded.createSession()
    const sub = embedded.subscribe(
      { name: 'embedded-relay', filter: { sessionId: session } },
      async (e) => {
        await embedded.append(relay, [createMessage({ role: 'assistant', content: `relayed ${e.seq}` })])
      },
      { pollIntervalMs },
    )

    // when
    await sub.catchUp()
    await sub.stop()

    // then
    expect((await embedded.load(relay)).messages.map((m) => m.payload)).toEqual([{ role: 'assistant', content: 'relayed 1' }])
  })

  it("store.close() stops the store's subscriptions: done resolves, catchUp is SUBSCRIPTION_STOPPED (last: it closes the store)", async () => {
    // given
    const running = embedded.subscribe({ name: 'embedded-close' }, () => {}, { pollIntervalMs })
    await running.catchUp()

    // when
    await embedded.close()

    // then
    expect(running.state).toBe('stopped')
    await expect(running.done).resolves.toBeUndefined()
    await expect(running.catchUp()).rejects.toMatchObject({ code: 'SUBSCRIPTION_STOPPED' })
  })
})
