import { isBaseMessage, ChatMessage, type BaseMessage } from '@langchain/core/messages'
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { TurnlogError, createMessage, isRedactedPayload, type Message } from '@turnlog/core'

/** The turnlog format of a mirrored LangChain message: `json` (an opaque JSON object). */
export const LANGCHAIN_MESSAGE_FORMAT = 'json'

/** The role a redacted message comes back with (its content was erased from the log). */
export const REDACTED_ROLE = 'redacted'

/**
 * True when a channel value can live in turnlog: an array of LangChain messages that each carry an
 * id (`messagesStateReducer` gives every message one). Anything else is stored as a plain blob.
 */
export function isMirrorableMessageList(value: unknown): value is BaseMessage[] {
  return (
    Array.isArray(value) &&
    value.every((m) => isBaseMessage(m) && typeof (m as BaseMessage).id === 'string' && (m as BaseMessage).id !== '')
  )
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
