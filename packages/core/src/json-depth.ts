import { ERROR_CODES, type ErrorCode } from './error-codes.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/**
 * The deepest nesting of arrays and objects turnlog accepts in any JSON value a caller gives it: a
 * message payload, session, fork and compaction metadata, and every value of an import file. A scalar
 * has depth 0, `{}` and `[]` depth 1, `{"a":[1]}` depth 2. Deep enough for any provider message,
 * shallow enough that no walker over a value can overflow the stack.
 */
export const MAX_JSON_DEPTH = 64

/**
 * The nesting depth of `value` (see {@link MAX_JSON_DEPTH}), counted without recursion, so any depth
 * (100,000 levels, a cycle) is measured without a stack overflow. Stops as soon as the depth exceeds
 * `stopAbove` and returns `stopAbove + 1` (a cycle therefore ends there too). Own enumerable keys and
 * array items are followed, as `JSON.stringify` does.
 */
export function jsonDepth(value: unknown, stopAbove: number = MAX_JSON_DEPTH): number {
  checkLimit(stopAbove, 'stopAbove')
  if (typeof value !== 'object' || value === null) return 0
  // a throwing getter or Proxy trap in the value is the caller's input: INVALID_INPUT, not a raw error
  return guardInput('value', () => measure(value, stopAbove))
}

function checkLimit(limit: unknown, field: string): void {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
    throw new TurnlogError('INVALID_INPUT', `${field} must be a non-negative integer`, { details: { field } })
  }
}

function measure(value: object, stopAbove: number): number {
  let deepest = 0
  const stack: { readonly value: object; readonly depth: number }[] = [{ value, depth: 1 }]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > deepest) deepest = top.depth
    if (deepest > stopAbove) return stopAbove + 1
    const depth = top.depth + 1
    if (Array.isArray(top.value)) {
      for (const item of top.value as readonly unknown[]) if (typeof item === 'object' && item !== null) stack.push({ value: item, depth })
    } else {
      const v = top.value as Record<string, unknown>
      for (const key of Object.keys(v)) {
        const item = v[key]
        if (typeof item === 'object' && item !== null) stack.push({ value: item, depth })
      }
    }
  }
  return deepest
}

/**
 * Throws `TurnlogError(code)` when `value` nests deeper than `limit` (default {@link MAX_JSON_DEPTH}),
 * with `details` `{ what, field: what, limit }` (`what` names the value, as `details.field` does). Measured by {@link jsonDepth}: no recursion. Returns `value`.
 */
export function checkJsonDepth<T>(value: T, what: string, code: ErrorCode = 'INVALID_INPUT', limit: number = MAX_JSON_DEPTH): T {
  checkLimit(limit, 'limit')
  if (typeof code !== 'string' || !Object.hasOwn(ERROR_CODES, code))
    throw new TurnlogError('INVALID_INPUT', 'code must be an error code', { details: { field: 'code' } })
  what = typeof what === 'string' ? what : 'value'
  if (jsonDepth(value, limit) > limit) {
    throw new TurnlogError(code, `${what} is nested deeper than ${limit} levels of arrays and objects`, {
      details: { what, field: what, limit, issues: [{ code: 'too_deep', path: [], message: `nesting deeper than ${limit}` }] },
    })
  }
  return value
}
