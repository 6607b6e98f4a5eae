import { TurnlogError, type JsonValue, type Message } from '@turnlog/core'
import { messageEnvelope } from '@turnlog/core/internal'

/**
 * Default `maxBatchBytes`: 128 MiB of JSON text (UTF-16 code units, the unit of `maxMessageBytes`)
 * per call, eight messages of the default 16 MiB maximum.
 */
export const DEFAULT_MAX_BATCH_BYTES = 128 * 1024 * 1024

/**
 * The highest `maxBatchBytes` a store accepts: 256 MiB. One call's messages travel as one JSON text,
 * and V8 cannot build a string longer than 2^29 − 24 code units (512 MiB); Postgres refuses a
 * protocol message over 1 GB, and a code unit may be three bytes of UTF-8.
 */
export const MAX_BATCH_BYTES_CEILING = 256 * 1024 * 1024

/** Checks a `maxBatchBytes` setting: a positive integer up to {@link MAX_BATCH_BYTES_CEILING}; throws `INVALID_INPUT`. */
export function checkMaxBatchBytes(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_BATCH_BYTES
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_BATCH_BYTES_CEILING) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `maxBatchBytes must be an integer from 1 to ${MAX_BATCH_BYTES_CEILING}, got ${typeof value === 'number' ? String(value) : typeof value}`,
      { details: { field: 'config.maxBatchBytes' } },
    )
  }
  return value
}

/**
 * Adds up the JSON texts of one call's messages and throws `BATCH_TOO_LARGE` as soon as they exceed
 * the limit: before anything is sent, and before the rest of the batch is serialised, so a batch far
 * over the limit costs no more memory than the limit.
 */
export class BatchBudget {
  readonly #limit: number
  readonly #count: number
  #size = 0
  #index = 0

  /** `count`: how many messages the call holds (for the error). */
  constructor(limit: number, count: number) {
    this.#limit = limit
    this.#count = count
  }

  /** Counts the next message's payload `text` and its envelope's length; returns `text`. */
  add(text: string, messageId: string, envelopeLength: number): string {
    this.#size += text.length + envelopeLength + 1
    if (this.#size > this.#limit) {
      throw new TurnlogError(
        'BATCH_TOO_LARGE',
        `the ${this.#count} message(s) of this call are more than ${this.#limit} bytes of JSON together (over the limit at message #${this.#index}, ${messageId}); nothing was written: send them in several calls, or raise maxBatchBytes`,
        { details: { limit: this.#limit, size: this.#size, messages: this.#count, index: this.#index, messageId } },
      )
    }
    this.#index++
    return text
  }
}

/**
 * `JSON.stringify(value)` of a value one call writes besides its messages (session, fork or compaction
 * metadata), refused with `BATCH_TOO_LARGE` when longer than `limit` (or than any string can be).
 */
export function jsonTextWithin(value: JsonValue, limit: number, what: string): string {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (cause) {
    if (!(cause instanceof RangeError)) throw cause
  }
  if (text === undefined || text.length > limit) {
    throw new TurnlogError('BATCH_TOO_LARGE', `${what} is more than ${limit} bytes of JSON; nothing was written`, {
      details: { what, limit, size: text?.length ?? null },
    })
  }
  return text
}

/**
 * The envelope text the store writes next to a message's payload (its event's `data`, see
 * `messageEnvelope` of core): `createdAt`, then `externalId`, `externalScope` and `status` when set, then `format`
 * unless it is the default and `meta` when set, in that order.
 */
export function envelopeText(m: Message<unknown>): string {
  return JSON.stringify(messageEnvelope(m, m.status === 'partial'))
}
