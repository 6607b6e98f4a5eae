import {
  DEFAULT_MESSAGE_FORMAT,
  GENESIS_HASH,
  eventChainHash,
  contentHash,
  isRedactedPayload,
  placeholderDigest,
  type SessionStore,
  type StoredEvent,
  parseSessionId,
} from '@turnlog/core'
import { checkStore } from './check-store.js'

/** The format of a message event's payload: `data.format`, absent (or not a name) for `openai-chat`. */
function eventFormat(e: StoredEvent): string {
  const format = (e.data as { format?: unknown }).format
  return typeof format === 'string' ? format : DEFAULT_MESSAGE_FORMAT
}

/**
 * What kind of break {@link verifyChain} found.
 *
 * - `hash_mismatch`: the stored hash of an event is not the hash of its own content chained to the
 *   previous stored hash: the event (or the one before it) was changed after it was written.
 * - `content_hash_mismatch`: a message event's payload does not hash to its stored content hash.
 * - `seq_gap`: seqs are missing between two stored events (events deleted).
 * - `seq_duplicate`: two events carry the same seq.
 * - `missing_genesis`: the first stored event is not seq 1 (the head of the log was deleted).
 * - `truncated`: the session's version is beyond its last stored event (the tail was deleted).
 * - `version_mismatch`: events exist beyond the session's version (written around the store).
 * - `redaction_mismatch`: a scrubbed payload (a redaction placeholder with a `payloadDigest`) that no
 *   `message_redacted` event records with that digest, content hash and placeholder digest (a
 *   placeholder rewritten after the scrub), a record naming an event that is not scrubbed, a record
 *   that does not commit to its placeholder (written before migration 0009), or a "scrubbed" payload
 *   that is not a placeholder: a forged, altered or undone redaction.
 */
export type ChainBreakKind =
  | 'hash_mismatch'
  | 'content_hash_mismatch'
  | 'seq_gap'
  | 'seq_duplicate'
  | 'missing_genesis'
  | 'truncated'
  | 'version_mismatch'
  | 'redaction_mismatch'

/** One place where a session's log does not verify. */
export interface ChainBreak {
  /** The seq where the break shows (for a gap: the first stored seq after it). */
  readonly seq: number
  /** The event at `seq`, or null when there is none (a truncated tail). */
  readonly eventId: string | null
  readonly kind: ChainBreakKind
  /** What the log should hold (a hash, a seq), when there is one. */
  readonly expected?: string | number
  /** What it holds. */
  readonly actual?: string | number
  /** One line for humans. */
  readonly explanation: string
}

/** The result of {@link verifyChain}. */
export interface ChainVerification {
  /** True when no break was found. */
  readonly ok: boolean
  readonly sessionId: string
  /** Events checked. */
  readonly checked: number
  /** The session's version (read before the events). */
  readonly version: number
  /** The stored hash of the last event, or null for an empty log: record it elsewhere to anchor the chain. */
  readonly headHash: string | null
  readonly breaks: readonly ChainBreak[]
}

/** Events whose `content_hash` covers `payload`. */
const CONTENT_EVENTS: ReadonlySet<string> = new Set(['message_appended', 'message_revised'])

/**
 * Streaming verifier of one session's events, shared by {@link verifyChain} and the audit (which
 * reads each event once for every check). Feed events in the order the store returns them, then
 * call {@link ChainVerifier.finish}.
 * @internal
 */
export class ChainVerifier {
  readonly #sessionId: string
  readonly #breaks: ChainBreak[] = []
  #checked = 0
  /** Stored hashes of the event(s) at the last seq: the anchors of the next link (several after a duplicate seq). */
  #anchors: string[] = [GENESIS_HASH]
  /** The anchors the last seq itself was checked against (a duplicate of it links from these). */
  #previousAnchors: string[] = [GENESIS_HASH]
  #lastSeq = 0
  #headHash: string | null = null
  /** Scrubbed events not yet confirmed by a `message_redacted` event: seq → digest and event. */
  readonly #scrubbed = new Map<number, { readonly digest: string; readonly event: StoredEvent }>()
  /** Digests of the scrubbed events already confirmed, by seq. */
  readonly #confirmed = new Map<number, string>()

  constructor(sessionId: string) {
    this.#sessionId = sessionId
  }

