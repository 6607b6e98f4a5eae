import { cloneJson, type JsonValue } from '../json-value.js'
import type { MessagePreview } from './message-format.js'
import { structuralPlaceholder } from './structural-placeholder.js'
import { partsText } from './typed-item-schema.js'

const NOTHING_KEPT: ReadonlySet<string> = new Set()

/**
 * Whether the value under `key` of object `parent` is application data (a tool's input or output, metadata,
 * provider options): a subtree whose strings are all content, even under a key such as `name` or `id`.
 */
export type OpaqueField = (key: string, parent: Readonly<Record<string, unknown>>) => boolean

/**
 * The `redactedPayload` hook of a structured format: the payload's {@link structuralPlaceholder}
 * showing `content` (kinds, roles, pairing ids and tool names kept). The subtrees `opaque` names keep
 * their shape but none of their strings: a `name` or `id` inside a tool's input is content, not a tool
 * name or a pairing id.
 */
export function structuralRedaction(payload: unknown, content: string, opaque?: OpaqueField): unknown {
  return structuralPlaceholder(opaque === undefined ? payload : blankOpaque(payload, content, opaque), content)
}

/** `value` with every subtree `opaque` names replaced by its placeholder that keeps no string. */
function blankOpaque(value: unknown, content: string, opaque: OpaqueField): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => blankOpaque(v, content, opaque))
  if (typeof value !== 'object' || value === null) return value
  const parent = value as Readonly<Record<string, unknown>>
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(parent)) {
    const blanked = opaque(key, parent) ? structuralPlaceholder(v, content, NOTHING_KEPT) : blankOpaque(v, content, opaque)
    // defineProperty, not assignment: a "__proto__" key stays a plain own property
    Object.defineProperty(out, key, { value: blanked, enumerable: true, writable: true, configurable: true })
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
