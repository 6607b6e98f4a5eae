/**
 * Building blocks of the item-format arbitraries (`openai-responses`, `openai-agents`): objects with
 * known fields plus unknown provider fields in random key order, JSON values without `-0` (which
 * `createMessage` stores as `0`, so it could not round-trip exactly), weird texts and call ids.
 * @packageDocumentation
 */
import fc from 'fast-check'
import type { JsonValue } from '@turnlog/core'
import { jsonValueArb, weirdStringArb } from '../arbitraries.js'
import { shuffledObjectArb } from '../shuffled-object-arbitrary.js'

/** Field names the item formats' schemas read: unknown extra fields never take them. */
export const RESERVED_ITEM_KEYS: ReadonlySet<string> = new Set([
  'type',
  'role',
  'content',
  'id',
  'call_id',
  'callId',
  'name',
  'arguments',
  'output',
  'input',
  'status',
  'summary',
  'encrypted_content',
  'approval_request_id',
  'approve',
  'action',
  'actions',
  'queries',
  'server_label',
  'execution',
  'tools',
  'pending_safety_checks',
  'operation',
  'code',
  'container_id',
  'result',
  'providerData',
  'rawContent',
  'fingerprint',
  'image_url',
  'file_id',
  'file_data',
  'file_url',
  'filename',
  'text',
  'refusal',
])

/** `value` with every `-0` replaced by `0` (a JSON document cannot tell them apart). */
export function withoutNegativeZero(value: JsonValue): JsonValue {
  if (typeof value === 'number') return Object.is(value, -0) ? 0 : value
  if (Array.isArray(value)) return value.map(withoutNegativeZero)
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNegativeZero(v)]))
  return value
}

/** JSON values with weird strings, shallow, never `-0`. */
export const extraValueArb: fc.Arbitrary<JsonValue> = jsonValueArb.map(withoutNegativeZero)

/**
 * An object of `known` entries (`undefined` values left out) and up to `maxExtras` unknown fields
 * whose names avoid `reserved`, keys in random order, built with `Object.fromEntries` so that a
 * `__proto__` key is an own property.
 */
export function itemArb(
  known: fc.Arbitrary<[string, unknown][]>,
  reserved: ReadonlySet<string>,
  maxExtras = 2,
): fc.Arbitrary<Record<string, unknown>> {
  const keyArb = fc
    .oneof(fc.constantFrom('providerData_x', 'x_trace', 'created_by', 'metadata', '__proto__', 'constructor', '0'), weirdStringArb)
    .filter((k) => !reserved.has(k))
  return shuffledObjectArb(known, fc.array(fc.tuple(keyArb, extraValueArb), { maxLength: maxExtras }))
}

/** A tool or function name: usually a plain identifier, sometimes a weird string. */
export const toolNameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z_]{1,16}$/) },
  { weight: 1, arbitrary: weirdStringArb },
)

/** Tool-call arguments: JSON text of a weird value, or a weird string. */
export const argumentsArb: fc.Arbitrary<string> = fc.oneof(
  extraValueArb.map((v) => JSON.stringify(v)),
  weirdStringArb,
)

/** An item type this version does not know (a future kind). */
export const futureTypeArb: fc.Arbitrary<string> = fc.stringMatching(/^future_[a-z_]{1,12}$/)
