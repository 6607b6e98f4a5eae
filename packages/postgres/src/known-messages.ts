import { TurnlogError, type MessageId, type SessionId } from '@turnlog/core'

interface SessionEntry {
  version: number | undefined
  /** message id → content hashes known durable in this session */
  readonly hashes: Map<string, string | Set<string>>
}

/**
 * The flush cache: which (message id, content hash) pairs are known durable in which session, as
 * learnt from this store's own successful appends and loads. Entries are never wrong: the log is
 * append-only and a pair once stored stays stored, so a hit can safely skip the database. A miss just
 * asks the database, which stays the authority. Bounded by an LRU over sessions.
 */
export class KnownMessages {
  readonly #sessions = new Map<string, SessionEntry>()
  readonly #capacity: number

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
    entry = { version: undefined, hashes: new Map() }
    this.#sessions.set(sessionId, entry)
    if (this.#sessions.size > this.#capacity) {
      const oldest = this.#sessions.keys().next().value
      if (oldest !== undefined) this.#sessions.delete(oldest)
    }
    return entry
  }

  /** True when `(messageId, hash)` is known durable in the session. */
  has(sessionId: SessionId, messageId: MessageId, hash: string): boolean {
    const known = this.#sessions.get(sessionId)?.hashes.get(messageId)
    if (known === undefined) return false
    return typeof known === 'string' ? known === hash : known.has(hash)
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
    for (const [messageId, hash] of pairs) {
      if (hash === '') continue
      const known = entry.hashes.get(messageId)
      if (known === undefined) entry.hashes.set(messageId, hash)
      else if (typeof known === 'string') {
        if (known !== hash) entry.hashes.set(messageId, new Set([known, hash]))
      } else known.add(hash)
    }
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
}
