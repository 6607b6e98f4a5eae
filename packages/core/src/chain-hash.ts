import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

const HEX_64 = /^[0-9a-f]{64}$/

/** The previous link and the event must be there; a raw error while reading them is `INVALID_INPUT`. */
function guardLink<T>(what: string, prevHex: unknown, input: unknown, body: () => T): T {
  if (typeof prevHex !== 'string' || !HEX_64.test(prevHex)) {
    throw new TurnlogError('INVALID_INPUT', `${what} needs the previous hash as 64 hex digits`, { details: { field: 'prevHex' } })
  }
  if (typeof input !== 'object' || input === null)
    throw new TurnlogError('INVALID_INPUT', `${what} needs an event object`, { details: { field: 'input' } })
  return guardInput(what, body)
}

/** The hash before a session's first event: 32 zero bytes, hex. */
export const GENESIS_HASH = '0'.repeat(64)

/** The identifying fields of an event that the chain covers verbatim. */
export interface ChainedFields {
  readonly sessionId: string
  readonly seq: number
  readonly eventId: string
  readonly type: string
  readonly messageId: string | null
  readonly contentHash: string | null
}

/** The parts of an event the chain covers. Texts are the stored JSON texts (`JSON.stringify` output). */
export interface ChainInput extends ChainedFields {
  readonly dataText: string
  readonly payloadText: string | null
  /**
   * Hex SHA-256 of the original payload text of an event a redaction scrubbed (`StoredEvent.payloadDigest`):
   * used in place of `sha256(payloadText)`, so the link written before the scrub still verifies.
   */
  readonly payloadDigest?: string | null
}

/**
 * One link of a session's hash chain (format 1), hex:
 * `sha256(prev ‖ utf8(sessionId \n seq \n eventId \n type \n messageId \n contentHash \n) ‖ sha256(utf8(data)) ‖ sha256(utf8(payload)))`
 * where absent values are empty strings and `prev` is the previous event's hash (32 zero bytes for
 * seq 1). The database computes the same function (`turnlog.chain_link`) when an event is inserted;
 * this implementation lets `verifyChain` check it independently of the database. Both are pinned to
 * the golden vectors of `packages/core/test/chain-vectors.json`.
 */
export function chainHash(prevHex: string, input: ChainInput): string {
  return guardLink('chainHash', prevHex, input, () => link(prevHex, input))
}

function link(prevHex: string, input: ChainInput): string {
  const head = `${input.sessionId}\n${input.seq}\n${input.eventId}\n${input.type}\n${input.messageId ?? ''}\n${input.contentHash ?? ''}\n`
  return bytesToHex(
    sha256(
      concatBytes(
        hexToBytes(prevHex),
        utf8ToBytes(head),
        sha256(utf8ToBytes(input.dataText)),
        input.payloadDigest === undefined || input.payloadDigest === null
          ? sha256(utf8ToBytes(input.payloadText ?? ''))
          : hexToBytes(input.payloadDigest),
      ),
    ),
  )
}

/** The fields of a stored (or exported) event the chain covers, as parsed values. */
export interface ChainedEvent extends ChainedFields {
  readonly data: unknown
  readonly payload: unknown
  readonly payloadDigest?: string | null | undefined
}

/**
 * The chain link of a parsed event: {@link chainHash} over the texts the store wrote, which
 * `JSON.stringify` reproduces exactly from the parsed `data` and `payload` (the store writes
 * `JSON.stringify` output, and stringify is idempotent over its own output).
 */
export function eventChainHash(prevHex: string, e: ChainedEvent): string {
  return guardLink('eventChainHash', prevHex, e, () => {
    const { sessionId, seq, eventId, type, messageId, contentHash } = e
    return link(prevHex, {
      sessionId,
      seq,
      eventId,
      type,
      messageId,
      contentHash,
      dataText: JSON.stringify(e.data),
      payloadText: e.payload === null ? null : JSON.stringify(e.payload),
      payloadDigest: e.payloadDigest ?? null,
    })
  })
}

/**
 * Hex SHA-256 of a redaction placeholder's stored text (`JSON.stringify` of the placeholder): the
 * `placeholderDigest` of a scrub record in a `message_redacted` event. The database computes the same
 * (`turnlog.placeholder_digest`, migration 0009) when it scrubs; `verifyChain` recomputes it from the
 * scrubbed event's payload, so a placeholder rewritten after the scrub (another role, other pairing
 * ids) no longer matches the chained record.
 */
export function placeholderDigest(placeholder: unknown): string {
  const text =
    typeof placeholder === 'object' && placeholder !== null ? guardInput('placeholderDigest', () => JSON.stringify(placeholder)) : undefined
  if (typeof text !== 'string')
    throw new TurnlogError('INVALID_INPUT', 'placeholderDigest needs a placeholder object', { details: { field: 'placeholder' } })
  return bytesToHex(sha256(utf8ToBytes(text)))
}
