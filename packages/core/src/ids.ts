import { v5 as uuidv5, v7 as uuidv7, validate as uuidValidate } from 'uuid'
import { TurnlogError } from './turnlog-error.js'

declare const brand: unique symbol
/** A branded string: a value of type `T` that was parsed at the boundary. */
export type Brand<T, B extends string> = T & { readonly [brand]: B }

/** A message's stable identity: a lower-case UUID (v7 when minted, v5 when derived). */
export type MessageId = Brand<string, 'MessageId'>
/** A session's identity: a lower-case UUID. */
export type SessionId = Brand<string, 'SessionId'>
/** An event's identity: a lower-case UUID v7. */
export type EventId = Brand<string, 'EventId'>

/**
 * The namespace for ids derived from platform ids (`externalId`): UUIDv5 of the DNS name
 * `external-id.turnlog.dev` in the RFC 4122 DNS namespace. Stable forever; changing it would give
 * redelivered messages new ids.
 */
export const EXTERNAL_ID_NAMESPACE = uuidv5('external-id.turnlog.dev', uuidv5.DNS)
/**
 * The root of scoped external ids: UUIDv5 of the DNS name `external-scope.turnlog.dev`. A scope (a
 * platform and chat, say `telegram:42`) gets its own namespace, UUIDv5 of the scope's name in this one;
 * the message id is UUIDv5 of the externalId in the scope's namespace. Stable forever.
 */
export const EXTERNAL_SCOPE_NAMESPACE = uuidv5('external-scope.turnlog.dev', uuidv5.DNS)
/** The namespace for session ids derived from an external session key (importers). */
export const EXTERNAL_SESSION_NAMESPACE = uuidv5('external-session.turnlog.dev', uuidv5.DNS)

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function parseUuid(value: unknown, what: string): string {
  if (typeof value !== 'string') {
    throw new TurnlogError('INVALID_INPUT', `${what} must be a UUID string, got ${typeof value}`, {
      details: { what },
    })
  }
  const lower = value.toLowerCase()
  if (!UUID_RE.test(lower) || !uuidValidate(lower)) {
    throw new TurnlogError('INVALID_INPUT', `${what} is not a UUID: ${JSON.stringify(value.slice(0, 64))}`, {
      details: { what, value: value.slice(0, 64) },
    })
  }
  return lower
}

/** Parses (and lower-cases) a message id; throws `INVALID_INPUT` when it is not a UUID. */
export function parseMessageId(value: unknown): MessageId {
  return parseUuid(value, 'message id') as MessageId
}

/** Parses (and lower-cases) a session id; throws `INVALID_INPUT` when it is not a UUID. */
export function parseSessionId(value: unknown): SessionId {
  return parseUuid(value, 'session id') as SessionId
}

/** Parses (and lower-cases) an event id; throws `INVALID_INPUT` when it is not a UUID. */
export function parseEventId(value: unknown): EventId {
  return parseUuid(value, 'event id') as EventId
}

/** The Web Crypto API, global in Node ≥ 19, browsers, Deno and edge runtimes (where `uuid` takes its bytes too). */
const webCrypto = (globalThis as unknown as { readonly crypto: { getRandomValues(array: Uint8Array): Uint8Array } }).crypto
/** Random bytes fetched from the OS at once: enough for 256 ids. */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolAt = POOL_BYTES
/** The 16 random bytes of the id being minted (copied out of {@link pool}: `uuid` reads them once, synchronously). */
const idRandom = new Uint8Array(16)
/** The last minted id's time and counter (RFC 9562 §6.2 method 1, as `uuid`'s own v7 keeps them). */
let lastMs = -Infinity
let lastSeq = 0

/**
 * A UUIDv7, monotonic within this process: the same layout and counter as `uuid`'s `v7()` (a 31-bit
 * counter seeded from random bits each new millisecond, incremented within one, carrying into the
 * time when it wraps), but its random bytes come from a pool refilled from the OS every 256 ids
 * instead of one OS call per id.
 */
