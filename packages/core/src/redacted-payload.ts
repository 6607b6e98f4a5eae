import type { ChatMessage, ToolCall } from './chat-message.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/** The content a redacted message shows in every view. */
export const REDACTED_CONTENT = '[redacted]'

/** Top-level keys a redaction placeholder may have. */
const PLACEHOLDER_KEYS: ReadonlySet<string> = new Set(['role', 'content', 'tool_call_id', 'call_id', 'tool_calls'])
const TOOL_CALL_KEYS: ReadonlySet<string> = new Set(['id', 'call_id', 'type', 'function'])
const FUNCTION_KEYS: ReadonlySet<string> = new Set(['name', 'arguments'])
const ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool'])

/**
 * The placeholder that replaces a redacted payload: `{ role, content: '[redacted]' }` plus only what
 * tool-call pairing needs (`tool_call_id` / `call_id` of a result; each call's `id` / `call_id`, `type`
 * and function `name`, with `arguments: '{}'`). Every other field (text, reasoning, names, parts,
 * provider extras) is dropped. Idempotent. The database accepts exactly these shapes
 * (`turnlog.is_redaction_placeholder`).
 */
export function redactedPayload(payload: ChatMessage): ChatMessage {
  if (typeof payload !== 'object' || payload === null) {
    throw new TurnlogError('INVALID_INPUT', 'redactedPayload needs a provider payload object', { details: { field: 'payload' } })
  }
  return guardInput('redactedPayload', () => placeholderOf(payload))
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

/** True when `payload` has the shape {@link redactedPayload} makes (and nothing else). */
export function isRedactedPayload(payload: unknown): boolean {
  try {
    return isPlaceholder(payload)
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
    const fn = c['function']
    if (fn === undefined) return true
    return isObject(fn) && onlyKeys(fn, FUNCTION_KEYS) && typeof fn['name'] === 'string' && fn['arguments'] === '{}'
  })
}
