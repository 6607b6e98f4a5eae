import type { ChatMessage } from './chat-message.js'
import { rememberContentHash } from './content-hash.js'
import { confirmDeepFrozen, markDeepFrozen } from './deep-frozen-mark.js'
import { DEFAULT_MESSAGE_FORMAT, messageFormat, parsePayload } from './formats/format-registry.js'
import type { BuiltInFormatName, FormatInputs, FormatPayloads } from './formats/format-payloads.js'
import type { OpenAIChatInput } from './formats/openai-chat-format.js'
import { messageIdFromExternal, newMessageId, parseMessageId, type MessageId } from './ids.js'
import { toFrozenJsonField, type JsonValue } from './json-value.js'
import { z } from 'zod'
import { ObjectStamp } from './object-stamp.js'
import { withField } from './id-arguments.js'
import { checkKnownKeys } from './check-known-keys.js'
import { guardInput, parseInput } from './parse-input.js'
import { isIsoTimestamp } from './is-iso-timestamp.js'
import { TurnlogError } from './turnlog-error.js'

/** `partial`: an assistant reply still streaming; absent means final. */
export type MessageStatus = 'partial'

/**
 * Per-message metadata that never reaches the provider (model, usage, latency, trace id, app data): a
 * JSON object, stored and exported with the message, never in `toWire`, not part of the content hash.
 */
export type MessageMeta = { readonly [key: string]: JsonValue }

/**
 * The unit of persistence: an immutable (deeply frozen) envelope around the provider message. The id
 * is minted once, at creation, and travels with the value; it is never part of `payload`, so it never
 * reaches the provider.
 * @typeParam P - the payload type: an OpenAI chat message by default; a caller's own type for
 * another format (check `format` before reading a loaded message's payload fields).
 */
export interface Message<P = ChatMessage> {
  /** Stable identity: UUIDv7 at creation, or UUIDv5 of `externalId` (never the payload's own id). */
  readonly id: MessageId
  /** The provider message, exactly as given (unknown fields kept, key order kept). */
  readonly payload: P
  /** The payload's format (`openai-chat`, `json`, …): how turnlog validates, pairs, sends and previews it. */
  readonly format: string
  /** Metadata that never reaches the provider (see {@link MessageMeta}); absent when none was given. */
  readonly meta?: MessageMeta
  /** ISO-8601 creation time. Data only: order is the log's sequence, never this. */
  readonly createdAt: string
  /** Runtime scaffolding ("please continue", "(empty)"): sent to the model, never persisted. */
  readonly ephemeral?: true
  /** The platform's own id of an inbound message, from which `id` was derived. */
  readonly externalId?: string
  /** Where `externalId` is unique (`createMessage`'s `scope`), when one was given; absent for `scope: null`. */
  readonly externalScope?: string
  /** `'partial'` while an assistant reply is streaming; absent when final. */
  readonly status?: MessageStatus
}

/** The options of {@link createMessage} every format shares (all but `format`). */
export interface MessageEnvelopeOptions {
  /** Use an existing id (import, resume). With `externalId`, it must be the id derived from it. */
  readonly id?: string
  /**
   * Derive the id from the platform's message id so a redelivery gets the same id. Needs `scope`:
   * the id is derived from both (see `messageIdFromExternal`).
   */
  readonly externalId?: string
  /**
   * Where `externalId` is unique, e.g. `telegram:<chatId>` (a Telegram message id is unique only per
   * chat). Required with `externalId`: a string, or `null` to declare `externalId` globally unique
   * (then the id is the unscoped derivation, as before scopes existed). Ignored without `externalId`.
   */
  readonly scope?: string | null
  /** Runtime scaffolding: persistence skips it (`flush`) or refuses it (`append`). */
  readonly ephemeral?: boolean
  /** Creation time; defaults to now. Data only. */
  readonly createdAt?: string | Date
  /** `'partial'` for a reply that is still streaming. */
  readonly status?: MessageStatus
  /**
   * Metadata that never reaches the provider: model, usage, latency, trace id, app data. A JSON
   * object, stored and exported with the message, not part of the content hash (a retry that differs
   * only here is still a duplicate: the first write's `meta` stays).
   */
  readonly meta?: { readonly [key: string]: unknown }
}

/**
 * Options for {@link createMessage} of an OpenAI chat message: `format` absent or `'openai-chat'` (any
 * other format picks the format overload, typed by {@link CreateFormatMessageOptions}).
 */
