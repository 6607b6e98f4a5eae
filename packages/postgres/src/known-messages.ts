import { TurnlogError, type MessageId, type SessionId } from '@turnlog/core'
import type { FlushedList } from './store/flushed-list.js'

interface SessionEntry {
  version: number | undefined
  /** message id → content hashes known durable in this session */
  readonly hashes: Map<string, string | Set<string>>
  /** The list the session's last flush checked, and the slots it was counted at in the budget. */
  flushed: { readonly list: FlushedList; slots: number } | undefined
  /**
   * The (id, hash) pairs of the session's last load, flat (`[id, hash, id, hash, …]`), not yet in
   * `hashes`: entered when the entry is first read ({@link KnownMessages.has}, `durablePrefix`), so a
   * load nobody flushes after costs no map work.
   */
  pending: string[] | undefined
  /** The version of the last load learnt (pending or entered): a load at that version brings the same pairs. */
  loaded: number | undefined
}

/** A loaded message as the flush cache reads it: its id and stored content hash. */
export interface LoadedPair {
  readonly message_id: string
  readonly content_hash: string
}

/**
 * How many slots of flushed lists are remembered, over every session: a kept list holds the caller's
 * messages (it keeps alive the ones the caller dropped since) and costs ≈ 64 bytes a slot besides.
 */
const FLUSHED_SLOTS = 100_000

/**
 * The flush cache: which (message id, content hash) pairs are known durable in which session, as
 * learnt from this store's own successful appends and loads. The log is append-only and a pair once
 * stored stays stored, so a hit can skip the database, as long as the database keeps its commits: a
 * session found behind a version this store saw (a restore, a failover) is forgotten (`forget`). A
 * miss just asks the database, which stays the authority. Bounded by an LRU over sessions.
 *
 * It also keeps, per session, the list its last flush checked (a {@link FlushedList}), so that the
 * next flush of that list grown by a few messages checks only those: within {@link FLUSHED_SLOTS}
 * slots over all sessions, the least recently flushed dropped first, and dropped with the session.
 */
export class KnownMessages {
  readonly #sessions = new Map<string, SessionEntry>()
  readonly #capacity: number
  /** The sessions holding a flushed list, least recently kept first. */
  readonly #flushed = new Set<string>()
  #flushedSlots = 0

  /** `capacity`: sessions remembered, a positive integer (`INVALID_INPUT` otherwise). */
  constructor(capacity: number) {
    if (typeof capacity !== 'number' || !Number.isSafeInteger(capacity) || capacity < 1) {
      throw new TurnlogError('INVALID_INPUT', 'knownSessions must be a positive integer', { details: { field: 'knownSessions' } })
    }
    this.#capacity = capacity
  }

