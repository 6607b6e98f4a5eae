import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { outOfOrder } from '../src/findings/out-of-order.js'

describe('outOfOrder', () => {
  it.each<[number[], number[]]>([
    [[], []],
    [[0, 1, 2, 3], []],
    [[0, 1, 3, 2, 4], [2]], // either of the swapped pair; the smaller tail is kept
    [[3, 0, 1, 2], [0]],
    [[0, 5, 1, 2, 3], [1]],
    [
      [2, 1, 0],
      [0, 1],
    ],
  ])('%j → %j', (positions, expected) => {
    expect([...outOfOrder(positions)].sort((a, b) => a - b)).toEqual(expected)
  })

  it('leaves a longest increasing subsequence, and the rest is the fewest moves', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 50 }), { maxLength: 12 }), (positions) => {
        // when
        const out = outOfOrder(positions)
        const kept = positions.filter((_, i) => !out.has(i))

        // then: what is kept is increasing, and no increasing subsequence is longer (checked by brute force on small inputs)
        expect(kept.every((p, i) => i === 0 || (kept[i - 1] as number) < p)).toBe(true)
        expect(kept.length).toBe(longestIncreasing(positions))
      }),
    )
  })
})

/** O(n²) reference. */
function longestIncreasing(a: readonly number[]): number {
  const best = a.map(() => 1)
  for (let i = 0; i < a.length; i++)
    for (let j = 0; j < i; j++) if ((a[j] as number) < (a[i] as number)) best[i] = Math.max(best[i] as number, (best[j] as number) + 1)
  return Math.max(0, ...best)
}