export interface CreateMessageOptions extends MessageEnvelopeOptions {
  /** The payload's format: `openai-chat` (the default). */
  readonly format?: 'openai-chat'
}

/**
 * {@link createMessage}'s options for a payload of another format: `format` is required, one of
 * `messageFormatNames()` (docs/formats.md lists the built-ins; {@link FormatPayloads} their payload types).
 * @typeParam F - the format name.
 */
export interface CreateFormatMessageOptions<F extends string = string> extends MessageEnvelopeOptions {
  /** The payload's format: one of `messageFormatNames()`. */
  readonly format: F
}

/**
 * The brand of a message this module built (frozen, validated or restored from trusted rows): a private
 * field on the message itself, so `isMessage` is one check and costs the garbage collector nothing. A
 * copy (spread, `Object.assign`, `structuredClone`, parsed JSON) does not carry it (object-stamp.ts).
 */
class MessageMark extends ObjectStamp {
  readonly #minted = true

  static has(value: object): boolean {
    return #minted in value
  }
}

/**
 * Validates a provider payload and returns a deeply frozen copy (key order kept). Throws
 * `INVALID_MESSAGE` with the zod issues in `details.issues`.
 */
export function parseChatMessage(payload: unknown): ChatMessage {
  return guardInput('payload', () => parsePayload(payload, DEFAULT_MESSAGE_FORMAT) as ChatMessage)
}

/**
 * Validates a payload of format `format` (default `openai-chat`) and returns a deeply frozen copy
 * (key order kept). Throws `INVALID_MESSAGE` for an unknown format or a payload its schema refuses
 * (the zod issues in `details.issues`).
 */
export function parseFormatPayload(payload: unknown, format?: string): unknown {
  if (format !== undefined && typeof format !== 'string')
    throw new TurnlogError('INVALID_INPUT', 'format must be a string', { details: { field: 'format' } })
  return guardInput('payload', () => parsePayload(payload, format))
}

/** A frozen copy of a `meta` value: a JSON object. Throws `INVALID_MESSAGE` for anything else. */
function parseMeta(meta: unknown): MessageMeta | undefined {
  if (meta === undefined) return undefined
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw new TurnlogError(
      'INVALID_MESSAGE',
      `meta must be a JSON object, got ${meta === null ? 'null' : Array.isArray(meta) ? 'an array' : typeof meta}`,
      { details: { field: 'meta' } },
    )
  }
  return toFrozenJsonField(meta, 'meta') as MessageMeta
}

function parseFormatName(format: unknown): string {
  if (format === undefined) return DEFAULT_MESSAGE_FORMAT
  if (typeof format !== 'string') throw new TurnlogError('INVALID_MESSAGE', 'format must be a string', { details: { field: 'format' } })
  return messageFormat(format).name
}

/**
 * The stored form of a `createdAt` (`field` names it in an error: `options.createdAt` for
 * `createMessage`, `createdAt` for a message copy): a Date as its ISO text, a string as given when it
 * is an ISO-8601 timestamp of a real instant ({@link isIsoTimestamp}: `2024-02-30` is refused, not read
 * as March 1).
 */
function normaliseCreatedAt(value: string | Date | undefined, field: string): string {
  if (value === undefined) return new Date().toISOString()
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TurnlogError('INVALID_MESSAGE', 'createdAt is an invalid Date', { details: { field } })
    const text = value.toISOString()
    // a year outside 0000-9999 is written with six digits and a sign (+010000-…), which the string
    // form below refuses: such a message could not be copied, parsed or imported again
    if (!isIsoTimestamp(text))
      throw new TurnlogError('INVALID_MESSAGE', `createdAt must be a Date in the years 0000 to 9999, got ${text}`, { details: { field } })
    return text
  }
  const given: unknown = value
  if (!isIsoTimestamp(given)) {
    throw new TurnlogError(
      'INVALID_MESSAGE',
      `createdAt must be an ISO-8601 timestamp of a real date and time (YYYY-MM-DDTHH:MM:SS, Z or ±HH:MM), got ${typeof given === 'string' ? JSON.stringify(given.slice(0, 40)) : typeof given}`,
      { details: { field } },
    )
  }
  return given
}

