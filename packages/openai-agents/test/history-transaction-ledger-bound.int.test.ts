/**
 * The operation ledger of a long conversation stays bounded, on Postgres and on PGlite: every history
 * transaction appends its operation record (`HistoryLedger.operationRecord`) and retracts it in its own
 * database transaction, so the ledger's live list, which every history transaction reads, holds at
 * most the generation record however many operations the conversation applied. Replay detection does
 * not need the live list: an operation's record id stays claimed once stored (retracted or not), and
 * appending it again is a duplicate (same transaction: nothing written) or `MESSAGE_CONFLICT` (another
 * transaction), for every operation of the generation, however old.
 *
 * Regression (review of the ledger): each history transaction left its record in the ledger's live
 * list until the next `clearSession`, and each one read the list whole first: after 150 operations the
 * 151st read 150 ledger rows, and a long-lived conversation's every history write read more.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { AgentInputItem, SessionHistoryTransactionArgs } from '@openai/agents-core'
import { canonicalJson, isTurnlogError, sha256Hex, type JsonValue, type SessionStore } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { HistoryLedger, TurnlogSession, agentItemMessage } from '@turnlog/openai-agents'
import { assistantMessage, functionCall, userMessage } from './support/agent-items.js'
import { ledgerRecords } from './support/ledger-records.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

const OPERATIONS = 150

/** What one `load` of the ledger returned: its rows and their payloads' JSON size. */
interface LedgerRead {
  readonly rows: number
  readonly bytes: number
}

/**
 * `store`, recording every `load` of `ledgerSessionId` (also those made inside `atomically`, through the
 * bound store) in `reads`.
 */
function counting(store: SessionStore, ledgerSessionId: string, reads: LedgerRead[]): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property) // getters run on the store itself (private fields)
      if (typeof value !== 'function') return value
      const method = value as (...args: unknown[]) => unknown
      if (property === 'atomically')
        return (work: (bound: SessionStore) => Promise<unknown>) =>
          method.call(target, (bound: SessionStore) => work(counting(bound, ledgerSessionId, reads)))
      if (property === 'load')
        return async (sessionId: string, ...rest: unknown[]) => {
          const result = (await method.call(target, sessionId, ...rest)) as Awaited<ReturnType<SessionStore['load']>>
          if (sessionId === ledgerSessionId)
            reads.push({ rows: result.messages.length, bytes: JSON.stringify(result.messages.map((m) => m.payload)).length })
          return result
        }
      return method.bind(target)
    },
  })
}

/** How many `messages_retracted` events the ledger's log holds. */
async function ledgerRetractions(store: PostgresStore, ledgerSessionId: string): Promise<number> {
  let count = 0
  for await (const event of store.events(ledgerSessionId)) if (event.type === 'messages_retracted') count++
  return count
}

/** Both sessions' versions: a call that wrote nothing leaves them as they are. */
async function versions(store: PostgresStore, session: TurnlogSession): Promise<[number, number]> {
  return [(await store.getSession(session.turnlogSessionId)).version, (await store.getSession(session.ledgerSessionId)).version]
}

/** The `i`-th operation of the long conversation: an append, or every third one a replacement of the last item. */
function operation(i: number): SessionHistoryTransactionArgs {
  const operationId = `op-${i}`
  if (i % 3 === 2)
    return {
      operationId,
      transaction: { type: 'replace_suffix', expectedSuffix: [assistantMessage(`a${i - 1}`)], replacement: [assistantMessage(`r${i}`)] },
    }
  return { operationId, transaction: { type: 'append_items', items: [i % 3 === 0 ? userMessage(`q${i}`) : assistantMessage(`a${i}`)] } }
}

