import {
  AI_SDK_MODEL_FORMAT,
  TurnlogError,
  createMessage,
  isTurnlogError,
  newMessageId,
  toWire,
  type Message,
  type SessionId,
  type SessionStore,
} from '@turnlog/core'
import type { ModelMessage } from 'ai'
import { checkOptions, optionKeys, parseSessionIdArgument } from '@turnlog/core/internal'
import { sameJson } from './same-json.js'

/** Options for {@link startModelTurn}. */
export interface ModelTurnOptions {
  /**
   * Your key for this turn (a request id, a job id): the input messages are stored under ids derived
   * from it, so a retried request stores its input once (the same turn id with other input is a
   * `MESSAGE_CONFLICT`, nothing written). Minted (a UUIDv7) when absent.
   */
  readonly turnId?: string
}

/** Every option of {@link startModelTurn}: a misspelt `turnId` would store a retried request's input twice. */
const MODEL_TURN_OPTIONS = optionKeys<ModelTurnOptions>({ turnId: true })

/** The part of `generateText`/`streamText`'s `onStepFinish` and `onFinish` events a turn write reads. */
export interface ModelStepEvent {
  readonly response: { readonly messages: readonly ModelMessage[] }
}

/** A server-side turn of `ModelMessage`s: the history to send, and the callbacks that store the reply. */
export interface ModelTurn {
  readonly sessionId: SessionId
  readonly turnId: string
  /** The session's stored messages followed by this turn's input: `generateText({ messages })`. */
  readonly messages: ModelMessage[]
  /**
   * `generateText({ onStepFinish })`: stores the messages of the step (the assistant message, the tool
   * results). A second model call with the same callbacks (a retry of a call that failed after a step)
   * has its own messages stored after the first call's.
   */
  readonly onStepFinish: (event: ModelStepEvent) => Promise<void>
  /** `generateText({ onFinish })`: stores whatever the steps have not (idempotent). */
  readonly onFinish: (event: ModelStepEvent) => Promise<void>
}

/** Base64 of bytes, with what every runtime has (`btoa`), not Node's `Buffer`. */
function base64(bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += String.fromCharCode(byte)
  return btoa(text)
}

/**
 * The bytes of the SDK's binary `DataContent` (a `Uint8Array`, a Node `Buffer`, an `ArrayBuffer`), from
 * any realm; undefined for any other value.
 */
function bytesOf(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const tag = Object.prototype.toString.call(value)
  if (tag === '[object ArrayBuffer]') return new Uint8Array(value as ArrayBuffer)
  if (tag === '[object Uint8Array]' && ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  return undefined
}

/**
 * A payload is JSON: binary data of a file or image part (a `Uint8Array`, a Node `Buffer`, an
 * `ArrayBuffer`) becomes base64, a `URL` its string, a `Date` its ISO string, `undefined` fields go (what
 * `JSON.stringify` and the SDK's own schemas accept back). The replacer reads the holder's own value
 * (`this[key]`): `JSON.stringify` has already turned a `Buffer` into `{ type: 'Buffer', data }` (its
 * `toJSON`) and an `ArrayBuffer` into `{}` by the time the replacer gets `value`.
 */
function toJson(message: ModelMessage): ModelMessage {
  return JSON.parse(
    JSON.stringify(message, function (this: Record<string, unknown>, key: string, value: unknown) {
      const bytes = bytesOf(this[key])
      return bytes === undefined ? value : base64(bytes)
    }),
  ) as ModelMessage
}

/**
 * Starts a server-only turn (`generateText` or `streamText` loops without `useChat`), in `ai-sdk-model`
 * format: loads the session's messages (creating the session on first use), stores `input` (the new
 * user message(s)) before the model is called, and returns the list to send and the callbacks that store
 * each step's response messages as they land (`response.messages` is cumulative: each callback stores
 * what is new, and a message already stored is a duplicate, never a second copy).
 *
 * Throws `INVALID_INPUT` (`details.reason: 'format'`) when the session holds messages of another format,
 * `INVALID_MESSAGE` for a message the `ai-sdk-model` format refuses (nothing of it written), `INVALID_INPUT`
 * for a key that is not an option (`details.field` naming it: `options.turnID`; nothing written).
 */
export async function startModelTurn(
  store: SessionStore,
  sessionId: string,
  input: readonly ModelMessage[],
  options: ModelTurnOptions = {},
): Promise<ModelTurn> {
  const id = parseSessionIdArgument(sessionId, 'sessionId')
  checkOptions(options, 'startModelTurn options', MODEL_TURN_OPTIONS)
  const turnId = options.turnId ?? newMessageId()
  let stored: Message<unknown>[]
  try {
    stored = (await store.load(id)).messages
  } catch (error) {
    if (!isTurnlogError(error, 'SESSION_NOT_FOUND')) throw error
    await store.createSession({ id })
    stored = []
  }
  const foreign = stored.find((m) => m.format !== AI_SDK_MODEL_FORMAT)
  if (foreign !== undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `session ${sessionId} holds message ${foreign.id} of format ${foreign.format}, not ${AI_SDK_MODEL_FORMAT}`,
      {
        details: { sessionId, messageId: foreign.id, format: foreign.format, reason: 'format' },
      },
    )
  }
  const scope = `ai-sdk-model:${sessionId}`
  const inputs = input.map((m, i) =>
    createMessage<ModelMessage, string>(toJson(m), { format: AI_SDK_MODEL_FORMAT, externalId: `${turnId}:${i}`, scope }),
  )
  const known = new Set(stored.map((m) => m.id))
  const fresh = inputs.filter((m) => !known.has(m.id))
  // every input, the stored ones too: a turn id reused with other input is a MESSAGE_CONFLICT (recorded),
  // never a message silently left out while the stored one is sent in its place
  await store.flush(id, inputs)
  // the reply's messages, created once each: a step callback run again re-flushes the same values
  const replies: Message<ModelMessage>[] = []
  // the messages of the current model call (`response.messages` is cumulative within one call): an event
  // whose list does not continue them is another call of the same turn (the app retried a call that
  // failed after a step); its messages are new from the first that differs, never skipped by position
  let call: Message<ModelMessage>[] = []
  const record = async (event: ModelStepEvent): Promise<void> => {
    const messages = event.response.messages.map((m) => toJson(m))
    let same = 0
    while (same < call.length && same < messages.length && sameJson((call[same] as Message<ModelMessage>).payload, messages[same])) same++
    if (same < call.length) call = call.slice(0, same)
    for (let i = call.length; i < messages.length; i++) {
      const message = createMessage<ModelMessage, string>(messages[i] as ModelMessage, { format: AI_SDK_MODEL_FORMAT })
      call.push(message)
      replies.push(message)
    }
    await store.flush(id, replies)
  }
  return {
    sessionId: id,
    turnId,
    messages: [...toWire(stored as Message<ModelMessage>[]), ...toWire(fresh)],
    onStepFinish: record,
    onFinish: record,
  }
}
