import { TurnlogError, type JsonValue } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'

/** The checked field's name for messages and `details.field`: a string, never a raw error on garbage. */
const fieldName = (field: unknown): string => (typeof field === 'string' ? field : 'value')

// eslint-disable-next-line no-control-regex
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The `INVALID_INPUT` of an unsafe value of `field`: named in `details.field` and first in the message. */
function unsafe(field: string, problem: string): TurnlogError {
  return new TurnlogError('INVALID_INPUT', `${field} ${problem}`, { details: { field } })
}

/**
 * Checks a short engine-visible string (externalId, tenant, reason): it is stored where Postgres
 * JSON operators read it, and those refuse `\u0000` and lone surrogates. Message payloads have no
 * such limit; they are stored exactly. `field` names the argument or option the value came from
 * (`'options.reason'`, `'messages[2].externalId'`): its `INVALID_INPUT` carries it in `details.field`
 * (docs/errors.md) and begins its message with it.
 */
export function checkSafeText(value: unknown, field: string): string {
  field = fieldName(field)
  if (typeof value !== 'string') throw unsafe(field, 'must be a string')
  if (value.length > 4096) throw unsafe(field, 'is longer than 4096 characters')
  if (UNSAFE.test(value)) throw unsafe(field, 'contains NUL or a lone surrogate, which Postgres JSON operators refuse')
  return value
}

/**
 * Checks every string (keys too) of an engine-visible JSON value with {@link checkSafeText}'s rule;
 * `field` names the argument or option the value came from, as there. Walks without recursion (a value
 * from a file may nest arbitrarily deep).
 */
export function checkSafeJson(value: JsonValue, field: string): JsonValue {
  field = fieldName(field)
  // a throwing getter or Proxy in the value is the caller's input
  guardInput(field, () => {
    const stack: JsonValue[] = [value]
    while (stack.length > 0) {
      const v = stack.pop() as JsonValue
      if (typeof v === 'string') {
        if (UNSAFE.test(v)) throw unsafe(field, 'contains NUL or a lone surrogate, which Postgres JSON operators refuse')
      } else if (Array.isArray(v)) {
        for (const item of v as readonly JsonValue[]) stack.push(item)
      } else if (v !== null && typeof v === 'object') {
        for (const [k, item] of Object.entries(v)) {
          if (UNSAFE.test(k)) throw unsafe(field, 'has a key with NUL or a lone surrogate, which Postgres JSON operators refuse')
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
