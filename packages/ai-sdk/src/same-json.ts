import { canonicalJson, type JsonValue } from '@turnlog/core'

/** True when `a` and `b` are the same JSON value (their RFC 8785 texts are equal: key order does not count). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a as JsonValue) === canonicalJson(b as JsonValue)
}