function build(
  id: MessageId,
  payload: unknown,
  format: string,
  createdAt: string,
  extra: {
    ephemeral?: boolean | undefined
    externalId?: string | undefined
    externalScope?: string | undefined
    status?: MessageStatus | undefined
    meta?: MessageMeta | undefined
  },
): Message {
  const message: { -readonly [K in keyof Message<unknown>]: Message<unknown>[K] } = { id, payload, format, createdAt }
  if (extra.meta !== undefined) message.meta = extra.meta
  if (extra.ephemeral === true) message.ephemeral = true
  if (extra.externalId !== undefined) message.externalId = extra.externalId
  if (extra.externalId !== undefined && extra.externalScope !== undefined) message.externalScope = extra.externalScope
  if (extra.status === 'partial') message.status = 'partial'
  new MessageMark(message)
  Object.freeze(message)
  return message as Message
}

/**
 * Creates a message: validates `payload` with its format's schema (throws `INVALID_MESSAGE`), copies
 * and deep-freezes it (and `meta`), and mints the id (UUIDv7, monotonic in this process) unless
 * `options.id` or `options.externalId` says otherwise. Without `options.format` the payload is an
 * OpenAI chat message (`openai-chat`); the `openai` SDK's `ChatCompletionMessage` is accepted as is.
 * @example
 * ```ts
 * const m = createMessage({ role: 'user', content: 'hi' })
 * // a redelivered platform message gets the same id every time
 * const inbound = createMessage({ role: 'user', content: 'hi' }, { externalId: 'slack:C123:1700000000.000100', scope: 'slack:C123' })
 * // metadata that never reaches the provider
 * const reply = createMessage(completion.choices[0].message, { meta: { model: completion.model, usage: completion.usage } })
 * // a built-in format: the payload is checked against its type (a Message<AnthropicMessageParam>);
 * // the SDKs' own types go in as they are (FormatInputs): an Anthropic MessageParam, a UIMessage, …
 * const a = createMessage({ role: 'user', content: 'hi' }, { format: 'anthropic' })
 * // a format registered at run time: the payload type is yours
 * const note = createMessage<{ kind: string }>({ kind: 'note' }, { format: 'my-notes' })
 * ```
 */
export function createMessage(payload: OpenAIChatInput, options?: CreateMessageOptions): Message
export function createMessage<F extends BuiltInFormatName>(
  payload: FormatPayloads[F] | FormatInputs[F],
  options: CreateFormatMessageOptions<F>,
): Message<FormatPayloads[F]>
export function createMessage<P extends object, F extends string = string>(
  payload: P,
  options: CreateFormatMessageOptions<F> & { readonly format: [F] extends [BuiltInFormatName] ? never : F },
): Message<P>
export function createMessage(payload: unknown, options: MessageEnvelopeOptions & { readonly format?: string } = {}): Message<unknown> {
  return guardInput('createMessage', () => create(payload, parseCreateOptions(options)))
}

/** The options, checked: a key that is not an option (`externalID`, `metadata`) is refused, naming it. */
function parseCreateOptions(options: unknown): CreateOptions {
  const parsed = parseInput(CreateMessageOptionsSchema, options, 'options')
  checkKnownKeys(parsed, CREATE_MESSAGE_OPTION_KEYS, 'options', 'createMessage')
  return parsed as CreateOptions
}

/**
 * The shape of {@link CreateMessageOptions}; `id` and `createdAt` are checked by their own parsers
 * (their codes: `INVALID_INPUT` for an id, `INVALID_MESSAGE` for a createdAt).
 */
const CreateMessageOptionsSchema = z.looseObject({
  id: z.unknown().optional(),
  externalId: z.string().optional(),
  scope: z.string().min(1).nullable().optional(),
  ephemeral: z.boolean().optional(),
  createdAt: z.unknown().optional(),
  status: z.literal('partial').optional(),
  format: z.string().optional(),
  meta: z.unknown().optional(),
})
const CREATE_MESSAGE_OPTION_KEYS = Object.keys(CreateMessageOptionsSchema.shape)

/** Every option, any format. */
type CreateOptions = MessageEnvelopeOptions & { readonly format?: string }

