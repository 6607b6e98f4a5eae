import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { ChatMessage } from './chat-message.js'
import { MAX_JSON_DEPTH } from './json-depth.js'
import { markedContentHash, setMarkedContentHash } from './deep-frozen-mark.js'
import { isDeepFrozen } from './json-value.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/** A content hash: lower-case hex SHA-256 of the RFC 8785 canonical JSON of a payload. */
export type ContentHash = string & { readonly __contentHash: true }

/**
 * Hashes of deeply frozen values core did not freeze itself (a caller's own frozen object). Core's
 * own values (every payload inside a `Message`) keep their hash on their deep-frozen mark instead: a
 * weak-collection entry per message would slow every young-generation scavenge (object-stamp.ts).
 */
const memo = new WeakMap<object, ContentHash>()

function cachedHash(payload: object): ContentHash | undefined {
  return (markedContentHash(payload) as ContentHash | undefined) ?? memo.get(payload)
}

/** Records `hash` for a payload known to be deeply frozen: on its mark, or in {@link memo}. */
function remember(payload: object, hash: ContentHash): void {
  if (!setMarkedContentHash(payload, hash)) memo.set(payload, hash)
}

/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value: object keys sorted by UTF-16 code
 * units, ECMAScript number formatting, JSON.stringify string escaping, no whitespace.
 *
 * One documented extension: RFC 8785 requires well-formed Unicode, but real tool output contains
 * lone surrogates. They are written the way `JSON.stringify` writes them (`\udXXX` escapes), which is
 * unambiguous and leaves every well-formed input's canonical text unchanged. The `canonicalize`
 * package (the RFC author's implementation, which refuses lone surrogates) is the oracle in tests.
 *
 * Throws `INVALID_INPUT` for a value nested deeper than {@link MAX_JSON_DEPTH} levels (the limit every
 * stored value keeps; a circular value ends there too), and `MESSAGE_TOO_LARGE` when the text would be
 * longer than the longest string JavaScript can hold (2^29 − 24 UTF-16 code units in V8).
 */
export function canonicalJson(value: unknown): string {
  return guardInput('value', () => {
    try {
      return canonical(value, 0)
    } catch (error) {
      // the depth is bounded, so this is the string length limit, not the stack
      if (error instanceof RangeError) throw tooLong(error)
      throw error
    }
  })
}

/** The longest string V8 can hold, in UTF-16 code units. */
const MAX_STRING_LENGTH = 2 ** 29 - 24

function tooLong(cause: unknown): TurnlogError {
  return new TurnlogError(
    'MESSAGE_TOO_LARGE',
    `the value's JSON text is longer than the longest string JavaScript can hold (${MAX_STRING_LENGTH} UTF-16 code units)`,
    {
      details: { limit: MAX_STRING_LENGTH },
      cause,
    },
  )
}

function noJsonForm(what: string): never {
  throw new TurnlogError('INVALID_INPUT', `${what} has no JSON form`, { details: { field: 'value' } })
}

/** {@link canonicalJson} of a value `depth` levels down: refuses a level past {@link MAX_JSON_DEPTH} before recursing into it. */
function canonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) noJsonForm(String(value))
      return JSON.stringify(value)
    case 'object': {
      if (value === null) return 'null'
      if (depth >= MAX_JSON_DEPTH) {
        throw new TurnlogError(
          'INVALID_INPUT',
          `JSON nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects has no canonical form here (or the value is circular)`,
          {
            details: {
              field: 'value',
              limit: MAX_JSON_DEPTH,
              issues: [{ code: 'too_deep', path: [], message: `nesting deeper than ${MAX_JSON_DEPTH}` }],
            },
          },
        )
      }
      if (Array.isArray(value)) {
        let out = '['
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ','
          const item: unknown = value[i]
          out += item === undefined ? 'null' : canonical(item, depth + 1)
        }
        return out + ']'
      }
      // plain data only (a Date or a Map has no own enumerable keys and would hash as {}); by its tag, which
      // holds across realms, where a prototype check would not
      const tag = Object.prototype.toString.call(value)
      if (tag !== '[object Object]') noJsonForm(`a ${tag.slice(8, -1)}`)
      const obj = value as Record<string, unknown>
      const keys = Object.keys(obj).sort()
      let out = '{'
      let first = true
      for (const key of keys) {
        const item = obj[key]
        if (item === undefined) continue
        if (!first) out += ','
        first = false
        out += JSON.stringify(key) + ':' + canonical(item, depth + 1)
      }
      return out + '}'
    }
    default:
      return noJsonForm(typeof value)
  }
}

