/**
 * Every call of `TurnlogSession` that writes both of a conversation's sessions locks the ledger first and
 * the conversation second, on Postgres: a history transaction appends its operation record first (to
 * learn whether the operation was applied before it reads or writes the conversation), so `popItem` and
 * `clearSession` take the ledger first too. Two instances of one conversation, one in a history
 * transaction holding the ledger, the other popping or clearing, then finish one after the other,
 * without a deadlock (SQLSTATE 40P01, which the store reports as `DB_TRANSIENT` and the session retries
 * after Postgres' `deadlock_timeout`).
 *
 * Regression guard (review of the ledger bound): with the operation record written first, a pop or a
 * clear still locking the conversation first deadlocked against it.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { AgentInputItem } from '@openai/agents-core'
import { isTurnlogError, type SessionStore } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { TurnlogSession } from '@turnlog/openai-agents'
import { assistantMessage, userMessage } from './support/agent-items.js'
import { useStore } from './support/open-test-store.js'

/** How many backends of `store`'s database wait for a lock now. */
async function lockWaiters(store: PostgresStore): Promise<number> {
  const text = `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
  const compiled = {
    sql: text,
    parameters: [],
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: { queryId: randomUUID() },
  }
  const { rows } = await store.db.executeQuery(compiled as unknown as Parameters<typeof store.db.executeQuery>[0])
  return (rows[0] as { n: number }).n
}

/** Resolves once `condition` holds (polled: the condition is the database's, no latch reaches it). */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/**
 * `store`, whose transactions (`atomically`) pause right after their first append to `ledgerSessionId`,
 * the ledger's lock held, calling `reached()` and waiting for `resume`.
 */
function pausedAfterLedgerAppend(store: SessionStore, ledgerSessionId: string, reached: () => void, resume: Promise<void>): SessionStore {
  const bound = (inner: SessionStore): SessionStore =>
    new Proxy(inner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property)
        if (typeof value !== 'function') return value
        const method = value as (...args: unknown[]) => Promise<unknown>
        if (property !== 'append') return method.bind(target)
        return async (sessionId: string, ...rest: unknown[]) => {
          const result = await method.call(target, sessionId, ...rest)
          if (sessionId === ledgerSessionId) {
            reached()
            await resume
          }
          return result
        }
      },
    })
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      const method = value as (...args: unknown[]) => unknown
      if (property !== 'atomically') return method.bind(target)
      return (work: (s: SessionStore) => Promise<unknown>) => method.call(target, (s: SessionStore) => work(bound(s)))
    },
  })
}

type Second = 'popItem' | 'clearSession'

describe('the lock order of a conversation and its ledger (postgres)', () => {
  const stores = useStore('postgres')

  it.each<[Second, AgentInputItem[]]>([
    ['popItem', [userMessage('q1')]],
    ['clearSession', []],
  ])(
    'a history transaction holding the ledger, and %s of another instance waiting for it: both finish, no deadlock',
    async (second, expected) => {
      // given: a conversation, one instance whose history transaction pauses holding the ledger's lock
      const store = stores.get()
      const key = `locks-${randomUUID()}`
      const retries: unknown[] = []
      const retry = { baseDelayMs: 1, onRetry: (error: unknown) => retries.push(error) }
      const other = new TurnlogSession({ store, sessionId: key, retry })
      await other.addItems([userMessage('q1')])
      let reached!: () => void
      const holding = new Promise<void>((resolve) => (reached = resolve))
      let resume!: () => void
      const resumed = new Promise<void>((resolve) => (resume = resolve))
      const paused = pausedAfterLedgerAppend(store, other.ledgerSessionId, () => reached(), resumed)
      const first = new TurnlogSession({ store: paused, sessionId: key, retry })
      const transaction = first.applyHistoryTransaction({
        operationId: 'op-1',
        transaction: { type: 'append_items', items: [assistantMessage('a1')] },
      })
      await holding

      // when: the other instance's call waits for a lock, then the transaction goes on
      const call = second === 'popItem' ? other.popItem() : other.clearSession()
      await until(async () => (await lockWaiters(store)) > 0, `${second} to wait for a lock`)
      resume()
      const [, result] = await Promise.all([transaction, call])

      // then: both done, one after the other, and no attempt was lost to a deadlock
      expect(retries.filter((e) => isTurnlogError(e, 'DB_TRANSIENT'))).toEqual([])
      expect(result).toEqual(second === 'popItem' ? assistantMessage('a1') : undefined)
      expect(await other.getItems()).toEqual(expected)
    },
  )
})
