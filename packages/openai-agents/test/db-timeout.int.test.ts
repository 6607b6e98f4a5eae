/**
 * `DB_TIMEOUT` in the session's writes, on Postgres (README, "Errors"): the session does not retry it
 * (as `withRetry` does not); the call throws it typed, and calling again is safe. A server-side
 * `statement_timeout` (SQLSTATE 57014) rolls the attempt back: nothing popped, and the caller's retry
 * pops one item. A client-side `query_timeout` whose commit the server still completes is an unknown
 * outcome: the caller's retry of `popItem` returns the item the timed-out call popped and pops nothing
 * more, and a history transaction retried with its operation id is applied once.
 *
 * Timeouts are provoked for real: a statement waits behind a lock another transaction holds, and a
 * commit is made slow by a deferred trigger (test database only) that sleeps at commit time.
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from '@jest/globals'
import type { AgentInputItem } from '@openai/agents-core'
import { JSON_FORMAT, createMessage, type SessionStore } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { rejection, useTestStore, type TestDatabase } from '@turnlog/testing'
import { TURNLOG_SESSION_REASONS, TurnlogSession } from '@turnlog/openai-agents'
import { userMessage } from './support/agent-items.js'

let db: TestDatabase
let direct: PostgresStore
useTestStore((t) => ({ db, store: direct } = t))

const [q1, q2, q3, q4] = ['q1', 'q2', 'q3', 'q4'].map(userMessage) as [AgentInputItem, AgentInputItem, AgentInputItem, AgentInputItem]
/**
 * How long a slow commit takes on the server, and the client-side `query_timeout` that gives up before
 * it ends: wide enough that on a loaded machine no other statement of the call reaches the timeout.
 */
const SLOW_COMMIT_S = 5
const QUERY_TIMEOUT_MS = 3_000

/** Runs one SQL text (no parameters) on `store`'s pool: the test-only schema additions below. */
async function runSql(store: PostgresStore, text: string): Promise<void> {
  const compiled = {
    sql: text,
    parameters: [],
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: { queryId: randomUUID() },
  }
  await store.db.executeQuery(compiled as unknown as Parameters<typeof store.db.executeQuery>[0])
}

/** The next transaction that appends an event to `sessionId` sleeps `SLOW_COMMIT_S` seconds in its COMMIT (once). */
async function slowNextCommit(sessionId: string): Promise<void> {
  await runSql(direct, `insert into public.slow_commits (session_id) values ('${sessionId}')`) // a parsed SessionId: a UUID
}

/** Holds `sessionId`'s write lock: a transaction of `direct` that wrote to it waits until `release()`, then rolls back. */
async function holdWriteLock(sessionId: string): Promise<{ release(): Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const holding = new Promise<void>((resolve) => (locked = resolve))
  const rollBack = new Error('roll back')
  const done = direct
    .atomically(async (store: SessionStore) => {
      await store.append(sessionId, [createMessage({ lock: true }, { format: JSON_FORMAT })])
      locked()
      await released
      throw rollBack
    })
    .catch((error: unknown) => {
      if (error !== rollBack) throw error
    })
  await Promise.race([holding, done])
  return {
    async release() {
      release()
      await done
    },
  }
}

/** The `popItem` retractions of the conversation: the ids each one retracted. */
async function popRetractions(sessionId: string): Promise<string[][]> {
  const out: string[][] = []
  for await (const event of direct.events(sessionId)) {
    if (event.type === 'messages_retracted' && event.data.reason === TURNLOG_SESSION_REASONS.popItem) out.push([...event.data.ids])
  }
  return out
}