  #entry(sessionId: SessionId, create: boolean): SessionEntry | undefined {
    let entry = this.#sessions.get(sessionId)
    if (entry) {
      // refresh LRU position
      this.#sessions.delete(sessionId)
      this.#sessions.set(sessionId, entry)
      return entry
    }
    if (!create) return undefined
    entry = { version: undefined, hashes: new Map(), flushed: undefined, pending: undefined, loaded: undefined }
    this.#sessions.set(sessionId, entry)
    if (this.#sessions.size > this.#capacity) {
      const oldest = this.#sessions.keys().next().value
      if (oldest !== undefined) {
        this.#dropFlushed(oldest)
        this.#sessions.delete(oldest)
      }
    }
    return entry
  }

  /** True when `(messageId, hash)` is known durable in the session. */
  has(sessionId: SessionId, messageId: MessageId, hash: string): boolean {
    const entry = this.#sessions.get(sessionId)
    if (entry === undefined) return false
    if (entry.pending !== undefined) enterPending(entry)
    return hasHash(entry, messageId, hash)
  }

  /**
   * Records the messages a load at `version` returned as durable in the session (the live list at one
   * version is one list, so a second load at the version learnt adds nothing and is skipped). The pairs
   * are kept aside and entered in the map when the session's entry is next read: a load's read costs
   * no map work until a flush or an append asks (counted: ≈ 25 µs a 100-message load before).
   */
  addLoaded(sessionId: SessionId, version: number, rows: readonly LoadedPair[]): void {
    const entry = this.#entry(sessionId, true)
    if (!entry || entry.loaded === version) return
    if (entry.pending !== undefined) enterPending(entry)
    const flat: string[] = []
    for (const row of rows) if (row.content_hash !== '') flat.push(row.message_id, row.content_hash)
    entry.pending = flat
    entry.loaded = version
  }

  /** Records `(messageId, hash)` as durable in the session. */
  add(sessionId: SessionId, messageId: MessageId | string, hash: string): void {
    if (hash === '') return
    this.addAll(sessionId, [[messageId, hash]])
  }

  /** Records every `(messageId, hash)` pair as durable in the session (one LRU refresh for all). */
  addAll(sessionId: SessionId, pairs: Iterable<readonly [MessageId | string, string]>): void {
    const entry = this.#entry(sessionId, true)
    if (!entry) return
    for (const [messageId, hash] of pairs) if (hash !== '') addHash(entry, messageId, hash)
  }

  /** The last version this store saw for the session, if any. */
  version(sessionId: SessionId): number | undefined {
    return this.#sessions.get(sessionId)?.version
  }

  /** Records the session's version as last seen (never moves backwards). */
  setVersion(sessionId: SessionId, version: number): void {
    const entry = this.#entry(sessionId, true)
    if (entry && (entry.version === undefined || version > entry.version)) entry.version = version
  }

  /** The list the session's last flush checked, if it is still kept. */
  flushedList(sessionId: SessionId): FlushedList | undefined {
    return this.#sessions.get(sessionId)?.flushed?.list
  }

  /**
   * Keeps `list` as the session's flushed list (`undefined`: keeps none), when the session is known
   * (a flush cache entry exists: the list's count of durable messages is made against it) and the
   * list fits in the budget; drops the least recently kept lists of other sessions to stay within it.
   */
  keepFlushed(sessionId: SessionId, list: FlushedList | undefined): void {
    this.#dropFlushed(sessionId)
    const entry = this.#sessions.get(sessionId)
    if (list === undefined || entry === undefined || list.slots > FLUSHED_SLOTS) return
    entry.flushed = { list, slots: list.slots }
    this.#flushed.add(sessionId)
    this.#flushedSlots += list.slots
    for (const oldest of this.#flushed) {
      if (this.#flushedSlots <= FLUSHED_SLOTS) break
      this.#dropFlushed(oldest)
    }
  }

  /**
   * How many of the first `length` messages of `list`'s check, from the first, are known durable in
   * the session (see {@link FlushedList.durablePrefix}); 0 for a session this cache does not hold.
   */
  durablePrefix(sessionId: SessionId, list: FlushedList, length: number): number {
    const entry = this.#sessions.get(sessionId)
    if (entry === undefined) return 0
    if (entry.pending !== undefined) enterPending(entry)
    return list.durablePrefix(entry, (messageId, hash) => hasHash(entry, messageId, hash), length)
  }

  /**
   * Forgets what is known of the session (its stored pairs, version and flushed list): the database
   * disagreed with it (a restore from an older backup while this store was open).
   */
  forget(sessionId: SessionId): void {
    this.#dropFlushed(sessionId)
    this.#sessions.delete(sessionId)
  }

  #dropFlushed(sessionId: string): void {
    const entry = this.#sessions.get(sessionId)
    if (entry?.flushed !== undefined) this.#flushedSlots -= entry.flushed.slots
    if (entry !== undefined) entry.flushed = undefined
    this.#flushed.delete(sessionId)
  }
}

function addHash(entry: SessionEntry, messageId: string, hash: string): void {
  const known = entry.hashes.get(messageId)
  if (known === undefined) entry.hashes.set(messageId, hash)
  else if (typeof known === 'string') {
    if (known !== hash) entry.hashes.set(messageId, new Set([known, hash]))
  } else known.add(hash)
}

/** Enters the pairs of the entry's last load in its map. */
function enterPending(entry: SessionEntry): void {
  const flat = entry.pending
  entry.pending = undefined
  if (flat === undefined) return
  for (let i = 0; i < flat.length; i += 2) addHash(entry, flat[i] as string, flat[i + 1] as string)
}

/** True when `(messageId, hash)` is known durable in the session of `entry` (its pending pairs entered). */
function hasHash(entry: SessionEntry, messageId: string, hash: string): boolean {
  const known = entry.hashes.get(messageId)
  if (known === undefined) return false
  return typeof known === 'string' ? known === hash : known.has(hash)
}
