import { DEFAULT_MESSAGE_FORMAT } from './formats/format-registry.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/** The envelope fields of a message as they arrive: a `Message`, or the `data` of the event holding it. */
export interface EnvelopeSource {
  readonly createdAt?: unknown
  readonly externalId?: unknown
  readonly externalScope?: unknown
  readonly format?: unknown
  readonly meta?: unknown
}

/**
 * The `data` object of an event that holds a message's content (an append, a revision, a summary, a
 * fork's copy): the message's envelope, `createdAt`, then `externalId` and `externalScope` when set,
 * `status: 'partial'` while it streams, `format` unless it is the default (`openai-chat`: a chat
 * message's envelope is what it was before formats existed), `meta` when set, then the event's own fields (`deferred`, `revision`,
 * `inheritedFrom`, `redacted`) in the order given. Every write path builds it here (and `splitByBatchBytes` measures
 * it), so the stored JSON text has one shape and one key order.
 */
export function messageEnvelope(
  envelope: EnvelopeSource,
  partial: boolean,
  extra: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  if (typeof envelope !== 'object' || envelope === null)
    throw new TurnlogError('INVALID_INPUT', 'messageEnvelope needs a message or an event data object', { details: { field: 'envelope' } })
  return guardInput('messageEnvelope', () => build(envelope, partial === true, extra))
}

function build(envelope: EnvelopeSource, partial: boolean, extra: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const d: Record<string, unknown> = { createdAt: envelope.createdAt }
  if (envelope.externalId !== undefined) d['externalId'] = envelope.externalId
  if (envelope.externalScope !== undefined) d['externalScope'] = envelope.externalScope
  if (partial) d['status'] = 'partial'
  if (envelope.format !== undefined && envelope.format !== DEFAULT_MESSAGE_FORMAT) d['format'] = envelope.format
  if (envelope.meta !== undefined) d['meta'] = envelope.meta
  return Object.assign(d, extra)
}