/**
 * The content hash of a provider payload (or of a {@link Message}'s payload): hex SHA-256 of the
 * UTF-8 bytes of its RFC 8785 canonical JSON. Equal content gives equal hashes regardless of key
 * order. This format is stable: stored hashes depend on it.
 *
 * Deeply frozen payloads (every payload inside a `Message`) are hashed once and memoised.
 *
 * Only the payload is hashed, whatever its format: a message's `format` and `meta` are not part of its
 * content hash (so every chat message keeps the hash it had before formats existed, and a retry that
 * differs only in `meta` is a duplicate). Pass the message (not its payload) for a payload of another
 * format that has a top-level `payload` field and no `role`.
 */
export function contentHash(value: ChatMessage | { readonly payload: unknown }): ContentHash {
  if (typeof value !== 'object' || value === null) {
    throw new TurnlogError('INVALID_INPUT', `contentHash needs a payload or a message, got ${value === null ? 'null' : typeof value}`, {
      details: { field: 'value' },
    })
  }
  return guardInput('value', () => hashOf(value))
}

function hashOf(value: ChatMessage | { readonly payload: unknown }): ContentHash {
  const payload: object =
    'payload' in value && typeof value.payload === 'object' && value.payload !== null && !('role' in value) ? value.payload : value
  return hashPayload(payload, portableSha256Hex)
}

/** SHA-256 of a string's UTF-8 bytes, lower-case hex, in portable JavaScript (`@noble/hashes`). */
function portableSha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)))
}

/**
 * The content hash of exactly `payload` (no message/payload detection: the caller passes the payload),
 * with `sha256Hex` as the digest of the canonical text's UTF-8 bytes: memoised on a deeply frozen
 * payload like {@link contentHash}'s, so the two share one memo and one rule (canonical text, then
 * SHA-256, lower-case hex). Internal: the store and the export-file reader pass Node's native SHA-256
 * (core may not import Node built-ins); `sha256Hex` must return what the portable one does for every
 * string, since the result is memoised for everyone (a test pins the store's against
 * {@link contentHash}). Throws `INVALID_INPUT` for a payload that is not an object, a digest that is
 * not a function or returns anything but 64 lower-case hex digits (nothing is memoised then).
 */
export function payloadContentHash(payload: object, sha256Hex: (text: string) => string): ContentHash {
  if (typeof payload !== 'object' || payload === null)
    throw new TurnlogError('INVALID_INPUT', 'payloadContentHash needs a payload object', { details: { field: 'payload' } })
  if (typeof sha256Hex !== 'function')
    throw new TurnlogError('INVALID_INPUT', 'payloadContentHash needs a digest function', { details: { field: 'sha256Hex' } })
  return guardInput('payload', () => hashPayload(payload, sha256Hex))
}

const HEX64 = /^[0-9a-f]{64}$/

/** {@link payloadContentHash} once its arguments are checked (core's own {@link contentHash} too). */
function hashPayload(payload: object, sha256Hex: (text: string) => string): ContentHash {
  const cached = cachedHash(payload)
  if (cached !== undefined) return cached
  const text = canonicalJson(payload)
  let hash: ContentHash
  try {
    hash = sha256Hex(text) as ContentHash
  } catch (error) {
    // the UTF-8 bytes of a text near the string limit can exceed what one buffer may hold
    if (error instanceof RangeError) throw tooLong(error)
    throw error
  }
  if (typeof hash !== 'string' || !HEX64.test(hash))
    throw new TurnlogError('INVALID_INPUT', 'the digest did not return 64 lower-case hex digits', { details: { field: 'sha256Hex' } })
  if (isDeepFrozen(payload)) remember(payload, hash)
  return hash
}

/**
 * Records a hash that is already known for a deeply frozen payload (e.g. read from the database next
 * to it), so it is not recomputed. Ignored for objects that are not deeply frozen, and for anything
 * that is not a payload object and a 64-digit hex hash; never throws.
 */
export function primeContentHash(payload: object, hash: string): void {
  // a hint, never a failure: anything but a payload object and a hex SHA-256 is ignored (the rebuild
  // folds events whose hashes and payloads it did not read)
  if (typeof payload !== 'object' || payload === null || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) return
  try {
    if (isDeepFrozen(payload)) remember(payload, hash as ContentHash)
  } catch {
    // a Proxy or a throwing getter: not memoised
  }
}

/**
 * Memoises `hash` for a payload the caller has itself just deep-frozen (`restoreMessage`, for a payload
 * that was frozen already and so could not be marked), without the walk {@link primeContentHash} makes
 * to confirm it. Internal to core: not exported from the package.
 */
export function rememberContentHash(payload: object, hash: string): void {
  remember(payload, hash as ContentHash)
}

/** SHA-256 of a string's UTF-8 bytes, hex. */
export function sha256Hex(text: string): string {
  if (typeof text !== 'string')
    throw new TurnlogError('INVALID_INPUT', `sha256Hex needs a string, got ${typeof text}`, { details: { field: 'text' } })
  return bytesToHex(sha256(utf8ToBytes(text)))
}
