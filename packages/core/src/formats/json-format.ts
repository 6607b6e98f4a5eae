import { z } from 'zod'
import type { JsonValue } from '../json-value.js'
import { copyPayload } from './item-format-kit.js'
import type { MessageFormat } from './message-format.js'

/** A payload of the `json` format: any JSON object, kept verbatim. */
export type JsonPayload = { readonly [key: string]: JsonValue }

/** The name of the opaque format. */
export const JSON_FORMAT = 'json'

/**
 * `json`: an opaque payload (any JSON object). turnlog gives it identity, history, hashing, export and
 * the audit of everything but tool-call pairing: it opens and answers no calls, so it is never an
 * unanswered call or an orphan. Its wire view is the payload itself.
 */
export const jsonFormat: MessageFormat<JsonPayload> = {
  name: JSON_FORMAT,
  schema: z.record(z.string(), z.unknown()),
  toolCalls: () => [],
  toolResults: () => [],
  interruptedResults: () => [],
  toWire: copyPayload,
  preview: (payload) => ({ role: 'json', kind: 'json', text: JSON.stringify(payload) }),
}
