import { isMessage, type Message, type MessageId } from '@turnlog/core'
import { checkBatchArray, emptyBatch, extendBatch, slotOf, type BatchMismatch, type BatchState } from './check-batch.js'

/**
 * One flush's check of its live list, as `checkBatch(live, 'live', true)` returns it, read through a
 * {@link FlushedList} that a later flush of the same session may extend: only the first `length`
 * entries of `unique` and `hashes` are this call's (the arrays only ever grow).
 */
export interface FlushScan {
  /** The list the check lives in (what the session keeps for its next flush). */
  readonly list: FlushedList
  /** The distinct messages of the live list, in first-occurrence order: the first `length` entries. */
  readonly unique: readonly Message[]
  /** Their content hashes, index for index. */
  readonly hashes: readonly string[]
  /** How many entries of `unique` this call's list holds. */
  readonly length: number
  /** Ids listed more than once with identical content (a copy taken for this call). */
  readonly repeated: ReadonlySet<MessageId>
  /** The first id listed with two different contents, or null. */
  readonly mismatch: BatchMismatch | null
}

const NONE: ReadonlySet<MessageId> = new Set()

/**
 * What the flushes of one session checked last: the caller's list slot by slot (the values
 * themselves) and `checkBatch`'s result for those slots, so that the next flush of a list that begins
 * with the same values (the same objects at the same indexes: the list only grew) checks only its new
 * slots, and knows which of its messages, from the start, the flush cache already holds.
 *
 * Only frozen messages made by core (`isMessage`) are kept: their id, payload and envelope cannot
 * change, so the same object at the same slot gives the same check. The first slot holding anything
 * else (a plain object, a copy, a Proxy) ends the part kept; the rest of that list is checked anew at
 * every flush. A list that does not begin with every kept slot (a rewind, a compaction, a message
 * replaced or moved, a list that shrank) starts a new `FlushedList`: the old one is never cut back.
 */
export class FlushedList {
  /** The kept slots, in list order (ephemeral messages too). */
  readonly #values: unknown[] = []
  /** `checkBatch`'s state over `#values`; only grows. */
  readonly #batch: BatchState = emptyBatch()
  /** The flush cache entry `#durable` was counted against (see {@link durablePrefix}). */
  #owner: object | undefined
  /** How many messages of `#batch.unique`, from the first, the flush cache of `#owner` holds. */
  #durable = 0

  /** How many slots of the caller's list this one keeps (what it costs to remember). */
  get slots(): number {
    return this.#values.length
  }

  /**
   * Checks `live` as `checkBatch(live, 'live', true)` does (same errors, same result), reusing
   * `previous` when `live` begins with every slot it keeps: then only the slots after those are
   * checked. Extends `previous` in place (or starts a new list) and returns the check; throws as
   * `checkBatch` does, leaving the list extended up to the slot before the one it threw for.
   */
  static check(previous: FlushedList | undefined, live: readonly unknown[]): FlushScan {
    checkBatchArray(live, 'live')
    const kept = previous === undefined ? [] : previous.#values
    let same = 0
    let rest: unknown[] = []
    for (const value of live) {
      if (rest.length === 0 && same < kept.length && value === kept[same]) same++
      else rest.push(value)
    }
    let list = previous
    // `rest` holds the slots of `live` from this index on
    let from = same
    if (list === undefined || same < kept.length) {
      // the list no longer begins with what was kept: every slot is checked again, into a new list
      list = new FlushedList()
      rest = same === 0 ? rest : [...kept.slice(0, same), ...rest]
      from = 0
    }
    // the slots that can be kept: frozen messages made by core, up to the first other value
    let keep = 0
    while (keep < rest.length && isMessage(rest[keep]) && Object.isFrozen(rest[keep])) keep++
    for (let i = 0; i < keep; i++) {
      // slot by slot, so that a value the check throws for leaves the list as it was before it
      extendBatch(list.#batch, [rest[i]], true, slotOf('live', from + i))
      list.#values.push(rest[i])
    }
    let batch = list.#batch
    if (keep < rest.length) {
      // checked for this call only, on a copy: the kept list stays at its last kept slot
      batch = copyBatch(batch)
      extendBatch(batch, rest.slice(keep), true, slotOf('live', from + keep))
    }
    return {
      list,
      unique: batch.unique,
      hashes: batch.hashes,
      length: batch.unique.length,
      repeated: batch.repeated.size === 0 ? NONE : new Set(batch.repeated),
      mismatch: batch.mismatch,
    }
  }

  /**
   * How many of the first `length` messages, from the first, the flush cache holds: counted once and
   * remembered, so a later call only looks up the messages after that count. `owner` is the cache's
   * entry for the session and `known` its lookup; a count made against another entry (the session was
   * forgotten and learnt again) is started over.
   */
  durablePrefix(owner: object, known: (messageId: string, hash: string) => boolean, length: number): number {
    if (owner !== this.#owner) {
      this.#owner = owner
      this.#durable = 0
    }
    const { unique, hashes } = this.#batch
    const end = Math.min(length, unique.length)
    while (this.#durable < end && known((unique[this.#durable] as Message).id, hashes[this.#durable] as string)) this.#durable++
    return Math.min(this.#durable, length)
  }
}

/** A copy of `batch` to extend without changing it. */
function copyBatch(batch: BatchState): BatchState {
  return {
    unique: [...batch.unique],
    hashes: [...batch.hashes],
    index: new Map(batch.index),
    repeated: new Set(batch.repeated),
    mismatch: batch.mismatch,
  }
}
