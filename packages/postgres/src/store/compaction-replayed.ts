/** Whether each `compact` result of this package wrote its compaction (false) or found it placed (true). */
const outcomes = new WeakMap<object, boolean>()

/** Records that `result` (a `compact` result) is a replay that wrote nothing (`true`) or wrote the compaction. */
export function recordCompaction<T extends object>(result: T, replayed: boolean): T {
  outcomes.set(result, replayed)
  return result
}

/**
 * Whether a `compact` result of a store of this package found its compaction already placed and wrote
 * nothing (a replay: `true`) or wrote it (`false`, `summary.length + 1` events); `undefined` for any
 * other value (a result of another `SessionStore`, or of another copy of this package). The public
 * result cannot say it: a replay returns what the first call did (guarantees.md, "Retry safety"), and
 * its version does not tell a replay from a write when another writer placed the compaction meanwhile.
 * For importers that count what they wrote (`importHermes`).
 */
export function compactionReplayed(result: unknown): boolean | undefined {
  return typeof result === 'object' && result !== null ? outcomes.get(result) : undefined
}
