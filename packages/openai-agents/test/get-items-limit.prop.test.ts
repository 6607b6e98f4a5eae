/**
 * Differential property: `getItems(limit)` of `TurnlogSession` returns what the SDK's own `MemorySession`
 * returns for the same items and the same `limit`, for every number: negative, zero (also `-0`),
 * fractional, huge, `±Infinity` and `NaN` (which `MemorySession` answers with every item). Regression:
 * `getItems(NaN)` threw `INVALID_INPUT` where `MemorySession` returns the whole history (adversarial
 * review). A `limit` that is not a number (and not `undefined`) is the one documented difference:
 * `INVALID_INPUT` with `details.field: 'limit'`. On Postgres and PGlite.
 */
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { MemorySession, type AgentInputItem } from '@openai/agents-core'
import { TurnlogSession } from '@turnlog/openai-agents'
import { rejection } from '@turnlog/testing'
import { assistantMessage, functionCall, functionResult, userMessage } from './support/agent-items.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

/** The longest history the property uses. */
const MAX_ITEMS = 6
const ITEMS: AgentInputItem[] = [
  userMessage('q1'),
  functionCall('c1', '{}'),
  functionResult('c1', 'r1'),
  assistantMessage('a1'),
  userMessage('q2'),
  assistantMessage('a2'),
]

/** Every kind of number a caller could pass, the odd ones often. */
const limitArb: fc.Arbitrary<number | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: -3, max: MAX_ITEMS + 2 }),
  fc.double({ min: -(MAX_ITEMS + 2), max: MAX_ITEMS + 2, noNaN: true }),
  fc.double(), // NaN, ±Infinity, -0, subnormals, ±MAX_VALUE
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0.5,
    1.5,
    2.5,
    -0.5,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    Number.EPSILON,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    Number.MAX_VALUE,
  ),
)

describe.each(STORE_KINDS)('getItems(limit) against MemorySession (%s)', (kind) => {
  const stores = useStore(kind)
  /** Index n: a session pair holding the first n items. */
  const pairs: { turnlog: TurnlogSession; model: MemorySession }[] = []

  beforeAll(async () => {
    for (let n = 0; n <= MAX_ITEMS; n++) {
      const turnlog = new TurnlogSession({ store: stores.get(), sessionId: `limit-${String(n)}-${randomUUID()}` })
      const model = new MemorySession()
      await turnlog.addItems(ITEMS.slice(0, n))
      await model.addItems(ITEMS.slice(0, n))
      pairs.push({ turnlog, model })
    }
  })

  it('every number as limit, over histories of 0 to 6 items: the items MemorySession returns', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: MAX_ITEMS }), limitArb, async (n, limit) => {
        // given
        const pair = pairs[n]
        if (pair === undefined) throw new Error(`no session pair with ${String(n)} items`)

        // when
        const expected = await pair.model.getItems(limit)
        const actual = await pair.turnlog.getItems(limit)

        // then
        expect(actual).toEqual(expected)
      }),
      { numRuns: 300 },
    )
  })

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, -1, 0.5, 2.5, 3.5])(
    'limit %p: the same items as MemorySession',
    async (limit) => {
      // given
      const pair = pairs[3]
      if (pair === undefined) throw new Error('no session pair with 3 items')

      // when / then
      expect(await pair.turnlog.getItems(limit)).toEqual(await pair.model.getItems(limit))
    },
  )

  it.each<[string, unknown]>([
    ['null', null],
    ['a numeric string', '2'],
    ['an empty string', ''],
    ['a bigint', 2n],
    ['an object', { valueOf: () => 2 }],
    ['a boolean', true],
  ])('a limit that is not a number (%s): INVALID_INPUT naming limit (MemorySession coerces it)', async (_what, limit) => {
    // given
    const pair = pairs[3]
    if (pair === undefined) throw new Error('no session pair with 3 items')

    // when
    const error = await rejection(pair.turnlog.getItems(limit as number))

    // then
    expect(error).toMatchObject({ name: 'TurnlogError', code: 'INVALID_INPUT', details: { field: 'limit' } })
  })
})
