/**
 * The JSON nesting limit in core. Incident: a deeply nested value (5,000 levels and more) reached
 * recursive walkers (`canonicalJson`, `contentHash`, `isDeepFrozen` via `primeContentHash`) and came out
 * as a raw `RangeError: Maximum call stack size exceeded`. Every entry point of core that takes a JSON
 * value now answers any nesting, and cycles, with a typed error, and `jsonDepth` measures any depth
 * without recursion.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  MAX_JSON_DEPTH,
  canonicalJson,
  checkJsonDepth,
  contentHash,
  createMessage,
  isTurnlogError,
  jsonDepth,
  parseMessage,
  primeContentHash,
  toFrozenJson,
  toMessage,
} from '@turnlog/core'

function nest(levels: number, leaf: unknown = 'leaf', array = false): unknown {
  let v: unknown = leaf
  for (let i = 0; i < levels; i++) v = array ? [v] : { a: v }
  return v
}

/** The obvious recursive definition, for small values. */
function depthOf(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0
  const items = Array.isArray(v) ? v : Object.values(v)
  return 1 + items.reduce<number>((m, i) => Math.max(m, depthOf(i)), 0)
}

function caught(f: () => unknown): unknown {
  try {
    f()
    return undefined
  } catch (e) {
    return e
  }
}

/** JSON text of a value made by {@link nest}, without recursion (JSON.stringify overflows on it). */
function chainText(value: unknown): string {
  let open = ''
  let close = ''
  let v = value
  while (typeof v === 'object' && v !== null) {
    if (Array.isArray(v)) {
      open += '['
      close = ']' + close
      v = (v as unknown[])[0]
    } else {
      open += '{"a":'
      close = '}' + close
      v = (v as { a: unknown }).a
    }
  }
  return open + (JSON.stringify(v) ?? 'null') + close
}

/** Every core entry point that takes a caller's JSON value, applied to a payload field holding `deep`. */
const ENTRY_POINTS: Record<string, (deep: unknown) => unknown> = {
  createMessage: (deep) => createMessage({ role: 'user', content: 'x', deep }),
  toMessage: (deep) =>
    toMessage({
      id: '01890a5d-ac96-774b-bcce-b302099a8057',
      payload: { role: 'user', content: 'x', deep },
      createdAt: '2026-01-01T00:00:00Z',
    }),
  parseMessage: (deep) =>
    parseMessage(
      `{"id":"01890a5d-ac96-774b-bcce-b302099a8057","createdAt":"2026-01-01T00:00:00Z","payload":{"role":"user","content":"x","deep":${chainText(deep)}}}`,
    ),
  toFrozenJson: (deep) => toFrozenJson(deep),
  canonicalJson: (deep) => canonicalJson(deep),
  contentHash: (deep) => contentHash({ role: 'user', content: 'x', deep } as never),
  checkJsonDepth: (deep) => checkJsonDepth(deep, 'value'),
}

describe('jsonDepth', () => {
  it('equals the recursive definition on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => expect(jsonDepth(v, 1000)).toBe(depthOf(v))),
      { numRuns: 300 },
    )
  })

  it('measures 1,000,000 levels and a cycle without a stack overflow, stopping past the limit', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = [cyclic]
    expect(jsonDepth(nest(1_000_000))).toBe(MAX_JSON_DEPTH + 1)
    expect(jsonDepth(nest(1_000_000, 'leaf', true), 2_000_000)).toBe(1_000_000)
    expect(jsonDepth(cyclic)).toBe(MAX_JSON_DEPTH + 1)
    expect(jsonDepth(nest(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH)
  })
})

describe('core entry points and deep JSON', () => {
  it.each([5_000, 100_000])('refuses %i levels with a typed error, never a RangeError (incident)', (levels) => {
    for (const [name, call] of Object.entries(ENTRY_POINTS)) {
      const e = caught(() => call(nest(levels)))
      expect([name, isTurnlogError(e) && ['INVALID_MESSAGE', 'INVALID_INPUT'].includes(e.code)]).toEqual([name, true])
    }
    // primeContentHash walks a caller's frozen value to see if it is frozen all the way down
    const frozen = nest(levels) as object
    for (let v: unknown = frozen; typeof v === 'object' && v !== null; v = (v as { a: unknown }).a) Object.freeze(v)
    expect(caught(() => primeContentHash(frozen, 'x'))).toBeUndefined()
  })

  it('refuses a circular payload in contentHash and canonicalJson with INVALID_INPUT', () => {
    const cyclic: Record<string, unknown> = { role: 'user', content: 'x' }
    cyclic['self'] = cyclic
    expect(
      isTurnlogError(
        caught(() => contentHash(cyclic as never)),
        'INVALID_INPUT',
      ),
    ).toBe(true)
    expect(
      isTurnlogError(
        caught(() => canonicalJson(cyclic)),
        'INVALID_INPUT',
      ),
    ).toBe(true)
  })

  it('accepts exactly MAX_JSON_DEPTH levels everywhere and refuses one more (property over shapes)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * MAX_JSON_DEPTH }), fc.boolean(), fc.jsonValue({ maxDepth: 0 }), (levels, array, leaf) => {
        // given: a payload is one level itself
        const deep = nest(levels, leaf, array)
        const fits = levels + 1 <= MAX_JSON_DEPTH
        for (const [name, call] of Object.entries(ENTRY_POINTS)) {
          const own = name === 'toFrozenJson' || name === 'canonicalJson' || name === 'checkJsonDepth' ? levels <= MAX_JSON_DEPTH : fits
          // when
          const e = caught(() => call(deep))
          // then
          if (own) expect([name, levels, e]).toEqual([name, levels, undefined])
          else
            expect([name, levels, isTurnlogError(e) && ['INVALID_MESSAGE', 'INVALID_INPUT'].includes(e.code)]).toEqual([name, levels, true])
        }
      }),
      { numRuns: 200 },
    )
  })

  it('refuses a toFrozenJson maxDepth the copy cannot recurse to', () => {
    for (const maxDepth of [0, -1, 1.5, Number.NaN, 1001, 1e9]) {
      expect([
        maxDepth,
        isTurnlogError(
          caught(() => toFrozenJson({}, { maxDepth })),
          'INVALID_INPUT',
        ),
      ]).toEqual([maxDepth, true])
    }
    expect(toFrozenJson(nest(999), { maxDepth: 1000 })).toEqual(nest(999))
  })
})