  /** Checks one event against the previous ones. */
  push(e: StoredEvent): void {
    this.#checked++
    const seq = e.seq
    let anchors = this.#anchors
    let linkKnown = true
    if (this.#checked === 1 && seq !== 1) {
      this.#break(
        e,
        'missing_genesis',
        1,
        seq,
        `the log starts at seq ${seq}, not 1: ${seq - 1} event(s) at its head are missing; seq ${seq} cannot be checked`,
      )
      linkKnown = false
    } else if (seq === this.#lastSeq) {
      this.#break(e, 'seq_duplicate', this.#lastSeq + 1, seq, `seq ${seq} is stored twice`)
      anchors = this.#previousAnchors
    } else if (seq < this.#lastSeq) {
      this.#break(e, 'seq_duplicate', this.#lastSeq + 1, seq, `seq ${seq} comes after seq ${this.#lastSeq}: the log is out of order`)
      linkKnown = false
    } else if (seq > this.#lastSeq + 1 && this.#checked > 1) {
      const missing = seq - this.#lastSeq - 1
      this.#break(
        e,
        'seq_gap',
        this.#lastSeq + 1,
        seq,
        missing === 1
          ? `seq ${this.#lastSeq + 1} is missing (deleted); seq ${seq}, which chains from it, cannot be checked`
          : `seqs ${this.#lastSeq + 1}–${seq - 1} are missing (${missing} events deleted); seq ${seq} cannot be checked`,
      )
      linkKnown = false
    }

    if (linkKnown) {
      const link = (anchor: string): string => eventChainHash(anchor, e)
      let expected: string[]
      try {
        expected = anchors.map(link)
      } catch {
        // a field of a foreign shape (an export file's: a digest that is not hex): no link can match
        expected = ['(unhashable)']
      }
      if (!expected.includes(e.hash)) {
        this.#break(
          e,
          'hash_mismatch',
          expected[0] ?? '',
          e.hash,
          `seq ${seq} (${e.type}) does not hash to its stored link: this event, or the stored hash of seq ${seq - 1}, was changed after it was written`,
        )
      }
    }

    if (CONTENT_EVENTS.has(e.type)) this.#checkContent(e)
    if (e.type === 'message_redacted') this.#checkRedaction(e)

    if (seq === this.#lastSeq && this.#checked > 1) {
      this.#anchors = [...this.#anchors, e.hash] // either copy may be what the next event links from
    } else if (seq > this.#lastSeq) {
      this.#previousAnchors = this.#anchors
      this.#anchors = [e.hash]
      this.#lastSeq = seq
      this.#headHash = e.hash
    }
  }

  #checkContent(e: StoredEvent): void {
    const digest = e.payloadDigest ?? null
    const inheritedPlaceholder = (e.data as { redacted?: unknown }).redacted === true
    if (digest !== null || inheritedPlaceholder) {
      // a scrubbed payload (or a fork's copy of one): the content hash is the original's, the payload a placeholder
      if (!isRedactedPayload(e.payload, eventFormat(e))) {
        this.#break(
          e,
          'redaction_mismatch',
          '(a redaction placeholder)',
          '(other content)',
          `seq ${e.seq} (${e.type}) of message ${e.messageId ?? '?'} is marked redacted but its payload is not a redaction placeholder: content was put in its place`,
        )
      }
      if (digest !== null) this.#scrubbed.set(e.seq, { digest, event: e })
      return
    }
    if (e.payload === null || e.contentHash === null) {
      this.#break(
        e,
        'content_hash_mismatch',
        e.contentHash ?? '(a content hash)',
        '(none)',
        `seq ${e.seq} (${e.type}) of message ${e.messageId ?? '?'} has no payload or no content hash`,
      )
      return
    }
    let actual: string
    try {
      actual = contentHash({ payload: e.payload }) // the payload as it is, whatever fields it has
    } catch (error) {
      this.#break(
        e,
        'content_hash_mismatch',
        e.contentHash,
        '(unhashable)',
        `seq ${e.seq}: the payload of message ${e.messageId ?? '?'} cannot be hashed (${error instanceof Error ? error.message : String(error)})`,
      )
      return
    }
    if (actual !== e.contentHash) {
      this.#break(
        e,
        'content_hash_mismatch',
        e.contentHash,
        actual,
        `seq ${e.seq} (${e.type}): the payload of message ${e.messageId ?? '?'} hashes to ${actual.slice(0, 12)}…, the log says ${e.contentHash.slice(0, 12)}…: its content was changed`,
      )
    }
  }

  /**
   * Each scrub a `message_redacted` event lists must be a scrubbed event of the same message with the
   * same digest, the same content hash, and the placeholder the record commits to (`placeholderDigest`).
   */
  #checkRedaction(e: StoredEvent): void {
    if (e.type !== 'message_redacted') return
    const listed = Array.isArray(e.data.scrubbed) ? e.data.scrubbed : []
    for (const item of listed as readonly unknown[] as readonly {
      seq: number
      payloadDigest: string
      contentHash?: unknown
      placeholderDigest?: unknown
    }[]) {
      if (typeof item !== 'object' || item === null) {
        this.#break(e, 'redaction_mismatch', '(a scrub record)', String(item), `seq ${e.seq} holds a malformed scrub record`)
        continue
      }
      const pending = this.#scrubbed.get(item.seq)
      if (pending !== undefined && typeof item.placeholderDigest !== 'string') {
        this.#scrubbed.delete(item.seq)
        this.#break(
          pending.event,
          'redaction_mismatch',
          '(a placeholderDigest)',
          '(none)',
          `seq ${e.seq} records the scrub of seq ${item.seq} without committing to its placeholder (a record from before migration 0009): the placeholder cannot be verified`,
        )
        continue
      }
      if (pending !== undefined && pending.digest === item.payloadDigest && pending.event.messageId === e.messageId) {
        this.#scrubbed.delete(item.seq)
        const placeholder =
          typeof pending.event.payload === 'object' && pending.event.payload !== null ? placeholderDigest(pending.event.payload) : '(none)'
        // (a payload that is no placeholder at all is already reported by #checkContent)
        if (placeholder !== item.placeholderDigest && isRedactedPayload(pending.event.payload, eventFormat(pending.event))) {
          this.#break(
            pending.event,
            'redaction_mismatch',
            String(item.placeholderDigest),
            placeholder,
            `seq ${item.seq} of message ${e.messageId ?? '?'} holds another placeholder than the one seq ${e.seq} recorded when it scrubbed it: the placeholder was rewritten`,
          )
        } else if (item.contentHash !== undefined && item.contentHash !== pending.event.contentHash) {
          this.#break(
            pending.event,
            'redaction_mismatch',
            String(item.contentHash),
            pending.event.contentHash ?? '(none)',
            `seq ${item.seq} of message ${e.messageId ?? '?'} carries another content hash than the one seq ${e.seq} recorded when it scrubbed it`,
          )
        }
        this.#confirmed.set(item.seq, item.payloadDigest)
        continue
      }
      if (this.#confirmed.get(item.seq) !== item.payloadDigest) {
        this.#break(
          e,
          'redaction_mismatch',
          item.payloadDigest,
          pending?.digest ?? '(not scrubbed)',
          pending === undefined
            ? `seq ${e.seq} records the scrub of seq ${item.seq}, which holds no scrubbed payload of message ${e.messageId}: the redaction was undone, or the record forged`
            : `seq ${e.seq} records the scrub of seq ${item.seq} with another digest or message than that event carries`,
        )
      }
    }
  }

  #break(e: StoredEvent, kind: ChainBreakKind, expected: string | number, actual: string | number, explanation: string): void {
    this.#breaks.push({ seq: e.seq, eventId: e.eventId, kind, expected, actual, explanation })
  }

  /**
   * Ends the stream. `versionBefore` is the session's version read before the first event,
   * `versionAfter` the one read after the last: a log shorter than the first was cut; a log longer
   * than the second was written around the store.
   */
  finish(versionBefore: number, versionAfter: number = versionBefore): ChainVerification {
    for (const [seq, { digest, event }] of this.#scrubbed) {
      this.#break(
        event,
        'redaction_mismatch',
        '(a message_redacted record)',
        digest,
        `seq ${seq} of message ${event.messageId ?? '?'} holds a scrubbed payload that no message_redacted event records: a forged redaction`,
      )
    }
    this.#scrubbed.clear()
    if (versionBefore > this.#lastSeq) {
      const missing = versionBefore - this.#lastSeq
      this.#breaks.push({
        seq: this.#lastSeq + 1,
        eventId: null,
        kind: 'truncated',
        expected: versionBefore,
        actual: this.#lastSeq,
        explanation:
          this.#lastSeq === 0
            ? `the session is at version ${versionBefore} but has no events: the whole log was deleted`
            : `the session is at version ${versionBefore} but its log ends at seq ${this.#lastSeq}: ${missing} event(s) at the tail were deleted`,
      })
    } else if (this.#lastSeq > versionAfter) {
      this.#breaks.push({
        seq: versionAfter + 1,
        eventId: null,
        kind: 'version_mismatch',
        expected: versionAfter,
        actual: this.#lastSeq,
        explanation: `the log runs to seq ${this.#lastSeq} but the session's version is ${versionAfter}: events were written around the store`,
      })
    }
    return {
      ok: this.#breaks.length === 0,
      sessionId: this.#sessionId,
      checked: this.#checked,
      version: versionBefore,
      headHash: this.#headHash,
      breaks: [...this.#breaks].sort((a, b) => a.seq - b.seq),
    }
  }
}

