/** The envelope fields of a message as they arrive: a `Message`, or the `data` of the event holding it. */
export interface EnvelopeSource {
  readonly createdAt?: unknown
  readonly externalId?: unknown
  readonly externalScope?: unknown
}

/**
 * The `data` object of an event that holds a message's content (an append, a revision, a summary, a
 * fork's copy): the message's envelope, `createdAt`, then `externalId` and `externalScope` when set,
 * `status: 'partial'` while it streams, then the event's own fields (`deferred`, `revision`,
 * `inheritedFrom`, `redacted`) in the order given. Every write path builds it here, so the stored
 * JSON text has one shape and one key order.
 */
export function eventData(envelope: EnvelopeSource, partial: boolean, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  const d: Record<string, unknown> = { createdAt: envelope.createdAt }
  if (envelope.externalId !== undefined) d['externalId'] = envelope.externalId
  if (envelope.externalScope !== undefined) d['externalScope'] = envelope.externalScope
  if (partial) d['status'] = 'partial'
  return Object.assign(d, extra)
}
