import { confirmDeepFrozen, isMarkedDeepFrozen, markDeepFrozen } from './deep-frozen-mark.js'
import { MAX_JSON_DEPTH } from './json-depth.js'
import { z } from 'zod'
import { checkKnownKeys } from './check-known-keys.js'
import { guardInput, parseInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/** A JSON value as stored: what `JSON.parse` can return. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue }

/** Limits applied while copying untrusted input into a JSON value. */
export interface JsonLimits {
  /** Maximum nesting depth of arrays and objects. */
  readonly maxDepth: number
}

/**
 * True when no part of `value` can change any more. O(1) for values core froze itself (marked with
 * `markDeepFrozen`: {@link toFrozenJson}'s copies, payloads restored from a store); otherwise one walk.
 * A frozen object with an accessor (getter) among its own enumerable keys is not: `Object.freeze`
 * fixes the getter, not what it returns, so its JSON can still change (and a hash memoised for it
 * would go stale).
 */
export function isDeepFrozen(value: unknown): boolean {
  // without recursion: a caller's value (primeContentHash) may nest arbitrarily deep, or be cyclic
  const stack: unknown[] = [value]
  const seen = new Set<object>()
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v !== 'object' || v === null || isMarkedDeepFrozen(v) || seen.has(v)) continue
    if (!Object.isFrozen(v)) return false
    seen.add(v)
    for (const key of Object.keys(v)) {
      // the descriptor, not a read: a getter's value is not fixed by the freeze (and is not called here)
      const d = Object.getOwnPropertyDescriptor(v, key)
      if (d === undefined || !('value' in d)) return false
      stack.push(d.value)
    }
  }
  return true
}

/** Freezes the root of a fresh copy whose every part is frozen already, and marks it deep-frozen. */
function freezeMarked<T extends object>(root: T): T {
  markDeepFrozen(root)
  Object.freeze(root)
  confirmDeepFrozen(root)
  return root
}

/** Default limits: deep enough for any provider message, shallow enough to refuse a stack bomb ({@link MAX_JSON_DEPTH}). */
export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: MAX_JSON_DEPTH }

/** The largest `maxDepth` {@link toFrozenJson} accepts: its copy recurses once per level. */
const MAX_COPY_DEPTH = 1000

/** What a copy's error names: the value's root in the message (`payload`, `meta`) and `details.field` when it is an argument's. */
interface CopyRoot {
  readonly label: string
  readonly field?: string
}

const PAYLOAD_ROOT: CopyRoot = { label: 'payload' }

function fail(path: readonly (string | number)[], message: string, root: CopyRoot): never {
  throw new TurnlogError(
    'INVALID_MESSAGE',
    `${root.label}${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}: ${message}`,
    {
      details: { ...(root.field === undefined ? {} : { field: root.field }), issues: [{ code: 'invalid_json', path, message }] },
    },
  )
}

/**
 * Copies `value` into a deeply frozen plain JSON value, keeping key order. Object keys whose value is
 * `undefined` are dropped (JSON semantics); anything JSON cannot represent exactly (functions,
 * symbols, bigint, non-finite numbers, `undefined` in arrays, class instances, cycles, excessive
 * depth: more than `limits.maxDepth` levels, default {@link MAX_JSON_DEPTH}) is refused with
 * `INVALID_MESSAGE` rather than silently changed. The copy recurses once per level, so `maxDepth` is at
 * most 1,000 (`INVALID_INPUT` otherwise).
 */
export function toFrozenJson(value: unknown, limits: JsonLimits = DEFAULT_JSON_LIMITS): JsonValue {
  const checked = limits === DEFAULT_JSON_LIMITS ? limits : parseInput(JsonLimitsSchema, limits, 'limits')
  if (checked !== DEFAULT_JSON_LIMITS) checkKnownKeys(checked, ['maxDepth'], 'limits', 'toFrozenJson')
  // a throwing getter or Proxy trap in the value is the caller's input: INVALID_INPUT, not a raw error
  return guardInput('toFrozenJson', () => frozenCopy(value, checked, PAYLOAD_ROOT))
}

