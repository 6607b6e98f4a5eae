import { canonicalJson, type OpenAIAgentsItem } from '@turnlog/core'

/** What {@link planCompaction} decided. */
export type CompactionPlan =
  /** The history already is the replacement: nothing to write. */
  | { readonly kind: 'unchanged' }
  /** The history is empty: append the replacement. */
  | { readonly kind: 'append'; readonly items: readonly OpenAIAgentsItem[] }
  /** The replacement is empty: retract the whole history. */
  | { readonly kind: 'retract_all' }
  /** Compact `covered` (a prefix of the history) into `summary`; the rest of the history stays, ids intact. */
  | { readonly kind: 'compact'; readonly covered: readonly string[]; readonly summary: readonly OpenAIAgentsItem[] }

/** One live message, as the plan sees it. */
export interface LiveItem {
  readonly id: string
  readonly payload: unknown
}

/** Two items are the same when their canonical JSON texts are (key order and `undefined` fields aside). */
export const sameItem = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

/**
 * How `replaceHistoryWithCompaction(items)` becomes one turnlog compaction. `items` is the compaction
 * marker and the retained suffix. The longest suffix of the live history that equals the tail of
 * `items[1..]` is kept as it is (its messages keep their ids); the live messages before it are covered,
 * and the rest of `items` (the marker first) is the summary, which turnlog places where the first
 * covered message was. So the live list afterwards is exactly `items`. At least one message is
 * covered (the summary needs a place at the head), so when the whole history is retained, its first
 * message is covered and re-added as a summary message (a new id).
 */
export function planCompaction(live: readonly LiveItem[], items: readonly OpenAIAgentsItem[]): CompactionPlan {
  const n = live.length
  const m = items.length
  if (n === m && live.every((message, i) => sameItem(message.payload, items[i]))) return { kind: 'unchanged' }
  if (m === 0) return { kind: 'retract_all' }
  if (n === 0) return { kind: 'append', items }
  let kept = 0
  while (kept < m - 1 && kept < n && sameItem(live[n - 1 - kept]?.payload, items[m - 1 - kept])) kept++
  if (kept === n) kept = n - 1
  return { kind: 'compact', covered: live.slice(0, n - kept).map((message) => message.id), summary: items.slice(0, m - kept) }
}
