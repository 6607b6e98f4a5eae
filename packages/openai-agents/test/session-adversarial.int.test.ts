/**
 * Attacks `TurnlogSession` where the other suites do not: its lifecycle (the same conversation key
 * opened again by another instance with other session metadata, which the README says is "stored with
 * the session when it is created (on first use)"; a fork of the conversation, `store.fork` of
 * `turnlogSessionId` as the README suggests, opened by its id) and odd but valid text (NUL characters,
 * lone surrogates, a 1 MB string) in items, call ids, operation ids and the key, through every call,
 * against the SDK's own `MemorySession`.
 */
import { describe, expect, it } from '@jest/globals'
import { TurnlogSession } from '@turnlog/openai-agents'
import { MemorySession, type AgentInputItem } from '@openai/agents-core'
import { assistantMessage, compactionItem, functionCall, functionResult, userMessage } from './support/agent-items.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'
import { sameRealmCopy } from '../src/same-realm-copy.js'

// as in turnlog-session.prop.test.ts: under Jest, `structuredClone` makes objects of the outer realm,
// which MemorySession's own suffix check refuses; the model gets this realm's objects back
const outerStructuredClone = globalThis.structuredClone
globalThis.structuredClone = ((value: unknown, options?: Parameters<typeof structuredClone>[1]) =>
  sameRealmCopy(outerStructuredClone(value, options))) as typeof structuredClone

describe.each(STORE_KINDS)('TurnlogSession lifecycle and odd text (%s)', (kind) => {
  const stores = useStore(kind)

  it('a second instance of a conversation with other metadata reads and writes the same history', async () => {
    // given
    const first = new TurnlogSession({ store: stores.get(), sessionId: 'reopen-1', metadata: { startedAt: 1 } })
    await first.addItems([userMessage('a')])
    // when
    const second = new TurnlogSession({ store: stores.get(), sessionId: 'reopen-1', metadata: { startedAt: 2 } })
    await second.addItems([userMessage('b')])
    // then
    expect(await second.getItems()).toEqual([userMessage('a'), userMessage('b')])
    expect((await stores.get().getSession(second.turnlogSessionId)).metadata).toEqual({ startedAt: 1 })
  })

  it('a fork of a conversation (store.fork of turnlogSessionId) opens as a TurnlogSession by its id and continues on its own', async () => {
    // given
    const store = stores.get()
    const original = new TurnlogSession({ store, sessionId: 'fork-source' })
    await original.addItems([userMessage('a'), userMessage('b'), userMessage('c')])
    const at = (await store.load(original.turnlogSessionId)).messages[1]!.id
    const forkId = await store.fork(original.turnlogSessionId, { at })
    // when
    const branch = new TurnlogSession({ store, sessionId: forkId })
    await branch.addItems([userMessage('x')])
    // then
    expect(await branch.getItems()).toEqual([userMessage('a'), userMessage('b'), userMessage('x')])
    expect(await branch.popItem()).toEqual(userMessage('x'))
    expect(await original.getItems()).toEqual([userMessage('a'), userMessage('b'), userMessage('c')])
  })

  it('odd but valid text (NUL, lone surrogates, 1 MB) in items, call ids and operation ids: every call behaves as MemorySession', async () => {
    // given
    const odd = ['nul \u0000', 'lone \ud800', 'lone \udc00', '🦜\u2028', 'x'.repeat(1_000_000)]
    const session = new TurnlogSession({ store: stores.get(), sessionId: `odd-\u0000-\ud800-${kind}` })
    const model = new MemorySession()
    const both = async (apply: (s: TurnlogSession | MemorySession) => Promise<unknown>): Promise<void> => {
      expect(await apply(session)).toEqual(await apply(model))
      expect(await session.getItems()).toEqual(await model.getItems())
    }
    const call = functionCall('call \u0000 \ud800', '{"q":"\u0000"}')
    // when / then
    await both((s) => s.addItems([...odd.map(userMessage), call, functionResult('call \u0000 \ud800', odd[1] as string)]))
    await both((s) =>
      s.applyHistoryTransaction({
        operationId: 'op \u0000 \ud800',
        transaction: { type: 'append_items', items: [assistantMessage(odd[0] as string)] },
      }),
    )
    await both((s) =>
      s.applyHistoryTransaction({
        operationId: 'op \u0000 \udc00',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [assistantMessage(odd[0] as string)],
          replacement: [assistantMessage(odd[2] as string)],
        },
      }),
    )
    await both((s) =>
      s.applyHistoryMutations({
        mutations: [
          {
            type: 'replace_function_call',
            callId: 'call \u0000 \ud800',
            replacement: functionCall('call \u0000 \ud800', '{"q":"\ud800"}') as Extract<AgentInputItem, { type: 'function_call' }>,
          },
        ],
      }),
    )
    await both((s) => s.popItem())
    const current = await model.getItems()
    await session.replaceHistoryWithCompaction([compactionItem(odd[1] as string), ...current.slice(-2)])
    await model.applyHistoryTransaction({
      operationId: 'compaction',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: current,
        replacement: [compactionItem(odd[1] as string), ...current.slice(-2)],
      },
    })
    expect(await session.getItems()).toEqual(await model.getItems())
  })
})
