import { TurnlogError, canonicalJson, isTurnlogError, toMessage, type Message, type MessageId, type SessionId } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { messageContentHash } from '../message-content-hash.js'
import { checkSafeJson, checkSafeText } from '../safe-text.js'

/** A batch after {@link checkBatch}: one entry per id, in first-occurrence order. */
export interface CheckedBatch {
  readonly unique: Message[]
  /** Content hashes of `unique`, index for index. */
  readonly hashes: readonly string[]
  /** Ids listed more than once with identical content (one message, stored once). */
  readonly repeated: ReadonlySet<MessageId>
  /** The first id listed with two different contents, or null. */
  readonly mismatch: BatchMismatch | null
}

/** Two different contents under one id in one batch. */
export interface BatchMismatch {
  readonly first: Message
  readonly firstHash: string
  readonly other: Message
  readonly otherHash: string
}

/** {@link checkBatch}'s result while it is built: the folded values so far, extended by {@link extendBatch}. */
export interface BatchState extends CheckedBatch {
  readonly unique: Message[]
  readonly hashes: string[]
  /** Message id → its index in `unique`. */
  readonly index: Map<string, number>
  readonly repeated: Set<MessageId>
  mismatch: BatchMismatch | null
}

/** The state of a batch with no value folded in yet. */
export function emptyBatch(): BatchState {
  return { unique: [], hashes: [], index: new Map(), repeated: new Set(), mismatch: null }
}

/**
 * Validates a batch (an `append` batch, a live list for `flush`, a compaction's summary) and folds
 * identical copies of one message (same id, same content hash: a redelivery, a message pushed twice,
 * a copy next to its original) into one, keeping the first occurrence's position. Two different
 * contents under one id are returned as `mismatch` (the caller reports `MESSAGE_CONFLICT`). With
 * `skipEphemeral` (flush) scaffolding is left out; otherwise it is refused.
 */
export function checkBatch(
  messages: readonly unknown[],
  what: string,
  skipEphemeral: boolean,
  slot: (index: number) => string = slotOf(what),
): CheckedBatch {
  checkBatchArray(messages, what)
  const batch = emptyBatch()
  extendBatch(batch, messages, skipEphemeral, slot)
  return batch
}

/** How the message at `index` of the argument `what` is named in errors: `messages[3]`. */
export function slotOf(what: string, offset = 0): (index: number) => string {
  return (index) => `${what}[${String(offset + index)}]`
}

/** Throws `INVALID_INPUT` unless `messages` is an array (a throwing Proxy is the caller's input too). */
export function checkBatchArray(messages: unknown, what: string): void {
  if (!guardInput(what, () => Array.isArray(messages)))
    throw new TurnlogError('INVALID_INPUT', `${what} must be an array of messages`, { details: { field: what } })
}

/**
 * Runs `read` (a check of the value at `slot` of the caller's argument, `messages[2]`): its
 * `INVALID_INPUT` or `INVALID_MESSAGE` naming a field of the message (`id`, `createdAt`, `meta`) names
 * it where the caller put it (`messages[2].id`), as `details.field` of an unsafe string does
 * (docs/errors.md); one naming the whole message (`message`, an unreadable value) names the slot. Its
 * message, other details and cause are kept; an error naming no field (a payload's issues) passes as it is.
 */
function inSlot<T>(slot: string, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (!isTurnlogError(error) || (error.code !== 'INVALID_INPUT' && error.code !== 'INVALID_MESSAGE')) throw error
    const field = error.details['field']
    if (typeof field !== 'string') throw error
    throw new TurnlogError(error.code, error.message, {
      details: { ...error.details, field: field === 'message' || field === 'toMessage' ? slot : `${slot}.${field}` },
      ...(error.cause === undefined ? {} : { cause: error.cause }),
    })
  }
}

/**
 * Folds `values` into `batch`, one at a time, as {@link checkBatch} does: a value it throws for leaves
 * the values before it folded in and nothing of its own. `slot(i)` names the `i`th of `values` in an
 * error (`live[7]`: where it is in the caller's argument), as `details.field` of an unsafe string's
 * `INVALID_INPUT` (`live[7].externalId`).
 */
export function extendBatch(batch: BatchState, values: Iterable<unknown>, skipEphemeral: boolean, slot: (index: number) => string): void {
  const { unique, hashes, index, repeated } = batch
  let i = -1
  for (const value of values) {
    i++
    const m = inSlot(slot(i), () => toMessage(value))
    if (m.ephemeral === true) {
      if (skipEphemeral) continue
      throw new TurnlogError('INVALID_MESSAGE', `message ${m.id} is ephemeral (scaffolding); use flush(), which skips it`, {
        details: { messageId: m.id, field: slot(i) },
      })
    }
    const hash = messageContentHash(m)
    const at = index.get(m.id)
    if (at !== undefined) {
      if (hashes[at] === hash || samePayload(unique[at] as Message, m)) repeated.add(m.id)
      else batch.mismatch ??= { first: unique[at] as Message, firstHash: hashes[at] as string, other: m, otherHash: hash }
      continue
    }
    if (m.externalId !== undefined) checkSafeText(m.externalId, `${slot(i)}.externalId`)
    if (m.externalScope !== undefined) checkSafeText(m.externalScope, `${slot(i)}.externalScope`)
    if (m.meta !== undefined) checkSafeJson(m.meta, `${slot(i)}.meta`)
    index.set(m.id, unique.length)
    unique.push(m)
    hashes.push(hash)
  }
}

/**
 * The `MESSAGE_CONFLICT` for two different contents under one id in one call (reason
 * `content_mismatch`, `storedHash` the first copy's hash, `inBatch: true`); `conflicts` is the evidence
 * list recorded for it, or null when none is (a compaction's summary).
 */
export function inBatchConflictError(sessionId: SessionId | null, mismatch: BatchMismatch, conflicts: unknown): TurnlogError {
  const messageId = mismatch.other.id
  return new TurnlogError(
    'MESSAGE_CONFLICT',
    `message ${messageId} is listed twice with different content (${mismatch.firstHash.slice(0, 12)}…, ${mismatch.otherHash.slice(0, 12)}…); nothing of the batch was written`,
    {
      details: {
        sessionId,
        messageId,
        reason: 'content_mismatch',
        storedHash: mismatch.firstHash,
        incomingHash: mismatch.otherHash,
        otherSessionId: null,
        inBatch: true,
        ...(conflicts === null ? {} : { conflicts }),
      },
    },
  )
}

/**
 * True when two copies of one id whose content hashes differ hold the same payload all the same: a
 * redacted message as `load` returns it carries the original's content hash (primed), a copy of it (a
 * JSON round trip) its placeholder's; both are the message as stored. Runs only when the hashes differ.
 */
function samePayload(a: Message, b: Message): boolean {
  return canonicalJson(a.payload) === canonicalJson(b.payload)
}
