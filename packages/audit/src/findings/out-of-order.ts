/**
 * The indices of `positions` that are out of order: everything outside one longest strictly
 * increasing subsequence (the fewest items that, moved, restore the order). O(n log n).
 */
export function outOfOrder(positions: readonly number[]): Set<number> {
  const tails: number[] = [] // index into positions of the smallest tail of an increasing run of each length
  const prev: number[] = new Array<number>(positions.length).fill(-1)
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i] as number
    let lo = 0
    let hi = tails.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((positions[tails[mid] as number] as number) < p) lo = mid + 1
      else hi = mid
    }
    if (lo > 0) prev[i] = tails[lo - 1] as number
    tails[lo] = i
  }
  const keep = new Set<number>()
  for (let i = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; i >= 0; i = prev[i] as number) keep.add(i)
  const out = new Set<number>()
  for (let i = 0; i < positions.length; i++) if (!keep.has(i)) out.add(i)
  return out
}