function create(payload: unknown, options: CreateOptions): Message {
  if (options.externalId !== undefined && options.scope === undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      'externalId needs a scope: where the platform id is unique (e.g. scope: `telegram:${chatId}`), or scope: null for a globally unique externalId',
      {
        details: { field: 'options.scope' },
      },
    )
  }
  // each id option's error names the option (details.field, docs/errors.md)
  const givenId = options.id === undefined ? undefined : withField('options.id', () => parseMessageId(options.id))
  const derived =
    options.externalId === undefined
      ? undefined
      : withField('options.externalId', () => messageIdFromExternal(options.externalId as string, options.scope))
  if (givenId !== undefined && derived !== undefined && givenId !== derived) {
    // two options disagree: neither alone is at fault, so no details.field
    throw new TurnlogError('INVALID_INPUT', 'options.id and options.externalId disagree', {
      details: { id: options.id, externalId: options.externalId, scope: options.scope, derivedId: derived },
    })
  }
  if (options.status !== undefined && options.status !== 'partial') {
    throw new TurnlogError('INVALID_INPUT', `status must be 'partial' or absent`, { details: { field: 'options.status' } })
  }
  const id = derived ?? givenId ?? newMessageId()
  const externalScope = options.externalId !== undefined && typeof options.scope === 'string' ? options.scope : undefined
  const format = parseFormatName(options.format)
  return build(id, parsePayload(payload, format), format, normaliseCreatedAt(options.createdAt, 'options.createdAt'), {
    ephemeral: options.ephemeral,
    externalId: options.externalId,
    externalScope,
    status: options.status,
    meta: parseMeta(options.meta),
  })
}

/**
 * Returns `value` as a trusted {@link Message}: messages made by this module pass through untouched;
 * any other object (parsed JSON, a user-built literal) is validated and rebuilt, keeping its id.
 */
export function toMessage<P = ChatMessage>(value: unknown): Message<P> {
  if (typeof value === 'object' && value !== null && MessageMark.has(value)) return value as Message<P>
  return guardInput('message', () => rebuild(value)) as Message<P>
}

function rebuild(value: unknown): Message {
  if (typeof value !== 'object' || value === null) {
    throw new TurnlogError('INVALID_MESSAGE', `a message must be an object, got ${value === null ? 'null' : typeof value}`, {
      details: { field: 'message' },
    })
  }
  const v = value as Record<string, unknown>
  // each field's error names it (details.field), relative to the message: `id`, `externalId`
  if (v['id'] === undefined)
    throw new TurnlogError('INVALID_MESSAGE', 'a message needs an id; use createMessage()', { details: { field: 'id' } })
  const id = withField('id', () => parseMessageId(v['id']))
  const externalId = v['externalId']
  if (externalId !== undefined && typeof externalId !== 'string') {
    throw new TurnlogError('INVALID_MESSAGE', 'externalId must be a string', { details: { field: 'externalId' } })
  }
  const externalScope = v['externalScope']
  if (externalScope !== undefined && typeof externalScope !== 'string') {
    throw new TurnlogError('INVALID_MESSAGE', 'externalScope must be a string', { details: { field: 'externalScope' } })
  }
  const status = v['status']
  if (status !== undefined && status !== 'partial')
    throw new TurnlogError('INVALID_MESSAGE', `status must be 'partial' or absent`, { details: { field: 'status' } })
  const ephemeral = v['ephemeral']
  if (ephemeral !== undefined && typeof ephemeral !== 'boolean')
    throw new TurnlogError('INVALID_MESSAGE', 'ephemeral must be a boolean', { details: { field: 'ephemeral' } })
  const format = parseFormatName(v['format'])
  return build(id, parsePayload(v['payload'], format), format, normaliseCreatedAt(v['createdAt'] as string | undefined, 'createdAt'), {
    ephemeral: ephemeral === true,
    externalId,
    externalScope,
    status,
    meta: parseMeta(v['meta']),
  })
}

/** True for a value made by {@link createMessage} / {@link toMessage} (trusted, frozen). */
export function isMessage(value: unknown): value is Message<unknown> {
  return typeof value === 'object' && value !== null && MessageMark.has(value)
}

/**
 * A copy of `message` with other envelope fields (the id and payload stay). Used by stores to mark
 * status; payload changes are revisions, made with `store.revise`.
 */
export function withStatus<P = ChatMessage>(message: Message<P>, status: MessageStatus | undefined): Message<P> {
  if (status !== undefined && status !== 'partial')
    throw new TurnlogError('INVALID_INPUT', `status must be 'partial' or undefined`, { details: { field: 'status' } })
  const m: Message<unknown> = isMessage(message) ? message : toMessage<unknown>(message)
  return build(m.id, m.payload, m.format, m.createdAt, {
    ephemeral: m.ephemeral,
    externalId: m.externalId,
    externalScope: m.externalScope,
    status,
    meta: m.meta,
  }) as Message<P>
}

/**
 * Rebuilds a message from trusted stored parts without re-validating (stores, after reading their own
 * rows). The payload is deep-frozen in place and marked as such on the object itself, with
 * `contentHash` (the stored content hash of this payload) when given, so `contentHash` returns it
 * without hashing; without it, the first `contentHash` computes and keeps it. No weak-collection entry
 * is made for the message or its payload (object-stamp.ts).
 */