/**
 * {@link toFrozenJson} of a message payload (default limits), as the format registry validates it: an
 * error raised while reading it (a throwing getter, a Proxy trap) is `INVALID_INPUT` with
 * `details.field: 'payload'`, the argument at fault (`createMessage`, `parseFormatPayload`, `revise`, a
 * message copy's field), never the name of an internal function. Internal.
 */
export function toFrozenPayload(value: unknown): JsonValue {
  return guardInput('payload', () => frozenCopy(value, DEFAULT_JSON_LIMITS, PAYLOAD_ROOT))
}

/**
 * {@link toFrozenJson} of an argument that is not a payload (a message's `meta`, a session's
 * `metadata`): its errors name it (`meta.at: only plain objects are allowed`, `details.field: 'meta'`),
 * not `payload`. Internal (`@turnlog/core/internal`).
 */
export function toFrozenJsonField(value: unknown, field: string): JsonValue {
  return guardInput(field, () => frozenCopy(value, DEFAULT_JSON_LIMITS, { label: field, field }))
}

const JsonLimitsSchema = z.looseObject({ maxDepth: z.number().int().min(1).max(MAX_COPY_DEPTH) })

function frozenCopy(value: unknown, limits: JsonLimits, root: CopyRoot): JsonValue {
  const path: (string | number)[] = []
  const seen = new Set<object>()
  const copy = (v: unknown, depth: number): JsonValue => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v
      case 'number':
        if (!Number.isFinite(v)) fail(path, `number ${String(v)} is not representable in JSON`, root)
        return Object.is(v, -0) ? 0 : v
      case 'object': {
        if (v === null) return null
        if (depth >= limits.maxDepth) fail(path, `nesting deeper than ${limits.maxDepth}`, root)
        if (seen.has(v)) fail(path, 'circular reference', root)
        seen.add(v)
        try {
          if (Array.isArray(v)) {
            const out: JsonValue[] = new Array<JsonValue>(v.length)
            for (let i = 0; i < v.length; i++) {
              path.push(i)
              const item: unknown = v[i]
              if (item === undefined) fail(path, 'undefined is not a JSON value', root)
              out[i] = copy(item, depth + 1)
              path.pop()
            }
            return depth === 0 ? freezeMarked(out) : Object.freeze(out)
          }
          const proto: unknown = Object.getPrototypeOf(v)
          if (proto !== Object.prototype && proto !== null) fail(path, 'only plain objects are allowed', root)
          const out: Record<string, JsonValue> = {}
          for (const key of Object.keys(v)) {
            const item: unknown = (v as Record<string, unknown>)[key]
            if (item === undefined) continue
            path.push(key)
            // defineProperty, not assignment: a "__proto__" key stays a plain own property.
            Object.defineProperty(out, key, { value: copy(item, depth + 1), enumerable: true, writable: false, configurable: false })
            path.pop()
          }
          return depth === 0 ? freezeMarked(out) : Object.freeze(out)
        } finally {
          seen.delete(v)
        }
      }
      default:
        return fail(path, `${typeof v} is not a JSON value`, root)
    }
  }
  return copy(value, 0)
}

/**
 * Deep-copies a JSON value into fresh, mutable objects (used for wire copies). Throws `INVALID_INPUT`
 * for a value JSON cannot hold (undefined, a function, a bigint, a cycle).
 */
export function cloneJson<T extends JsonValue>(value: T): T {
  return guardInput('cloneJson', () => {
    const text = JSON.stringify(value) as string | undefined
    if (text === undefined)
      throw new TurnlogError('INVALID_INPUT', `cloneJson needs a JSON value, got ${typeof value}`, { details: { field: 'value' } })
    return JSON.parse(text) as T
  })
}
