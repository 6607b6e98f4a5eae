import { isBaseMessage, ChatMessage, type BaseMessage } from '@langchain/core/messages'
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { TurnlogError, createMessage, isRedactedPayload, type Message } from '@turnlog/core'

/** The turnlog format of a mirrored LangChain message: `json` (an opaque JSON object). */
export const LANGCHAIN_MESSAGE_FORMAT = 'json'

/** The role a redacted message comes back with (its content was erased from the log). */
export const REDACTED_ROLE = 'redacted'

// eslint-disable-next-line no-control-regex
const UNSAFE_ID = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * True when a LangChain id can be a turnlog `externalId`: at most 4096 characters, no NUL character and
 * no lone surrogate (Postgres JSON operators refuse both; the store refuses such an id).
 */
function storableId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && id.length <= 4096 && !UNSAFE_ID.test(id)
}

/**
 * True when a channel value can live in turnlog: an array of LangChain messages that each carry an
 * id (`messagesStateReducer` gives every message one) that turnlog can store as an `externalId`, no id
 * twice. Anything else is stored as a plain blob, as by the stock saver: a list holding one id twice
 * (a channel with a concatenating reducer, a node that returns the same message again) has no
 * one-message-per-id form in a turnlog session, which would keep one copy and lose the other.
 */
export function isMirrorableMessageList(value: unknown): value is BaseMessage[] {
  if (!Array.isArray(value)) return false
  const ids = new Set<string>()
  for (const m of value as unknown[]) {
    if (!isBaseMessage(m)) return false
    const id = (m as BaseMessage).id
    if (!storableId(id) || ids.has(id)) return false
    ids.add(id)
  }
  return true
}

/**
 * The payload a LangChain message is stored as: the checkpoint serializer's own JSON of it (LangChain's
 * serialized form, `{ lc: 1, type: 'constructor', id: [..., 'AIMessage'], kwargs: { content, id,
 * tool_calls, ... } }`), the bytes the stock Postgres saver would store for it, parsed. Undefined when
 * the serializer does not write JSON for it.
 */
export async function encodeLangChainMessage(
  serde: SerializerProtocol,
  message: BaseMessage,
): Promise<Record<string, unknown> | undefined> {
  const [type, bytes] = await serde.dumpsTyped(message)
  if (type !== 'json') return undefined
  const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes), dropUndefinedFields)
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined
}

/**
 * `JSON.parse` reviver: drops an object field whose value is the serializer's `undefined` marker
 * (`{ lc: 2, type: 'undefined' }`, e.g. a `ToolMessage`'s unset `artifact`). A revived message has no
 * such field, so without this the same message read back and written again would differ from the
 * stored one and be recorded as a revision.
 */
function dropUndefinedFields(this: unknown, _key: string, value: unknown): unknown {
  if (Array.isArray(this)) return value
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>
    if (v['lc'] === 2 && v['type'] === 'undefined' && Object.keys(v).length === 2) return undefined
  }
  return value
}

/**
 * A turnlog message for a LangChain message: format `json`, `externalId` the LangChain id, the turnlog
 * id derived from it in `scope` (see `messageIdFromExternal`).
 */
export function turnlogMessageFor(payload: Record<string, unknown>, langchainId: string, scope: string): Message<Record<string, unknown>> {
  return createMessage(payload, { format: LANGCHAIN_MESSAGE_FORMAT, externalId: langchainId, scope })
}

/**
 * The LangChain message a stored turnlog message holds, revived by the checkpoint serializer. A
 * redacted message (its content erased, `store.redact`) comes back as a `ChatMessage` with role
 * `redacted`, its LangChain id and no content. Needs only the message's id, LangChain id and payload.
 */
export async function decodeLangChainMessage(
  serde: SerializerProtocol,
  message: Pick<Message<unknown>, 'id' | 'payload'> & { readonly externalId?: string | undefined },
): Promise<BaseMessage> {
  const payload = message.payload
  if (isRedactedPayload(payload)) return new ChatMessage({ content: '', role: REDACTED_ROLE, id: message.externalId ?? message.id })
  const revived: unknown = await serde.loadsTyped('json', JSON.stringify(payload))
  if (!isBaseMessage(revived)) {
    throw new TurnlogError('INVALID_MESSAGE', `turnlog message ${message.id} does not hold a LangChain message`, {
      details: { messageId: message.id },
    })
  }
  return revived
}