export function restoreMessage(parts: {
  id: MessageId
  payload: unknown
  createdAt: string
  externalId?: string | undefined
  externalScope?: string | undefined
  status?: MessageStatus | undefined
  /** The stored format name (absent: `openai-chat`). Not checked against the registry. */
  format?: string | undefined
  /** The stored `meta` (trusted); deep-frozen in place. */
  meta?: unknown
  /** The payload's stored content hash (trusted, like every other part). */
  contentHash?: string | undefined
}): Message {
  // trusted parts (a store's own rows), but still never a raw TypeError on garbage
  if (typeof parts !== 'object' || parts === null)
    throw new TurnlogError('INVALID_INPUT', 'restoreMessage needs { id, payload, createdAt }', { details: { field: 'parts' } })
  return guardInput('parts', () => restore(parts))
}

function restore(parts: Parameters<typeof restoreMessage>[0]): Message {
  if (typeof parts.id !== 'string')
    throw new TurnlogError('INVALID_INPUT', 'restoreMessage needs a string id', { details: { field: 'parts.id' } })
  const payload = parts.payload
  if (typeof payload === 'object' && payload !== null) {
    // a fresh row (the usual case) is marked before it is frozen, with its stored hash if given: no
    // registry entry; a payload that arrives frozen already keeps (or gets) its hash the slow way
    const fresh = Object.isExtensible(payload)
    if (fresh) markDeepFrozen(payload, parts.contentHash)
    deepFreeze(payload, undefined)
    if (fresh) confirmDeepFrozen(payload)
    else if (parts.contentHash !== undefined) rememberContentHash(payload, parts.contentHash)
  }
  const meta = typeof parts.meta === 'object' && parts.meta !== null ? parts.meta : undefined
  if (meta !== undefined) deepFreeze(meta, undefined)
  const format = typeof parts.format === 'string' ? parts.format : DEFAULT_MESSAGE_FORMAT
  // the fields named, not `{ ...parts }`: a spread of the caller's object on every loaded message kept
  // ~1 MB alive through each young-generation scavenge (10× its pause; docs/performance.md, "scale")
  return build(parts.id, payload, format, parts.createdAt, {
    externalId: parts.externalId,
    externalScope: parts.externalScope,
    status: parts.status,
    meta: meta as MessageMeta | undefined,
  })
}

/**
 * Freezes `value` and everything reachable from it through own enumerable keys. An object found already
 * frozen is still walked (a frozen object can hold mutable children), but only once: it goes into
 * `seen`, which also stops the walk at shared and cyclic references. The set is created when the first
 * such object is met, so a value just read from JSON (nothing frozen, no sharing) is walked without one.
 */
function deepFreeze(value: unknown, seen: Set<object> | undefined): Set<object> | undefined {
  if (typeof value !== 'object' || value === null) return seen
  if (Object.isFrozen(value)) {
    seen ??= new Set()
    if (seen.has(value)) return seen
    seen.add(value)
  } else {
    Object.freeze(value)
  }
  // the values, not the keys then a lookup by key: that lookup is megamorphic over a payload's shapes
  for (const child of Object.values(value)) seen = deepFreeze(child, seen)
  return seen
}

/**
 * A JSON text for a message that keeps its id, createdAt and exact content (NUL, lone surrogates,
 * astral characters): `JSON.stringify` escapes what UTF-8 cannot carry.
 */
export function serializeMessage(message: Message<unknown>): string {
  if (typeof message !== 'object' || message === null) {
    throw new TurnlogError('INVALID_INPUT', `serializeMessage needs a message, got ${message === null ? 'null' : typeof message}`, {
      details: { field: 'message' },
    })
  }
  return guardInput('message', () => JSON.stringify(isMessage(message) ? message : toMessage(message)))
}

/** Parses the output of {@link serializeMessage} back into an identical, validated message. */
export function parseMessage<P = ChatMessage>(text: string): Message<P> {
  if (typeof text !== 'string')
    throw new TurnlogError('INVALID_INPUT', `parseMessage needs a JSON text, got ${text === null ? 'null' : typeof text}`, {
      details: { field: 'text' },
    })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new TurnlogError('INVALID_MESSAGE', 'not a JSON message', { details: { field: 'text' }, cause })
  }
  return toMessage<P>(value)
}
