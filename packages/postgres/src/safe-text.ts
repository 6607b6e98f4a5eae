import { TurnlogError, type JsonValue } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'

/** The name of the checked field for messages: a string, never a raw error on garbage. */
const fieldName = (what: unknown): string => (typeof what === 'string' ? what : 'value')

// eslint-disable-next-line no-control-regex
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Checks a short engine-visible string (externalId, tenant, reason): it is stored where Postgres
 * JSON operators read it, and those refuse `\u0000` and lone surrogates. Message payloads have no
 * such limit; they are stored exactly.
 */
export function checkSafeText(value: unknown, what: string): string {
  what = fieldName(what)
  if (typeof value !== 'string') throw new TurnlogError('INVALID_INPUT', `${what} must be a string`)
  if (value.length > 4096) throw new TurnlogError('INVALID_INPUT', `${what} is longer than 4096 characters`)
  if (UNSAFE.test(value)) {
    throw new TurnlogError('INVALID_INPUT', `${what} contains NUL or a lone surrogate, which Postgres JSON operators refuse`, {
      details: { what },
    })
  }
  return value
}

/**
 * Checks every string (keys too) of an engine-visible JSON value with {@link checkSafeText}'s rule.
 * Walks without recursion (a value from a file may nest arbitrarily deep).
 */
export function checkSafeJson(value: JsonValue, what: string): JsonValue {
  what = fieldName(what)
  // a throwing getter or Proxy in the value is the caller's input
  guardInput(what, () => {
    const stack: JsonValue[] = [value]
    while (stack.length > 0) {
      const v = stack.pop() as JsonValue
      if (typeof v === 'string') {
        if (UNSAFE.test(v)) throw new TurnlogError('INVALID_INPUT', `${what} contains NUL or a lone surrogate`, { details: { what } })
      } else if (Array.isArray(v)) {
        for (const item of v as readonly JsonValue[]) stack.push(item)
      } else if (v !== null && typeof v === 'object') {
        for (const [k, item] of Object.entries(v)) {
          if (UNSAFE.test(k))
            throw new TurnlogError('INVALID_INPUT', `${what} has a key with NUL or a lone surrogate`, { details: { what } })
          stack.push(item as JsonValue)
        }
      }
    }
  })
  return value
}

/**
 * A short description of an untrusted value for an error message. Never throws: `String()` does, on
 * a symbol inside a template, an object without a prototype or one with a throwing `toString`.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'object') return value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object'
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)
}
