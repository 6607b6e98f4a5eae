import type { ChatMessage, ToolCall } from './chat-message.js'
import { DEFAULT_MESSAGE_FORMAT, readingFormat } from './formats/format-registry.js'
import { PLACEHOLDER_KEPT_KEYS, REDACTED_CONTENT } from './formats/structural-placeholder.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

export { PLACEHOLDER_KEPT_KEYS, REDACTED_CONTENT, structuralPlaceholder } from './formats/structural-placeholder.js'

/** Top-level keys a redaction placeholder may have. */
const PLACEHOLDER_KEYS: ReadonlySet<string> = new Set(['role', 'content', 'tool_call_id', 'call_id', 'tool_calls'])
const TOOL_CALL_KEYS: ReadonlySet<string> = new Set(['id', 'call_id', 'type', 'function', 'custom'])
const FUNCTION_KEYS: ReadonlySet<string> = new Set(['name', 'arguments'])
const CUSTOM_KEYS: ReadonlySet<string> = new Set(['name', 'input'])
const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool'])

/**
 * The placeholder that replaces a redacted payload of format `format` (absent: `openai-chat`).
 *
 * - `openai-chat`: `{ role, content: '[redacted]' }` plus only what tool-call pairing needs
 *   (`tool_call_id` / `call_id` of a result; each call's `id` / `call_id`, `type` and function
 *   `name`, with `arguments: '{}'`; a custom tool call's `custom.name`, with `input: '[redacted]'`, so
 *   the call stays one the provider accepts). Every other field (text, reasoning, names, parts,
 *   provider extras) is dropped.
 * - another format: its `redactedPayload` hook (`MessageFormat.redactedPayload`); without one, `{
 *   redacted: true }` (an opaque format has no pairing to keep).
 *
 * Idempotent. The database accepts only placeholder shapes (`turnlog.is_redaction_placeholder`):
 * the chat shape, or a structural placeholder ({@link structuralPlaceholder}).
 */
export function redactedPayload(payload: unknown, format?: string): ChatMessage {
  if ((format === undefined || format === DEFAULT_MESSAGE_FORMAT) && (typeof payload !== 'object' || payload === null)) {
    throw new TurnlogError('INVALID_INPUT', 'redactedPayload needs a provider payload object', { details: { field: 'payload' } })
  }
  return guardInput('redactedPayload', () => {
    if (format === undefined || format === DEFAULT_MESSAGE_FORMAT) return placeholderOf(payload as ChatMessage)
    const reading = readingFormat(format)
    const out = reading.redactedPayload ? reading.redactedPayload(payload, REDACTED_CONTENT) : { redacted: true }
    if (!isRedactedPayload(out, reading.name)) {
      throw new TurnlogError('INVALID_INPUT', `the redactedPayload hook of format ${reading.name} made no redaction placeholder`, {
        details: { format: reading.name },
      })
    }
    return out as ChatMessage
  })
}

function placeholderOf(payload: ChatMessage): ChatMessage {
  const out: Record<string, unknown> = { role: payload.role, content: REDACTED_CONTENT }
  if (typeof payload.tool_call_id === 'string') out['tool_call_id'] = payload.tool_call_id
  if (typeof payload.call_id === 'string') out['call_id'] = payload.call_id
  if (Array.isArray(payload.tool_calls)) {
    out['tool_calls'] = (payload.tool_calls as readonly ToolCall[]).map((c) => {
      const call: Record<string, unknown> = {}
      if (typeof c !== 'object' || c === null) return call
      if (typeof c.id === 'string') call['id'] = c.id
      if (typeof c.call_id === 'string') call['call_id'] = c.call_id
      if (typeof c.type === 'string') call['type'] = c.type
      if (typeof c.function === 'object' && c.function !== null && typeof c.function.name === 'string') {
        call['function'] = { name: c.function.name, arguments: '{}' }
      }
      // a custom tool's input is free text, not JSON: it gets the content marker, as every other text
      // (and as the openai-responses placeholder of a custom_tool_call), not the function's '{}'
      const custom = c['custom'] as { readonly name?: unknown } | null | undefined
      if (typeof custom === 'object' && custom !== null && typeof custom.name === 'string') {
        call['custom'] = { name: custom.name, input: REDACTED_CONTENT }
      }
      return call
    })
  }
  return out as unknown as ChatMessage
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  return Object.keys(value).every((k) => allowed.has(k))
}

