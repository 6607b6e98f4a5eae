/**
 * Attacks one PGlite instance shared by several users: two `openStore({ pglite })` calls at once on a
 * fresh instance (both migrate it), two stores on one instance, the caller's own `pglite.query`, and a
 * transaction whose work swallows a refused statement. PGlite is one connection: before the fix a
 * transaction of one store (BEGIN … COMMIT sent as separate statements) did not keep other users of
 * the instance out, so their statements ran inside it. Two concurrent first opens both failed with
 * `MIGRATION_FAILED` (42P07, 25P02); another store's acknowledged append was rolled back with the first
 * store's `atomically()`; two stores on one instance consumed one subscription name at once (each
 * kept its own in-process claims), and the second's `SUBSCRIPTION_CONFLICT` failed the first; and a
 * transaction aborted by a swallowed error "committed" silently (the
 * server completed its COMMIT as a ROLLBACK) where the Postgres store rejects. Holding the instance
 * for a whole transaction must not make `close()` hang on a transaction a caller left open. And a
 * closed instance is refused as such.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { listSubscriptions, migrateToLatest, openStore, rebaseSubscription, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, turnlogRejection, useTestStoreOfKind } from '@turnlog/testing'
import { sql } from 'kysely'

/** A promise and its resolver. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

async function liveIds(store: PostgresStore, session: SessionId): Promise<string[]> {
  return (await store.load(session)).messages.map((m) => m.id)
}

describe('one PGlite instance, several users (the tests run in order on one instance)', () => {
  let shared: PGlite
  beforeAll(async () => {
    // a fresh, unmigrated instance
    shared = await PGlite.create()
  }, 60_000)
  afterAll(async () => {
    if (!shared.closed) await shared.close()
  })

  it('two openStore({ pglite }) at once on a fresh instance both open, and the schema is migrated once', async () => {
    // when two stores open on the fresh instance at the same time
    const [a, b] = await Promise.all([openStore({ pglite: shared }), openStore({ pglite: shared })])
    // then both work on one migrated schema
    const sa = await a.createSession()
    const m = createMessage({ role: 'user', content: 'from a' })
    await a.append(sa, [m])
    expect(await liveIds(b, sa)).toEqual([m.id])
    const { applied, known } = await migrateToLatest(a.db)
    expect(applied).toEqual([])
    const { rows } = await shared.query<{ name: string }>('select name from turnlog.schema_migrations order by name')
    expect(rows.map((r) => r.name)).toEqual([...known].sort())
    await a.close()
    await b.close()
  }, 60_000)

  it("another store's append and the caller's own statement wait for a store's transaction, and are not rolled back with it", async () => {
    // given two stores on one instance, and store a inside atomically() with a write of its own
    const a = await openStore({ pglite: shared })
    const b = await openStore({ pglite: shared })
    const sa = await a.createSession()
    const sb = await b.createSession()
    const inside = gate()
    const release = gate()
    const atomic = a.atomically(async (s) => {
      await s.append(sa, [createMessage({ role: 'user', content: 'rolled back' })])
      inside.open()
      await release.promise
      throw new Error('roll back on purpose')
    })
    const atomicOutcome = atomic.then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    await inside.promise
    // when store b appends and the caller runs a statement of its own while a's transaction is open
    const kept = createMessage({ role: 'user', content: 'acknowledged by b' })
    const appended = b.append(sb, [kept])
    const own = shared.query("select set_config('application_name', 'caller', false)")
    release.open()
    // then a's transaction rolls back alone
    expect(await atomicOutcome).toBe('roll back on purpose')
    expect((await appended).appended).toEqual([kept.id])
    await own
    expect(await liveIds(a, sa)).toEqual([])
    // and what b acknowledged is stored
    expect(await liveIds(b, sb)).toEqual([kept.id])
    expect(await liveIds(a, sb)).toEqual([kept.id])
    await a.close()
    await b.close()
  })

  it("the caller's own pglite.transaction and a store's calls take turns", async () => {
    // given a store on an instance the caller also uses for its own transactions
    const pglite = shared
    const store = await openStore({ pglite })
    const session = await store.createSession()
    await pglite.exec('create table app_notes (note text)')
    const inside = gate()
    const release = gate()
    // when the caller's transaction is open while the store appends, and then rolls back
    const callerTx = pglite
      .transaction(async (tx) => {
        await tx.query("insert into app_notes values ('rolled back')")
        inside.open()
        await release.promise
        await tx.rollback()
      })
      .then(() => 'ended')
    await inside.promise
    const m = createMessage({ role: 'user', content: 'stored' })
    const appended = store.append(session, [m])
    release.open()
    // then the store's append is not part of the caller's transaction
    expect(await callerTx).toBe('ended')
    expect((await appended).appended).toEqual([m.id])
    expect(await liveIds(store, session)).toEqual([m.id])
    const { rows } = await pglite.query<{ n: number }>('select count(*)::int as n from app_notes')
    expect(rows[0]?.n).toBe(0)
    await store.close()
  })

  it('two stores on one instance share its subscription names: one consumer per name, the other waits and takes over at the checkpoint', async () => {
    // given two stores on the instance, three events, and a consumer of store a that delivered them
    const a = await openStore({ pglite: shared })
    const b = await openStore({ pglite: shared })
    const session = await a.createSession()
    await a.append(
      session,
      [1, 2, 3].map((i) => createMessage({ role: 'user', content: `m${String(i)}` })),
    )
    const seenA: number[] = []
    const seenB: number[] = []
    const filter = { sessionId: session }
    const first = a.subscribe({ name: 'shared-name', filter }, (e) => void seenA.push(e.seq), { pollIntervalMs: 20 })
    await first.catchUp()
    // when store b subscribes to the same name, without waiting and waiting, and rebases it
    const refused = b.subscribe({ name: 'shared-name', filter }, () => {}, { waitForLock: false })
    const waiting = b.subscribe({ name: 'shared-name', filter }, (e) => void seenB.push(e.seq), { pollIntervalMs: 20, lockRetryMs: 20 })
    // then b's consumers do not run beside a's, b sees the name held, and may not move it
    await expect(refused.done).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    expect((await listSubscriptions(b)).find((s) => s.name === 'shared-name')?.active).toBe(true)
    expect(await turnlogRejection(rebaseSubscription(b, 'shared-name', { toStart: true }))).toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    await a.append(session, [createMessage({ role: 'user', content: 'm4' })])
    await first.catchUp()
    expect(waiting.state).toBe('waiting')
    // and once a's consumer stops, b's takes over after the checkpoint: each event delivered once
    await first.stop()
    await a.append(session, [createMessage({ role: 'user', content: 'm5' })])
    await waiting.catchUp()
    await waiting.stop()
    expect(seenA).toEqual([1, 2, 3, 4])
    expect(seenB).toEqual([5])
    await a.close()
    await b.close()
  })

  it("close() rolls back a transaction the caller left open on the store's Kysely: the instance is free afterwards", async () => {
    // given a controlled transaction on the store's Kysely, with a write, never committed
    const store = await openStore({ pglite: shared })
    const session = await store.createSession()
    const forgotten = await store.db.startTransaction().execute()
    await store.withTransaction(forgotten).append(session, [createMessage({ role: 'user', content: 'never committed' })])
    // when the store closes
    await store.close()
    // then the caller's next statement runs (it waited forever for the open transaction) and the write is gone
    const { rows } = await shared.query<{ n: number }>('select count(*)::int as n from turnlog.events where session_id = $1', [session])
    expect(rows[0]?.n).toBe(0)
  })

  it('a store opening on an instance the caller closed is INVALID_INPUT naming config.pglite (before: MIGRATION_FAILED "before any migration")', async () => {
    // given the instance, closed by its owner
    await shared.close()
    // when a store opens on it
    const error = await turnlogRejection(openStore({ pglite: shared }))
    // then the refusal says what is wrong
    expect(error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'config.pglite' } })
  })
})

describe.each(STORE_KINDS)('a transaction whose work swallows a refused call (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('atomically() rejects (the COMMIT was a ROLLBACK) and nothing of it is stored', async () => {
    // given work that writes, then catches a refusal that aborted the transaction
    const session = await store.createSession()
    const first = createMessage({ role: 'user', content: 'first' })
    let refused: string | undefined
    // when it resolves
    const error = await turnlogRejection(
      store.atomically(async (s) => {
        await s.append(session, [first])
        try {
          await s.append(session, [createMessage({ role: 'user', content: 'stale' })], { expectedVersion: 99 })
        } catch (e) {
          refused = (e as { code?: string }).code
        }
        return 'resolved'
      }),
    )
    // then the caller learns that nothing committed, on both stores alike
    expect(refused).toBe('VERSION_CONFLICT')
    expect(error.code).toBe('DB_ERROR')
    expect(error.message).toMatch(/rolled back instead of committed/)
    expect((error.cause as Error | undefined)?.name).toBe('AbortedTransactionError')
    expect(error.details['sqlState']).toBeUndefined()
    expect(await liveIds(store, session)).toEqual([])
    // and a flush of the message stores it (the store did not take it as durable)
    expect((await store.flush(session, [first])).appended).toEqual([first.id])
  })

  it("a caller's Kysely transaction with withTransaction() rejects the same way", async () => {
    // given the caller's transaction on the store's Kysely, and a statement error it swallows
    const session = await store.createSession()
    const m = createMessage({ role: 'user', content: 'lost?' })
    // when the callback resolves
    const outcome = await store.db
      .transaction()
      .execute(async (trx) => {
        await store.withTransaction(trx).append(session, [m])
        await sql`select 1 / 0`.execute(trx).catch(() => undefined)
        return 'resolved'
      })
      .then(
        (value) => value,
        (e: Error) => e.name,
      )
    // then Kysely reports the aborted transaction, and nothing is stored
    expect(outcome).toBe('AbortedTransactionError')
    expect(await liveIds(store, session)).toEqual([])
  })

  it('a transaction with an isolation level and access mode runs with them', async () => {
    // when the caller opens a serializable read-only transaction on the store's Kysely
    const seen = await store.db
      .transaction()
      .setIsolationLevel('serializable')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const { rows } = await sql<{ iso: string; ro: string }>`select current_setting('transaction_isolation') as iso,
          current_setting('transaction_read_only') as ro`.execute(trx)
        return rows[0]
      })
    // then both settings hold inside it
    expect(seen).toEqual({ iso: 'serializable', ro: 'on' })
  })
})
