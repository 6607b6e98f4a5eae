/**
 * The operation ledger of a session that pops often stays bounded, on Postgres and on PGlite: every
 * `popItem` writes a ledger record (its idempotency key) and retracts it in the same transaction, so
 * the ledger's live list, which every history transaction and clear reads whole, holds only the
 * generation record however many pops there were (operation records are retracted the same way:
 * history-transaction-ledger-bound.int.test.ts).
 *
 * Regression (review of the ledger): each `popItem` left one `pop_item` record in the ledger's live
 * list until the next `clearSession`; a runtime that rewinds failed attempts grew it without bound
 * (500 pops: 500 records), and every history transaction read them all.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { AgentInputItem } from '@openai/agents-core'
import type { PostgresStore } from '@turnlog/postgres'
import { TURNLOG_SESSION_REASONS, TurnlogSession } from '@turnlog/openai-agents'
import { userMessage } from './support/agent-items.js'
import { ledgerRecords } from './support/ledger-records.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

const POPS = 150

/** The number of `popItem` retractions of the conversation, each of one id. */
async function popRetractions(store: PostgresStore, sessionId: string): Promise<number> {
  let count = 0
  for await (const event of store.events(sessionId)) {
    if (event.type !== 'messages_retracted' || event.data.reason !== TURNLOG_SESSION_REASONS.popItem) continue
    expect(event.data.ids).toHaveLength(1)
    count++
  }
  return count
}

describe.each(STORE_KINDS)('the operation ledger of a session that pops often (%s)', (kind) => {
  const stores = useStore(kind)

  it(`${POPS} popItems: the ledger's live list stays as it was (empty), and the operation is still known`, async () => {
    // given: a history of POPS items, the last one added by a history transaction
    const store = stores.get()
    const session = new TurnlogSession({ store, sessionId: `pops-${randomUUID()}` })
    const items: AgentInputItem[] = Array.from({ length: POPS - 1 }, (_, i) => userMessage(`q${i}`))
    await session.addItems(items)
    const last = userMessage('by transaction')
    const transaction = { operationId: 'op-1', transaction: { type: 'append_items' as const, items: [last] } }
    await session.applyHistoryTransaction(transaction)
    expect(await ledgerRecords(store, session.ledgerSessionId)).toMatchObject([{ kind: 'history_transaction', operationId: 'op-1' }])
    expect((await store.load(session.ledgerSessionId)).messages).toEqual([])

    // when: every item popped, one call at a time, the ledger's live size looked at along the way
    const popped: (AgentInputItem | undefined)[] = []
    const liveSizes: number[] = []
    for (let i = 0; i < POPS; i++) {
      popped.push(await session.popItem())
      if (i % 50 === 49) liveSizes.push((await store.getSession(session.ledgerSessionId)).liveCount)
    }

    // then: each item popped once, newest first, and the ledger never grew
    expect(popped).toEqual([...items, last].reverse())
    expect(await session.popItem()).toBeUndefined()
    expect(await popRetractions(store, session.turnlogSessionId)).toBe(POPS)
    expect(liveSizes).toEqual(Array<number>(POPS / 50).fill(0))
    expect((await store.load(session.ledgerSessionId)).messages).toEqual([])
    // the operation's record, retracted but stored, still makes the same operation a no-op
    await session.applyHistoryTransaction(transaction)
    expect(await session.getItems()).toEqual([])
  })
})
