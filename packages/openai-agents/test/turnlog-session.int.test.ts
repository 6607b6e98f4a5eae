/**
 * `TurnlogSession` against the Agents SDK's own `MemorySession` test cases (ported from
 * `packages/agents-core/test/memorySession.test.ts` of openai/openai-agents-js) and the SDK's
 * session-persistence review checklist (`.agents/references/session-persistence.md`: ordering, limits,
 * clone isolation, append, pop, clear, rewrite semantics, destructive replacement that fails), on
 * Postgres and on PGlite: one suite, both stores. Where turnlog differs from the in-memory session
 * (binary data, which has no JSON form) the test says so.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { AgentInputItem, SessionHistoryTransactionArgs } from '@openai/agents-core'
import { isTurnlogError, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { HistoryLedger, TURNLOG_SESSION_REASONS, TurnlogSession } from '@turnlog/openai-agents'
import { rejection } from '@turnlog/testing'
import { assistantMessage, compactionItem, functionCall, functionResult, userMessage } from './support/agent-items.js'
import { ledgerRecords } from './support/ledger-records.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

async function eventsOf(store: PostgresStore, sessionId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const event of store.events(sessionId)) out.push(event)
  return out
}

describe.each(STORE_KINDS)('TurnlogSession (%s)', (kind) => {
  const stores = useStore(kind)
  const open = async (initialItems: AgentInputItem[] = [], sessionId: string = `session-${randomUUID()}`): Promise<TurnlogSession> => {
    const session = new TurnlogSession({ store: stores.get(), sessionId })
    await session.addItems(initialItems)
    return session
  }

  describe('the SDK MemorySession cases', () => {
    it('stores and retrieves items', async () => {
      // given
      const initialItems = [userMessage('hello')]
      const key = `session-1-${randomUUID()}`
      const session = await open(initialItems, key)

      // when / then
      expect(await session.getSessionId()).toBe(key)
      expect(await session.getItems()).toEqual(initialItems)
      const newItems = [userMessage('one'), userMessage('two')]
      await session.addItems(newItems)
      expect(await session.getItems()).toEqual([...initialItems, ...newItems])
      expect(await session.getItems(2)).toEqual(newItems)
      expect(await session.popItem()).toEqual(newItems[1])
      expect(await session.getItems()).toEqual([...initialItems, newItems[0]])
      await session.clearSession()
      expect(await session.getItems()).toEqual([])
      expect(await session.getItems(3)).toEqual([])
      expect(await session.popItem()).toBeUndefined()
    })

    it('returns clones so external mutations do not persist', async () => {
      // given
      const initial = userMessage('start')
      const session = await open([initial])

      // when: every value handed in or out is changed by the caller
      const items = await session.getItems()
      expect(items[0]).not.toBe(initial)
      ;(items[0] as { content: unknown }).content = 'mutated'
      const next = userMessage('next')
      await session.addItems([next])
      ;(next as { content: unknown }).content = 'mutated'

      // then
      expect(await session.getItems()).toEqual([userMessage('start'), userMessage('next')])
      const popped = await session.popItem()
      expect(popped).toEqual(userMessage('next'))
      ;(popped as { content: unknown }).content = 'mutated'
      expect(await session.getItems()).toEqual([userMessage('start')])
    })

    it('applies history mutations atomically: the first call is revised, the duplicate retracted', async () => {
      // given
      const session = await open([
        userMessage('start'),
        functionCall('call-1', '{"ok":false}', 'call-old-1'),
        functionCall('call-1', '{"duplicate":true}', 'call-old-2'),
      ])
      const before = (await stores.get().load(session.turnlogSessionId)).messages
      const replacement = functionCall('call-1', '{"ok":true}', 'call-new')

      // when
      await session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'call-1', replacement: replacement as never }],
      })

      // then
      expect(await session.getItems()).toEqual([userMessage('start'), replacement])
      const after = (await stores.get().load(session.turnlogSessionId)).messages
      expect(after.map((m) => m.id)).toEqual([before[0]?.id, before[1]?.id]) // the call kept its message id
      const events = await eventsOf(stores.get(), session.turnlogSessionId)
      // one sync: the duplicate's retraction (data.sync) and the call's revision
      expect(events.slice(3).map((e) => e.type)).toEqual(['messages_retracted', 'message_revised'])
      expect(events[3]?.data).toMatchObject({ ids: [before[2]?.id], sync: true })
      expect(events[4]?.messageId).toBe(before[1]?.id)
    })

    it('applies append transactions idempotently', async () => {
      // given
      const session = await open([userMessage('start')])
      const appended = userMessage('committed')
      const args = { operationId: 'operation-append-1', transaction: { type: 'append_items' as const, items: [appended] } }

      // when
      await session.applyHistoryTransaction(args)
      ;(appended as { content: unknown }).content = 'mutated'
      await session.addItems([userMessage('later')])
      await session.applyHistoryTransaction({
        operationId: args.operationId,
        transaction: { type: 'append_items', items: [userMessage('committed')] },
      })

      // then
      expect(await session.getItems()).toEqual([userMessage('start'), userMessage('committed'), userMessage('later')])
    })

    it('replaces an exact history suffix idempotently', async () => {
      // given
      const prefix = userMessage('start')
      const expected = userMessage('blocked')
      const replacement = userMessage('accepted')
      const session = await open([prefix, expected])
      const transaction = {
        operationId: 'operation-replace-1',
        transaction: { type: 'replace_suffix' as const, expectedSuffix: [expected], replacement: [replacement] },
      }

      // when
      await session.applyHistoryTransaction(transaction)
      await session.addItems([userMessage('later')])
      await session.applyHistoryTransaction(transaction)

      // then
      expect(await session.getItems()).toEqual([prefix, replacement, userMessage('later')])
    })

    it('rejects a suffix mismatch without recording the operation', async () => {
      // given
      const start = userMessage('start')
      const session = await open([start])

      // when
      const error = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-replace-after-conflict',
          transaction: { type: 'replace_suffix', expectedSuffix: [userMessage('different')], replacement: [userMessage('accepted')] },
        }),
      )

      // then
      expect(error).toMatchObject({
        code: 'VERSION_CONFLICT',
        details: { reason: 'stale_suffix', operationId: 'operation-replace-after-conflict' },
      })
      expect((error as Error).message).toContain('suffix no longer matches')
      expect(await session.getItems()).toEqual([start])
      await session.applyHistoryTransaction({
        operationId: 'operation-replace-after-conflict',
        transaction: { type: 'replace_suffix', expectedSuffix: [start], replacement: [userMessage('accepted')] },
      })
      expect(await session.getItems()).toEqual([userMessage('accepted')])
    })

    it('rejects operation id reuse with different content', async () => {
      // given
      const session = await open()
      await session.applyHistoryTransaction({
        operationId: 'operation-conflict',
        transaction: { type: 'append_items', items: [userMessage('first')] },
      })

      // when
      const error = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-conflict',
          transaction: { type: 'append_items', items: [userMessage('second')] },
        }),
      )

      // then
      expect(error).toMatchObject({ code: 'MESSAGE_CONFLICT', details: { operationId: 'operation-conflict' } })
      expect((error as Error).message).toContain('already applied with a different transaction')
      expect(await session.getItems()).toEqual([userMessage('first')])
    })

    it('records an empty append transaction', async () => {
      // given
      const session = await open()
      await session.applyHistoryTransaction({ operationId: 'operation-empty', transaction: { type: 'append_items', items: [] } })

      // when
      const error = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-empty',
          transaction: { type: 'append_items', items: [userMessage('unexpected')] },
        }),
      )

      // then
      expect(isTurnlogError(error, 'MESSAGE_CONFLICT')).toBe(true)
      expect(await session.getItems()).toEqual([])
    })

    it('resets transaction identities when the session is cleared', async () => {
      // given
      const session = await open()
      const transaction = {
        operationId: 'operation-after-reset',
        transaction: { type: 'append_items' as const, items: [userMessage('committed')] },
      }
      await session.applyHistoryTransaction(transaction)

      // when
      await session.clearSession()
      await session.applyHistoryTransaction(transaction)

      // then: applied again, under new (next generation) message ids
      expect(await session.getItems()).toEqual([userMessage('committed')])
      const { entries } = await stores.get().transcript(session.turnlogSessionId)
      expect(entries.map((e) => e.status)).toEqual(['retracted', 'live'])
      expect(new Set(entries.map((e) => e.message.id)).size).toBe(2)
    })

    it('rejects invalid transaction input before mutation', async () => {
      // given
      const start = userMessage('start')
      const session = await open([start])

      // when / then
      const cases: [unknown, string][] = [
        [{ operationId: '   ', transaction: { type: 'append_items', items: [] } }, 'operationId must be a non-empty string'],
        [{ operationId: 'operation-unknown', transaction: { type: 'unknown' } }, 'unsupported session history transaction type'],
        [{ operationId: 'operation-missing-transaction', transaction: null }, 'transaction must be an object'],
        [
          { operationId: 'operation-invalid-item', transaction: { type: 'append_items', items: [42] } },
          'items contain invalid or unsupported data',
        ],
      ]
      for (const [args, message] of cases) {
        const error = await rejection(session.applyHistoryTransaction(args as SessionHistoryTransactionArgs))
        expect(error).toMatchObject({ code: 'INVALID_INPUT' })
        expect((error as Error).message).toContain(message)
      }
      expect(await session.getItems()).toEqual([start])
    })

    it('rejects unsupported transaction metadata before mutation (a Date, a cycle, a bigint, a hole)', async () => {
      // given
      const start = userMessage('start')
      const session = await open([start])
      const withDate = { ...userMessage('unsupported'), providerData: { timestamp: new Date(0) } }
      const cycle: Record<string, unknown> = {}
      cycle['self'] = cycle
      const withCycle = { ...userMessage('cyclic'), providerData: cycle }
      const withBigInt = { ...userMessage('bigint'), providerData: { value: 42n } }
      const sparse = new Array<AgentInputItem>(1)

      // when / then
      for (const [operationId, items] of [
        ['operation-date', [withDate]],
        ['operation-cycle', [withCycle]],
        ['operation-bigint', [withBigInt]],
        ['operation-sparse', sparse],
      ] as const) {
        const error = await rejection(
          session.applyHistoryTransaction({ operationId, transaction: { type: 'append_items', items: items as AgentInputItem[] } }),
        )
        expect(error).toMatchObject({
          code: 'INVALID_INPUT',
          message: 'session history transaction items contain invalid or unsupported data',
        })
      }
      expect(await session.getItems()).toEqual([start])
    })

    it('rejects unexpected transaction fields before mutation, and the operation id stays free', async () => {
      // given
      const start = userMessage('start')
      const session = await open([start])

      // when
      const append = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-unexpected-append-field',
          transaction: { type: 'append_items', items: [userMessage('unsupported')], metadata: { attempt: 1 } } as never,
        }),
      )
      const suffix = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-unexpected-suffix-field',
          transaction: {
            type: 'replace_suffix',
            expectedSuffix: [start],
            replacement: [userMessage('x')],
            metadata: { attempt: 1 },
          } as never,
        }),
      )

      // then
      expect((append as Error).message).toContain('append transaction fields are invalid')
      expect((suffix as Error).message).toContain('suffix transaction fields are invalid')
      expect(await session.getItems()).toEqual([start])
      const retryItem = userMessage('retry')
      await session.applyHistoryTransaction({
        operationId: 'operation-unexpected-append-field',
        transaction: { type: 'append_items', items: [retryItem] },
      })
      expect(await session.getItems()).toEqual([start, retryItem])
    })

    it('does not expose transaction content in snapshot errors', async () => {
      // given
      const session = await open()
      const item = { ...userMessage('unsupported'), providerData: { secret: Symbol('api-key-secret') } }

      // when
      const error = await rejection(
        session.applyHistoryTransaction({
          operationId: 'operation-sensitive-invalid',
          transaction: { type: 'append_items', items: [item] },
        }),
      )

      // then
      expect((error as Error).message).toBe('session history transaction items contain invalid or unsupported data')
      expect((error as Error).message).not.toContain('api-key-secret')
      expect(await session.getItems()).toEqual([])
    })

    it('refuses binary data (no JSON form; the in-memory session copies it) and keeps the operation id free', async () => {
      // given
      const session = await open()
      const bytes = { ...userMessage('binary'), providerData: { bytes: new Uint8Array([3, 7]) } }
      const typed = { ...userMessage('typed'), providerData: { values: new Uint16Array([300]) } }

      // when / then
      for (const item of [bytes, typed]) {
        const error = await rejection(
          session.applyHistoryTransaction({ operationId: 'operation-binary', transaction: { type: 'append_items', items: [item] } }),
        )
        expect(error).toMatchObject({ code: 'INVALID_INPUT' })
      }
      expect(await session.getItems()).toEqual([])
      await session.applyHistoryTransaction({
        operationId: 'operation-binary',
        transaction: { type: 'append_items', items: [userMessage('accepted-after-rejections')] },
      })
      expect(await session.getItems()).toEqual([userMessage('accepted-after-rejections')])
    })

    it('canonicalizes ordinary object prototypes for retries and suffixes', async () => {
      // given
      const session = await open()
      const appended = { ...userMessage('canonical'), providerData: Object.assign(Object.create(null) as object, { source: 'provider' }) }

      // when
      await session.applyHistoryTransaction({
        operationId: 'operation-canonical-append',
        transaction: { type: 'append_items', items: [appended] },
      })
      const [roundTripped] = await session.getItems()
      await session.applyHistoryTransaction({
        operationId: 'operation-canonical-append',
        transaction: { type: 'append_items', items: [roundTripped as AgentInputItem] },
      })
      await session.applyHistoryTransaction({
        operationId: 'operation-canonical-replace',
        transaction: { type: 'replace_suffix', expectedSuffix: [appended], replacement: [userMessage('replaced')] },
      })

      // then
      expect(await session.getItems()).toEqual([userMessage('replaced')])
    })

    it('reads the transaction envelope once and does not quote accessor errors', async () => {
      // given
      const session = await open()
      let reads = 0
      const args = { transaction: { type: 'append_items' as const, items: [userMessage('once')] } } as SessionHistoryTransactionArgs
      Object.defineProperty(args, 'operationId', {
        enumerable: true,
        get: () => {
          reads++
          return reads === 1 ? 'operation-read-once' : 'changed'
        },
      })

      // when
      await session.applyHistoryTransaction(args)
      expect(reads).toBe(1)
      reads = 0
      await session.applyHistoryTransaction(args)

      // then
      expect(reads).toBe(1)
      expect(await session.getItems()).toEqual([userMessage('once')])
      const throwing = {} as SessionHistoryTransactionArgs
      Object.defineProperty(throwing, 'operationId', {
        get: () => {
          throw new Error('api-key-secret')
        },
      })
      const error = await rejection(session.applyHistoryTransaction(throwing))
      expect(error).toMatchObject({ code: 'INVALID_INPUT', message: 'session history transaction arguments are invalid' })
    })
  })

  describe('the session-persistence checklist', () => {
    it('getItems(limit): the latest items in chronological order; none for 0 or less; all when larger', async () => {
      // given
      const items = ['a', 'b', 'c', 'd'].map(userMessage)
      const session = await open(items)

      // then
      expect(await session.getItems(1)).toEqual(items.slice(3))
      expect(await session.getItems(3)).toEqual(items.slice(1))
      expect(await session.getItems(10)).toEqual(items)
      expect(await session.getItems(0)).toEqual([])
      expect(await session.getItems(-2)).toEqual([])
      await expect(session.getItems('2' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    })

    it('keeps the order of many appends and reopens the same conversation by key', async () => {
      // given
      const key = `user-${randomUUID()}`
      const first = await open([], key)
      for (let i = 0; i < 5; i++) await first.addItems([userMessage(`q${i}`), assistantMessage(`a${i}`)])

      // when
      const reopened = new TurnlogSession({ store: stores.get(), sessionId: key })

      // then
      expect(reopened.turnlogSessionId).toBe(first.turnlogSessionId)
      expect(await reopened.getItems()).toEqual([0, 1, 2, 3, 4].flatMap((i) => [userMessage(`q${i}`), assistantMessage(`a${i}`)]))
    })

    it('popItem and clearSession are retraction events; nothing is deleted', async () => {
      // given
      const session = await open([userMessage('q'), assistantMessage('a'), userMessage('q2')])

      // when
      await session.popItem()
      await session.clearSession()

      // then
      const events = await eventsOf(stores.get(), session.turnlogSessionId)
      const retractions = events.filter((e) => e.type === 'messages_retracted')
      expect(retractions.map((e) => (e.data as { reason?: string }).reason)).toEqual([
        TURNLOG_SESSION_REASONS.popItem,
        TURNLOG_SESSION_REASONS.clearSession,
      ])
      expect(retractions.map((e) => (e.data as { readonly ids: readonly string[] }).ids.length)).toEqual([1, 2])
      const { entries } = await stores.get().transcript(session.turnlogSessionId)
      expect(entries.map((e) => e.status)).toEqual(['retracted', 'retracted', 'retracted'])
      expect(await session.getItems()).toEqual([])
    })

    it('an invalid item in addItems writes nothing of the batch', async () => {
      // given
      const session = await open([userMessage('start')])

      // when
      const error = await rejection(session.addItems([userMessage('ok'), { type: 'function_call', call_id: 'snake' } as never]))

      // then
      expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
      expect(await session.getItems()).toEqual([userMessage('start')])
    })

    it('transaction items get ids derived from the operation id, scoped to the session and generation', async () => {
      // given
      const session = await open()
      const items = [userMessage('x'), assistantMessage('y')]

      // when
      await session.applyHistoryTransaction({ operationId: 'op-ids', transaction: { type: 'append_items', items } })

      // then
      const ids = (await stores.get().load(session.turnlogSessionId)).messages.map((m) => m.id)
      expect(ids).toEqual([0, 1].map((i) => HistoryLedger.itemId(session.turnlogSessionId, 'initial', 'op-ids', i)))
      const ledger = await ledgerRecords(stores.get(), session.ledgerSessionId)
      expect(ledger).toEqual([expect.objectContaining({ kind: 'history_transaction', operationId: 'op-ids' })])
      expect((await stores.get().load(session.ledgerSessionId)).messages).toEqual([]) // retracted in its own transaction
    })

    it('replace_suffix keeps the unchanged leading items of the replacement (same ids) and retracts the rest', async () => {
      // given
      const session = await open([userMessage('q'), assistantMessage('blocked'), functionCall('c1', '{}')])
      const before = (await stores.get().load(session.turnlogSessionId)).messages

      // when
      await session.applyHistoryTransaction({
        operationId: 'op-keep',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [userMessage('q'), assistantMessage('blocked'), functionCall('c1', '{}')],
          replacement: [userMessage('q'), assistantMessage('accepted')],
        },
      })

      // then
      const after = (await stores.get().load(session.turnlogSessionId)).messages
      expect(after.map((m) => m.payload)).toEqual([userMessage('q'), assistantMessage('accepted')])
      expect(after[0]?.id).toBe(before[0]?.id)
      const retraction = (await eventsOf(stores.get(), session.turnlogSessionId)).find((e) => e.type === 'messages_retracted')
      expect(retraction?.data).toMatchObject({ ids: [before[1]?.id, before[2]?.id], reason: TURNLOG_SESSION_REASONS.replaceSuffix })
    })

    it('replaceHistoryWithCompaction: one turnlog compaction; retained items keep their ids; a repeat is a no-op', async () => {
      // given
      const old = [userMessage('q1'), assistantMessage('a1'), functionCall('c1', '{}'), functionResult('c1', 'r')]
      const session = await open([...old, userMessage('q2'), assistantMessage('a2')])
      const before = (await stores.get().load(session.turnlogSessionId)).messages
      const replacement = [compactionItem('enc'), userMessage('q2'), assistantMessage('a2')]

      // when
      await session.replaceHistoryWithCompaction(replacement)
      await session.replaceHistoryWithCompaction(replacement)

      // then
      expect(await session.getItems()).toEqual(replacement)
      const after = (await stores.get().load(session.turnlogSessionId)).messages
      expect(after.slice(1).map((m) => m.id)).toEqual(before.slice(4).map((m) => m.id))
      const events = await eventsOf(stores.get(), session.turnlogSessionId)
      const compactions = events.filter((e) => e.type === 'messages_compacted')
      expect(compactions).toHaveLength(1)
      expect(compactions[0]?.data).toMatchObject({ reason: TURNLOG_SESSION_REASONS.compaction, summary: [after[0]?.id] })
      expect((compactions[0]?.data as { readonly covered: readonly { readonly id: string }[] }).covered.map((c) => c.id)).toEqual(
        before.slice(0, 4).map((m) => m.id),
      )
    })

    it('replaceHistoryWithCompaction with new retained items, on an empty history, and with an empty list', async () => {
      // given
      const session = await open([userMessage('q1'), assistantMessage('a1')])
      const empty = await open()

      // when / then: retained items not in the history are summary messages after the marker
      await session.replaceHistoryWithCompaction([compactionItem('e1'), userMessage('new')])
      expect(await session.getItems()).toEqual([compactionItem('e1'), userMessage('new')])
      await empty.replaceHistoryWithCompaction([compactionItem('e2')])
      expect(await empty.getItems()).toEqual([compactionItem('e2')])
      await empty.replaceHistoryWithCompaction([])
      expect(await empty.getItems()).toEqual([])
    })

    it('a failing destructive replacement changes nothing (an invalid item, a stale suffix)', async () => {
      // given
      const items = [userMessage('q1'), assistantMessage('a1')]
      const session = await open(items)
      const version = (await stores.get().getSession(session.turnlogSessionId)).version

      // when
      const invalidItem = await rejection(session.replaceHistoryWithCompaction([compactionItem('e'), { type: 'function_call' } as never]))
      const stale = await rejection(
        session.applyHistoryTransaction({
          operationId: 'op-stale',
          transaction: { type: 'replace_suffix', expectedSuffix: [assistantMessage('other')], replacement: [] },
        }),
      )

      // then
      expect(isTurnlogError(invalidItem, 'INVALID_MESSAGE')).toBe(true)
      expect(isTurnlogError(stale, 'VERSION_CONFLICT')).toBe(true)
      expect(await session.getItems()).toEqual(items)
      expect((await stores.get().getSession(session.turnlogSessionId)).version).toBe(version)
      expect(await ledgerRecords(stores.get(), session.ledgerSessionId)).toEqual([])
    })

    it('applyHistoryMutations without a matching call, or with no mutations, writes nothing', async () => {
      // given
      const session = await open([userMessage('q'), functionCall('c1', '{}')])
      const version = (await stores.get().getSession(session.turnlogSessionId)).version

      // when
      await session.applyHistoryMutations({ mutations: [] })
      await session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'other', replacement: functionCall('other', '{}') as never }],
      })
      await session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: functionCall('c1', '{}') as never }],
      })

      // then
      expect((await stores.get().getSession(session.turnlogSessionId)).version).toBe(version)
      await expect(
        session.applyHistoryMutations({
          mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: userMessage('no') as never }],
        }),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    })

    it('creates both sessions in the tenant, with the metadata given', async () => {
      // given
      const session = new TurnlogSession({ store: stores.get(), tenantId: 'acme', metadata: { app: 'support-bot' } })

      // when
      await session.addItems([userMessage('hi')])

      // then
      expect(await stores.get().getSession(session.turnlogSessionId)).toMatchObject({
        tenantId: 'acme',
        metadata: { app: 'support-bot' },
        liveCount: 1,
      })
      expect(await stores.get().getSession(session.ledgerSessionId)).toMatchObject({ tenantId: 'acme', liveCount: 0 })
    })

    it('refuses a malformed config and a store without atomically', () => {
      const store = stores.get()
      expect(() => new TurnlogSession(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
      expect(() => new TurnlogSession({ store, sessionId: '' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
      const { atomically: _dropped, ...withoutAtomically } = { load: store.load.bind(store), atomically: undefined }
      expect(() => new TurnlogSession({ store: withoutAtomically as never })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    })
  })
})
