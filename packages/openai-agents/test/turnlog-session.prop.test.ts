/**
 * Model-based property: any sequence of session operations leaves `TurnlogSession` where the SDK's own
 * `MemorySession` (the model) is: the same `getItems()` after every step, the same `popItem()` results,
 * and the same outcome (applied, no-op, or refused) for every history transaction. On Postgres and
 * PGlite. `replaceHistoryWithCompaction` (which MemorySession lacks) is modelled as a `replace_suffix`
 * of the whole history under an operation id the generated ones never use.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { MemorySession, type AgentInputItem, type SessionHistoryTransaction } from '@openai/agents-core'
import { isTurnlogError } from '@turnlog/core'
import { TurnlogSession } from '@turnlog/openai-agents'
import { assistantMessage, compactionItem, functionCall, functionResult, userMessage } from './support/agent-items.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'
import { sameRealmCopy } from '../src/same-realm-copy.js'

// Under Jest, `structuredClone` is the outer realm's: the objects it makes are not this realm's plain
// objects, and MemorySession's own transaction check (which clones every item it stores) then refuses
// the items it holds. The model gets a clone whose objects are this realm's again.
const outerStructuredClone = globalThis.structuredClone
globalThis.structuredClone = ((value: unknown, options?: Parameters<typeof structuredClone>[1]) =>
  sameRealmCopy(outerStructuredClone(value, options))) as typeof structuredClone

/** A small pool, so equal items (same content, distinct messages) come up often. */
const itemArb: fc.Arbitrary<AgentInputItem> = fc.oneof(
  fc.constantFrom('a', 'b', 'c').map(userMessage),
  fc.constantFrom('x', 'y').map(assistantMessage),
  fc.tuple(fc.constantFrom('c1', 'c2'), fc.constantFrom('{}', '{"n":1}')).map(([callId, args]) => functionCall(callId, args)),
  fc.constantFrom('c1', 'c2').map((callId) => functionResult(callId, 'r')),
)
const itemsArb = fc.array(itemArb, { maxLength: 3 })
const operationIdArb = fc.constantFrom('op-a', 'op-b', 'op-c')

/** One step; `suffix` picks how many of the current items an expected suffix or a compaction retains. */
type Step =
  | { readonly kind: 'add'; readonly items: AgentInputItem[] }
  | { readonly kind: 'get'; readonly limit: number | undefined }
  | { readonly kind: 'pop' }
  | { readonly kind: 'clear' }
  | { readonly kind: 'append'; readonly operationId: string; readonly items: AgentInputItem[] }
  | {
      readonly kind: 'replace'
      readonly operationId: string
      readonly suffix: number
      readonly stale: AgentInputItem[] | null
      readonly items: AgentInputItem[]
    }
  | { readonly kind: 'mutate'; readonly callId: string; readonly args: string }
  | { readonly kind: 'compact'; readonly suffix: number; readonly extra: AgentInputItem[] }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: itemsArb.map((items): Step => ({ kind: 'add', items })), weight: 4 },
  fc.option(fc.integer({ min: -1, max: 5 }), { nil: undefined }).map((limit): Step => ({ kind: 'get', limit })),
  fc.constant<Step>({ kind: 'pop' }),
  { arbitrary: fc.constant<Step>({ kind: 'clear' }), weight: 1 },
  {
    arbitrary: fc.tuple(operationIdArb, itemsArb).map(([operationId, items]): Step => ({ kind: 'append', operationId, items })),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(operationIdArb, fc.nat({ max: 3 }), fc.option(fc.array(itemArb, { minLength: 1, maxLength: 2 }), { nil: null }), itemsArb)
      .map(([operationId, suffix, stale, items]): Step => ({ kind: 'replace', operationId, suffix, stale, items })),
    weight: 3,
  },
  fc.tuple(fc.constantFrom('c1', 'c2'), fc.constantFrom('{}', '{"n":2}')).map(([callId, args]): Step => ({ kind: 'mutate', callId, args })),
  fc.tuple(fc.nat({ max: 3 }), fc.array(itemArb, { maxLength: 1 })).map(([suffix, extra]): Step => ({ kind: 'compact', suffix, extra })),
)

/** What a call did: its value, or the kind of refusal. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await call() }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (isTurnlogError(error, 'MESSAGE_CONFLICT') || message.includes('already applied with a different transaction'))
      return { refused: 'operation' }
    if (isTurnlogError(error, 'VERSION_CONFLICT') || message.includes('suffix no longer matches')) return { refused: 'suffix' }
    throw error
  }
}

describe.each(STORE_KINDS)('TurnlogSession against MemorySession (%s)', (kind) => {
  const stores = useStore(kind)

  it('any sequence of session operations gives the items, pops and transaction outcomes of the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (steps) => {
        const session = new TurnlogSession({ store: stores.get(), sessionId: `prop-${randomUUID()}` })
        const model = new MemorySession()
        let compactions = 0
        for (const step of steps) {
          const current = await model.getItems()
          const both = async (apply: (s: TurnlogSession | MemorySession) => Promise<unknown>): Promise<void> => {
            const expected = await outcome(() => apply(model))
            expect(await outcome(() => apply(session))).toEqual(expected)
          }
          switch (step.kind) {
            case 'add':
              await both((s) => s.addItems(step.items))
              break
            case 'get':
              await both((s) => s.getItems(step.limit))
              break
            case 'pop':
              await both((s) => s.popItem())
              break
            case 'clear':
              await both((s) => s.clearSession())
              break
            case 'append':
              await both((s) =>
                s.applyHistoryTransaction({ operationId: step.operationId, transaction: { type: 'append_items', items: step.items } }),
              )
              break
            case 'replace': {
              const expectedSuffix = step.stale ?? current.slice(Math.max(current.length - step.suffix, 0))
              const transaction: SessionHistoryTransaction = { type: 'replace_suffix', expectedSuffix, replacement: step.items }
              await both((s) => s.applyHistoryTransaction({ operationId: step.operationId, transaction }))
              break
            }
            case 'mutate': {
              const replacement = functionCall(step.callId, step.args) as Extract<AgentInputItem, { type: 'function_call' }>
              await both((s) =>
                s.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: step.callId, replacement }] }),
              )
              break
            }
            case 'compact': {
              const items = [
                compactionItem(`enc-${compactions}`),
                ...current.slice(Math.max(current.length - step.suffix, 0)),
                ...step.extra,
              ]
              await session.replaceHistoryWithCompaction(items)
              await model.applyHistoryTransaction({
                operationId: `model-compaction-${compactions++}`,
                transaction: { type: 'replace_suffix', expectedSuffix: current, replacement: items },
              })
              break
            }
          }
          expect(await session.getItems()).toEqual(await model.getItems())
        }
      }),
      { numRuns: 40 },
    )
  })
})