function mintV7(): string {
  if (poolAt + 16 > POOL_BYTES) {
    webCrypto.getRandomValues(pool)
    poolAt = 0
  }
  for (let i = 0; i < 16; i++) idRandom[i] = pool[poolAt + i] as number
  // used bytes are zeroed: no two ids can share random bits, even if the pool were read again
  pool.fill(0, poolAt, poolAt + 16)
  poolAt += 16
  const now = Date.now()
  if (now > lastMs) {
    lastSeq =
      (((idRandom[6] as number) & 0x7f) << 24) | ((idRandom[7] as number) << 16) | ((idRandom[8] as number) << 8) | (idRandom[9] as number)
    lastMs = now
  } else {
    lastSeq = (lastSeq + 1) | 0
    if (lastSeq === 0) lastMs++
  }
  return uuidv7({ random: idRandom, msecs: lastMs, seq: lastSeq })
}

/** Mints a new message id: a UUIDv7, monotonic within this process. */
export function newMessageId(): MessageId {
  return mintV7() as MessageId
}

/** Mints a new session id (UUIDv7). */
export function newSessionId(): SessionId {
  return mintV7() as SessionId
}

/** Mints a new event id (UUIDv7). */
export function newEventId(): EventId {
  return mintV7() as EventId
}

/**
 * The UTF-8 bytes of a string, with a lone surrogate written as the 3-byte form of its code unit
 * (WTF-8, Python's `surrogatepass`). Identical to UTF-8 for every well-formed string, so derived ids
 * are the plain RFC 4122 UUIDv5 of the name; unlike `uuid`'s own string path (which throws a URIError
 * on a lone surrogate) or `TextEncoder` (which maps every lone surrogate to U+FFFD, so distinct ids
 * would collide), it accepts any JavaScript string and stays injective.
 */
function nameBytes(name: string): Uint8Array {
  const out: number[] = []
  for (const ch of name) {
    const c = ch.codePointAt(0) ?? 0
    if (c < 0x80) out.push(c)
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f))
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f))
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f))
  }
  return Uint8Array.from(out)
}

/**
 * Derives a message id from a platform's own message id, so a message the platform redelivers gets
 * the same id and is stored once.
 *
 * `scope` says where `externalId` is unique: a Telegram or Slack message id is unique only within its
 * chat, so pass the platform and chat (`messageIdFromExternal('9001', 'telegram:42')`); the id is then
 * UUIDv5 of `externalId` in the scope's own namespace (see {@link EXTERNAL_SCOPE_NAMESPACE}), and the
 * same platform id in two chats gives two ids. Without a scope (`undefined` or `null`) the id is UUIDv5
 * of `externalId` in {@link EXTERNAL_ID_NAMESPACE}: global, for ids that already are (such as
 * `hermes:<session>:<row>`); ids derived before scopes existed stay the same. Throws `INVALID_INPUT`
 * for an empty or non-string `externalId` or `scope`.
 */
export function messageIdFromExternal(externalId: string, scope?: string | null): MessageId {
  if (typeof externalId !== 'string' || externalId.length === 0) {
    throw new TurnlogError('INVALID_INPUT', 'externalId must be a non-empty string', { details: { field: 'externalId' } })
  }
  if (scope === undefined || scope === null) return uuidv5(nameBytes(externalId), EXTERNAL_ID_NAMESPACE) as MessageId
  if (typeof scope !== 'string' || scope.length === 0) {
    throw new TurnlogError('INVALID_INPUT', 'scope must be a non-empty string (or null for a globally unique externalId)', {
      details: { field: 'scope' },
    })
  }
  return uuidv5(nameBytes(externalId), uuidv5(nameBytes(scope), EXTERNAL_SCOPE_NAMESPACE)) as MessageId
}

/** Derives a session id from an external session key (importers: a hermes session id). */
export function sessionIdFromExternal(externalKey: string): SessionId {
  if (typeof externalKey !== 'string' || externalKey.length === 0) {
    throw new TurnlogError('INVALID_INPUT', 'external session key must be a non-empty string', { details: { field: 'externalKey' } })
  }
  return uuidv5(nameBytes(externalKey), EXTERNAL_SESSION_NAMESPACE) as SessionId
}
