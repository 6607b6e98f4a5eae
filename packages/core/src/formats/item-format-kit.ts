import { cloneJson, type JsonValue } from '../json-value.js'
import type { MessagePreview } from './message-format.js'
import { structuralPlaceholder } from './structural-placeholder.js'
import { partsText } from './typed-item-schema.js'

/**
 * Whether the value under `key` of object `parent` is application data (a tool's input or output, metadata,
 * provider options): content through and through, keys included, even under a key such as `name` or `id`.
 */
export type OpaqueField = (key: string, parent: Readonly<Record<string, unknown>>) => boolean

/**
 * The `redactedPayload` hook of a structured format: the payload's {@link structuralPlaceholder}
 * showing `content` (kinds, roles, pairing ids and tool names kept). The application data `opaque`
 * names is emptied: an object becomes `{}`, an array `[]`, a string `content`, a number 0 (a `name` or
 * `id` inside a tool's input, or a key of it, is content, not a tool name or a pairing id).
 */
export function structuralRedaction(payload: unknown, content: string, opaque?: OpaqueField): unknown {
  return structuralPlaceholder(opaque === undefined ? payload : withoutData(payload, content, opaque), content)
}

/** Application data emptied, keeping its JSON type. */
function emptied(value: unknown, content: string): unknown {
  if (Array.isArray(value)) return []
  if (typeof value === 'object' && value !== null) return {}
  if (typeof value === 'string') return content
  if (typeof value === 'number') return 0
  return value
}

/** `value` with every subtree `opaque` names {@link emptied}. */
function withoutData(value: unknown, content: string, opaque: OpaqueField): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => withoutData(v, content, opaque))
  if (typeof value !== 'object' || value === null) return value
  const parent = value as Readonly<Record<string, unknown>>
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(parent)) {
    const kept = opaque(key, parent) ? emptied(v, content) : withoutData(v, content, opaque)
    // defineProperty, not assignment: a "__proto__" key stays a plain own property
    Object.defineProperty(out, key, { value: kept, enumerable: true, writable: true, configurable: true })
  }
  return out
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