describe.each(STORE_KINDS)('the operation ledger of a long conversation (%s)', (kind) => {
  const stores = useStore(kind)

  it(`${OPERATIONS} history transactions: each reads the same ledger rows, and the ledger's live list does not grow`, async () => {
    // given: a conversation whose store records what each call reads of the ledger
    const reads: LedgerRead[] = []
    const plain = new TurnlogSession({ store: stores.get(), sessionId: `long-${randomUUID()}` })
    const session = new TurnlogSession({
      store: counting(stores.get(), plain.ledgerSessionId, reads),
      sessionId: await plain.getSessionId(),
    })

    // when: OPERATIONS transactions, one at a time
    const readsPerOperation: LedgerRead[][] = []
    for (let i = 0; i < OPERATIONS; i++) {
      const before = reads.length
      await session.applyHistoryTransaction(operation(i))
      readsPerOperation.push(reads.slice(before))
    }

    // then: every transaction read the ledger once, and the last one read no more than the first
    expect(readsPerOperation.map((r) => r.length)).toEqual(Array<number>(OPERATIONS).fill(1))
    const first = readsPerOperation[0]?.[0]
    expect(readsPerOperation.map((r) => r[0])).toEqual(Array<LedgerRead | undefined>(OPERATIONS).fill(first))
    expect(first?.rows).toBe(0)
    // the live list is empty; the log holds each record once, appended and retracted (two events an operation)
    expect((await stores.get().getSession(session.ledgerSessionId)).liveCount).toBe(0)
    const records = await ledgerRecords(stores.get(), session.ledgerSessionId)
    expect(records.map((r) => (r.kind === 'history_transaction' ? r.operationId : r.kind))).toEqual(
      Array.from({ length: OPERATIONS }, (_, i) => `op-${i}`),
    )
    expect(await ledgerRetractions(stores.get(), session.ledgerSessionId)).toBe(OPERATIONS)
    // and the conversation is what the operations made it
    const items = await session.getItems()
    expect(items).toHaveLength((OPERATIONS / 3) * 2) // OPERATIONS / 3 appends of a question and of an answer, each answer replaced
    expect(items.slice(-2)).toEqual([userMessage('q147'), assistantMessage('r149')])
  })

  it('a replay is known however old: the first of many operations again writes nothing, with another transaction it is MESSAGE_CONFLICT', async () => {
    // given: a function call appended by the first operation, an answer after it by a replace_suffix, 40 operations
    // more, then the call revised by applyHistoryMutations (its message's content is no longer the operation's)
    const store = stores.get()
    const session = new TurnlogSession({ store, sessionId: `replay-${randomUUID()}` })
    const first: SessionHistoryTransactionArgs = {
      operationId: 'op-first',
      transaction: { type: 'append_items', items: [functionCall('c1', '{}')] },
    }
    const suffix: SessionHistoryTransactionArgs = {
      operationId: 'op-suffix',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: [functionCall('c1', '{}')],
        replacement: [functionCall('c1', '{}'), assistantMessage('done')],
      },
    }
    await session.applyHistoryTransaction(first)
    await session.applyHistoryTransaction(suffix)
    for (let i = 0; i < 40; i++) await session.applyHistoryTransaction(operation(i))
    await session.applyHistoryMutations({
      mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: functionCall('c1', '{"x":1}') as never }],
    })
    const items = await session.getItems()
    const before = await versions(store, session)
    expect((await store.getSession(session.ledgerSessionId)).liveCount).toBe(0)

    // when: both replayed (the suffix is stale by now, the call revised), then the first id with another transaction
    await session.applyHistoryTransaction(first)
    await session.applyHistoryTransaction(suffix)
    const conflict = await session
      .applyHistoryTransaction({ operationId: 'op-first', transaction: { type: 'append_items', items: [userMessage('other')] } })
      .then(
        () => undefined,
        (e: unknown) => e,
      )

    // then: the replays were no-ops, the reuse refused, and nothing was written by any of the three
    expect(isTurnlogError(conflict, 'MESSAGE_CONFLICT')).toBe(true)
    expect((conflict as { details?: unknown }).details).toMatchObject({ operationId: 'op-first', sessionId: session.turnlogSessionId })
    expect(await versions(store, session)).toEqual(before)
    expect(await session.getItems()).toEqual(items)
    // the refused record is the ledger's conflict evidence (audit: message_conflict_attempt)
    expect(await store.conflicts(session.ledgerSessionId)).toEqual([
      expect.objectContaining({ messageId: HistoryLedger.operationRecordId(session.turnlogSessionId, 'initial', 'op-first') }),
    ])
  })

  it('after clearSession an operation id applies again; the ledger read is the generation alone', async () => {
    // given: OPERATIONS / 3 operations, then a clear
    const reads: LedgerRead[] = []
    const plain = new TurnlogSession({ store: stores.get(), sessionId: `cleared-${randomUUID()}` })
    const session = new TurnlogSession({
      store: counting(stores.get(), plain.ledgerSessionId, reads),
      sessionId: await plain.getSessionId(),
    })
    for (let i = 0; i < OPERATIONS / 3; i++) await session.applyHistoryTransaction(operation(i))
    await session.clearSession()

    // when: the first operation again, twice
    reads.length = 0
    await session.applyHistoryTransaction(operation(0))
    await session.applyHistoryTransaction(operation(0))

    // then: applied once more (the new generation's ids), and each call read the generation record alone
    expect(await session.getItems()).toEqual([userMessage('q0')])
    expect(reads.map((r) => r.rows)).toEqual([1, 1])
    const ledger = (await stores.get().load(session.ledgerSessionId)).messages
    expect(ledger.map((m) => m.payload)).toEqual([{ kind: 'generation' }])
    const [item] = (await stores.get().load(session.turnlogSessionId)).messages
    expect(item?.id).toBe(HistoryLedger.itemId(session.turnlogSessionId, HistoryLedger.generation(ledger), 'op-0', 0))
  })

  it('a ledger an earlier version left with its records live: replays of them are no-ops, and the next new operation retracts them', async () => {
    // given: two operations as the previous version recorded them (items under derived ids, records left live)
    const store = stores.get()
    const session = new TurnlogSession({ store, sessionId: `legacy-${randomUUID()}` })
    await session.getSessionId()
    const legacy: SessionHistoryTransactionArgs[] = [operation(0), operation(1)]
    for (const { operationId, transaction } of legacy) {
      const items = (transaction as { items: AgentInputItem[] }).items.map((item, j) =>
        agentItemMessage(item, HistoryLedger.itemId(session.turnlogSessionId, 'initial', operationId, j)),
      )
      await store.append(session.turnlogSessionId, items)
      // the hash as the session computes it: canonical JSON of the transaction with its items' stored form
      const hash = sha256Hex(canonicalJson({ type: 'append_items', items: items.map((m) => m.payload) } as unknown as JsonValue))
      const snapshot = { operationId, type: 'append_items', expectedSuffix: [], items: [], hash } as const
      await store.append(session.ledgerSessionId, [HistoryLedger.operationRecord(session.turnlogSessionId, 'initial', snapshot)])
    }
    expect((await store.getSession(session.ledgerSessionId)).liveCount).toBe(2)

    // when: a replay of each (no write), then a new operation
    const before = await versions(store, session)
    for (const args of legacy) await session.applyHistoryTransaction(args)
    const afterReplays = await versions(store, session)
    await session.applyHistoryTransaction(operation(2))

    // then: the replays wrote nothing, the new operation left the live list empty, and the old ids are still known
    expect(afterReplays).toEqual(before)
    expect((await store.getSession(session.ledgerSessionId)).liveCount).toBe(0)
    const items = await session.getItems()
    expect(items).toEqual([userMessage('q0'), assistantMessage('r2')])
    for (const args of legacy) await session.applyHistoryTransaction(args)
    expect(await session.getItems()).toEqual(items)
    const conflict = await session
      .applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [userMessage('other')] } })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(isTurnlogError(conflict, 'MESSAGE_CONFLICT')).toBe(true)
  })
})