/** Waits (at most twice the slow commit) until `sessionId` is at `version`: a slow commit has landed. */
async function landed(sessionId: string, version: number): Promise<void> {
  const deadline = Date.now() + 2 * SLOW_COMMIT_S * 1000
  while ((await direct.getSession(sessionId)).version < version) {
    if (Date.now() > deadline) throw new Error(`session ${sessionId} did not reach version ${version}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function itemsOf(sessionId: string): Promise<unknown[]> {
  return (await direct.load(sessionId)).messages.map((m) => m.payload)
}

describe('DB_TIMEOUT in TurnlogSession writes (Postgres)', () => {
  beforeAll(async () => {
    // a deferred trigger runs at COMMIT: for a session listed in slow_commits, the commit sleeps (once)
    await runSql(direct, 'create table public.slow_commits (session_id uuid primary key)')
    await runSql(
      direct,
      `create function public.slow_commit() returns trigger language plpgsql as $$
       begin
         delete from public.slow_commits where session_id = new.session_id;
         if found then perform pg_sleep(${SLOW_COMMIT_S}); end if;
         return null;
       end $$`,
    )
    await runSql(
      direct,
      `create constraint trigger slow_commit after insert on turnlog.events
         deferrable initially deferred for each row execute function public.slow_commit()`,
    )
  })

  it('statement_timeout while the pop waits for the conversation lock: DB_TIMEOUT (57014), not retried, nothing popped; the retry pops one item', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { statement_timeout: 1_000 } })
    const retries: unknown[] = []
    const session = new TurnlogSession({
      store,
      sessionId: `timeout-${randomUUID()}`,
      retry: { baseDelayMs: 1, onRetry: (e) => retries.push(e) },
    })
    try {
      await session.addItems([q1, q2, q3, q4])
      const [, , , last] = (await direct.load(session.turnlogSessionId)).messages.map((m) => m.id)
      const ledgerVersion = (await direct.getSession(session.ledgerSessionId)).version
      const lock = await holdWriteLock(session.turnlogSessionId)

      // when: the pop's ledger record is written (the ledger is locked first), then its rewind waits for the
      // conversation's lock until the server cancels it
      let error: unknown
      try {
        error = await rejection(session.popItem())
      } finally {
        await lock.release()
      }

      // then: a typed error, no retry of it, the attempt rolled back whole
      expect(error).toMatchObject({ code: 'DB_TIMEOUT', details: { sqlState: '57014' } })
      expect(retries).toEqual([])
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3, q4])
      expect(await popRetractions(session.turnlogSessionId)).toEqual([])
      expect((await direct.getSession(session.ledgerSessionId)).version).toBe(ledgerVersion)
      // and the caller's retry is a pop of its own: one item
      expect(await session.popItem()).toEqual(q4)
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3])
      expect(await popRetractions(session.turnlogSessionId)).toEqual([[last]])
    } finally {
      await store.close()
    }
  })

  it('query_timeout on a commit the server completes: DB_TIMEOUT, and the retry returns the popped item and pops nothing more', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { query_timeout: QUERY_TIMEOUT_MS } })
    const session = new TurnlogSession({ store, sessionId: `query-timeout-${randomUUID()}`, retry: { baseDelayMs: 1 } })
    try {
      await session.addItems([q1, q2, q3, q4])
      const [, , third, last] = (await direct.load(session.turnlogSessionId)).messages.map((m) => m.id)
      await slowNextCommit(session.turnlogSessionId)

      // when: the client stops waiting for the COMMIT, which the server completes later
      const first = await rejection(session.popItem())
      const afterTimeout = await itemsOf(session.turnlogSessionId)
      const retried = await session.popItem()

      // then
      expect(first).toMatchObject({ code: 'DB_TIMEOUT', cause: { message: 'Query read timeout' } })
      expect(afterTimeout).toEqual([q1, q2, q3]) // the timed-out pop committed
      expect(retried).toEqual(q4)
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3])
      expect(await popRetractions(session.turnlogSessionId)).toEqual([[last]])
      // the next call is a new pop; the ledger keeps no pop record
      expect(await session.popItem()).toEqual(q3)
      expect(await popRetractions(session.turnlogSessionId)).toEqual([[last], [third]])
      expect((await direct.getSession(session.ledgerSessionId)).liveCount).toBe(0)
    } finally {
      await store.close()
    }
  })

  it('query_timeout on an addItems whose commit the server completes: the retry with the same items stores them once', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { query_timeout: QUERY_TIMEOUT_MS } })
    const session = new TurnlogSession({ store, sessionId: `query-timeout-add-${randomUUID()}`, retry: { baseDelayMs: 1 } })
    try {
      await session.addItems([q1])
      await slowNextCommit(session.turnlogSessionId)

      // when: the client stops waiting for the COMMIT, which the server completes later; the caller retries
      const first = await rejection(session.addItems([q2, q3]))
      await landed(session.turnlogSessionId, 3) // the server's commit, after the client gave up
      await session.addItems([q2, q3])

      // then: the retry went under the first call's ids, a duplicate of what landed
      expect(first).toMatchObject({ code: 'DB_TIMEOUT', cause: { message: 'Query read timeout' } })
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3])
      expect((await direct.getSession(session.turnlogSessionId)).version).toBe(3)
      // and once settled, the same items again are a new turn of their own
      await session.addItems([q2, q3])
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3, q2, q3])
    } finally {
      await store.close()
    }
  })

  it('query_timeout on an addItems, then other items or another call first: new ids (the earlier call is not retried)', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { query_timeout: QUERY_TIMEOUT_MS } })
    const session = new TurnlogSession({ store, sessionId: `query-timeout-add-other-${randomUUID()}`, retry: { baseDelayMs: 1 } })
    try {
      await session.getSessionId()
      await slowNextCommit(session.turnlogSessionId)

      // when: a timed-out add, then different items; a timed-out add, then a look, then the same items
      expect(await rejection(session.addItems([q1]))).toMatchObject({ code: 'DB_TIMEOUT' })
      await landed(session.turnlogSessionId, 1)
      await session.addItems([q2])
      await slowNextCommit(session.turnlogSessionId)
      expect(await rejection(session.addItems([q3]))).toMatchObject({ code: 'DB_TIMEOUT' })
      await landed(session.turnlogSessionId, 3)
      const looked = await session.getItems()
      await session.addItems([q3])

      // then
      expect(looked).toEqual([q1, q2, q3])
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3, q3])
    } finally {
      await store.close()
    }
  })

  it('query_timeout on a history transaction whose commit the server completes: retried with its operation id, applied once', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { query_timeout: QUERY_TIMEOUT_MS } })
    const session = new TurnlogSession({ store, sessionId: `query-timeout-tx-${randomUUID()}`, retry: { baseDelayMs: 1 } })
    try {
      await session.addItems([q1])
      const args = { operationId: 'turn-2', transaction: { type: 'append_items' as const, items: [q2, q3] } }
      await slowNextCommit(session.turnlogSessionId)

      // when
      const first = await rejection(session.applyHistoryTransaction(args))
      await session.applyHistoryTransaction(args)

      // then
      expect(first).toMatchObject({ code: 'DB_TIMEOUT', cause: { message: 'Query read timeout' } })
      expect(await itemsOf(session.turnlogSessionId)).toEqual([q1, q2, q3])
      expect(await session.getItems()).toEqual([q1, q2, q3])
    } finally {
      await store.close()
    }
  })
})
