import { cloneJson, type JsonValue } from '../json-value.js'
import type { MessagePreview } from './message-format.js'
import { structuralPlaceholder } from './structural-placeholder.js'
import { partsText } from './typed-item-schema.js'

/**
 * The `redactedPayload` hook of a structured format: the payload's {@link structuralPlaceholder}
 * showing `content` (kinds, roles, pairing ids and tool names kept).
 */
export function structuralRedaction(payload: unknown, content: string): unknown {
  return structuralPlaceholder(payload, content)
}

/** The `toWire` hook of a format whose wire view is the payload itself: a fresh deep copy. */
export function copyPayload(payload: unknown): unknown {
  return cloneJson(payload as JsonValue)
}

/**
 * The preview of a call item of kind `kind`: `name(arguments)`, the arguments as they are when a
 * string, else as JSON. Its kind is `tool_calls` when the item opens a call (`opens`), else `kind`
 * (a call that carries its own result).
 */
export function callPreview(kind: string, opens: boolean, name: string, args: unknown): MessagePreview {
  const shown = typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args)
  return { role: 'assistant', kind: opens ? 'tool_calls' : kind, text: `${name}(${shown})` }
}

/**
 * The preview of a result item of kind `kind`: its output as text (a string as it is, content parts
 * by their text, anything else as JSON). Its kind is `tool_result` when the item answers a call
 * (`answers`), else `kind`.
 */
export function resultPreview(kind: string, answers: boolean, output: unknown): MessagePreview {
  const text = typeof output === 'string' ? output : Array.isArray(output) ? partsText(output) : JSON.stringify(output ?? null)
  return { role: 'tool', kind: answers ? 'tool_result' : kind, text }
}