/**
 * Verifies a session's hash chain independently of the database: streams `store.events(sessionId)`,
 * recomputes every link with `chainHash` (the same function as the database's `turnlog.chain_link`) and
 * every message event's content hash, checks that every scrubbed (redacted) payload is a placeholder
 * recorded by a `message_redacted` event, and compares the last seq with the session's version. Each
 * break is located by seq; a changed event breaks only its own link (later links are checked against
 * the stored hashes), so the report points at the rewritten rows.
 *
 * Throws `SESSION_NOT_FOUND` for an unknown session, `INVALID_INPUT` for something that is not a store
 * or not a session id. Memory is constant in the log's length.
 * @example
 * ```ts
 * const v = await verifyChain(store, sessionId)
 * if (!v.ok) console.log(v.breaks[0]?.explanation)
 * ```
 */
export async function verifyChain(store: SessionStore, sessionId: string): Promise<ChainVerification> {
  checkStore(store, ['getSession', 'events'])
  sessionId = parseSessionId(sessionId)
  const before = await store.getSession(sessionId)
  const verifier = new ChainVerifier(before.sessionId)
  for await (const e of store.events(before.sessionId)) verifier.push(e)
  const after = await store.getSession(before.sessionId)
  return verifier.finish(before.version, after.version)
}