/**
 * True when `payload` is a redaction placeholder of format `format`, by the rule the database enforces
 * (`turnlog.is_redaction_placeholder(p, p_format)`, a test pins the two together for every built-in
 * format):
 *
 * - `openai-chat`: exactly the chat shape {@link redactedPayload} makes (`{ role, content: '[redacted]' }`
 *   and the tool-call pairing ids: `tool_call_id` / `call_id`, each call's `id` / `call_id` / `type`,
 *   strings, its `function: { name, arguments: '{}' }` and its `custom: { name, input: '[redacted]' }`,
 *   `name` a string);
 * - any other format: a structural placeholder (an object whose every string is `'[redacted]'` or the
 *   value of a {@link PLACEHOLDER_KEPT_KEYS} key, whose every number is 0), which every format's
 *   `redactedPayload` hook must make.
 *
 * Without `format`: a placeholder of some format (either shape), for a payload whose format is not
 * known. Never throws for any `payload`; a `format` that is not a string is `INVALID_INPUT`.
 */
export function isRedactedPayload(payload: unknown, format?: string): boolean {
  if (format !== undefined && typeof format !== 'string') {
    throw new TurnlogError('INVALID_INPUT', 'isRedactedPayload: format must be a format name', { details: { field: 'format' } })
  }
  try {
    if (format === DEFAULT_MESSAGE_FORMAT) return isPlaceholder(payload)
    const structural = isObject(payload) && isStructural(payload, undefined)
    return format === undefined ? structural || isPlaceholder(payload) : structural
  } catch {
    // a Proxy or a throwing getter is not a placeholder
    return false
  }
}

function isPlaceholder(payload: unknown): boolean {
  if (!isObject(payload) || !onlyKeys(payload, PLACEHOLDER_KEYS)) return false
  if (typeof payload['role'] !== 'string' || !ROLES.has(payload['role']) || payload['content'] !== REDACTED_CONTENT) return false
  for (const k of ['tool_call_id', 'call_id']) {
    if (payload[k] !== undefined && typeof payload[k] !== 'string') return false
  }
  const calls = payload['tool_calls']
  if (calls === undefined) return true
  if (!Array.isArray(calls)) return false
  return calls.every((c: unknown) => {
    if (!isObject(c) || !onlyKeys(c, TOOL_CALL_KEYS)) return false
    // a pairing id or a call's type is a string, never a place for an object of content
    if (['id', 'call_id', 'type'].some((k) => c[k] !== undefined && typeof c[k] !== 'string')) return false
    const fn = c['function']
    if (fn !== undefined && !(isObject(fn) && onlyKeys(fn, FUNCTION_KEYS) && typeof fn['name'] === 'string' && fn['arguments'] === '{}')) {
      return false
    }
    const custom = c['custom']
    return (
      custom === undefined ||
      (isObject(custom) && onlyKeys(custom, CUSTOM_KEYS) && typeof custom['name'] === 'string' && custom['input'] === REDACTED_CONTENT)
    )
  })
}

function isStructural(value: unknown, key: string | undefined): boolean {
  if (typeof value === 'string') return value === REDACTED_CONTENT || (key !== undefined && PLACEHOLDER_KEPT_KEYS.has(key))
  if (typeof value === 'number') return value === 0
  if (typeof value === 'boolean' || value === null) return true
  if (Array.isArray(value)) return value.every((v) => isStructural(v, undefined))
  if (isObject(value)) return Object.entries(value).every(([k, v]) => isStructural(v, k))
  return false
}
