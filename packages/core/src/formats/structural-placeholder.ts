import { guardInput } from '../parse-input.js'

/** The content a redacted message shows in every view. */
export const REDACTED_CONTENT = '[redacted]'

/**
 * Keys whose string values a structural placeholder keeps (see {@link structuralPlaceholder}): the
 * item/part type, the speaker, tool-call pairing ids, tool names and call states. Every other string
 * becomes `'[redacted]'`. Mirrored by `turnlog.is_structural_placeholder` (SQL).
 */
export const PLACEHOLDER_KEPT_KEYS: ReadonlySet<string> = new Set([
  'type',
  'role',
  'id',
  'call_id',
  'callId',
  'toolCallId',
  'tool_use_id',
  'approval_request_id',
  'approvalId',
  'name',
  'toolName',
  'state',
  'status',
  'execution',
])

/**
 * A placeholder of the same shape as `payload` without its content: objects and arrays kept, the
 * string values of {@link PLACEHOLDER_KEPT_KEYS} kept (type, role, pairing ids, tool names, states),
 * every other string replaced by `content` (`'[redacted]'`), numbers by 0, booleans and nulls kept.
 * A typed-item format's `redactedPayload` hook builds on it: the result still carries its discriminators
 * and pairing ids, so it stays a payload of the format and a redacted result still answers its call.
 * `keep` (a subset of {@link PLACEHOLDER_KEPT_KEYS}) narrows what is kept. Never mutates `payload`.
 */
export function structuralPlaceholder(
  payload: unknown,
  content: string = REDACTED_CONTENT,
  keep: ReadonlySet<string> = PLACEHOLDER_KEPT_KEYS,
): unknown {
  const walk = (value: unknown, key: string | undefined): unknown => {
    if (typeof value === 'string') return key !== undefined && keep.has(key) && PLACEHOLDER_KEPT_KEYS.has(key) ? value : content
    if (typeof value === 'number') return 0
    if (typeof value === 'boolean' || value === null) return value
    if (Array.isArray(value)) return value.map((v) => walk(v, undefined))
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        // defineProperty, not assignment: a "__proto__" key stays a plain own property
        if (v !== undefined) Object.defineProperty(out, k, { value: walk(v, k), enumerable: true, writable: true, configurable: true })
      }
      return out
    }
    return content
  }
  return guardInput('structuralPlaceholder', () => walk(payload, undefined))
}
