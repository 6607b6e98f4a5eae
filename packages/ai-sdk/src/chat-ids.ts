import { TurnlogError, messageIdFromExternal, sessionIdFromExternal, type MessageId, type SessionId } from '@turnlog/core'

/** The prefix of every key this package derives: a chat's session and the scope of its message ids. */
const PREFIX = 'ai-sdk:'

function checkChatId(chatId: unknown): string {
  if (typeof chatId !== 'string' || chatId.length === 0) {
    throw new TurnlogError('INVALID_INPUT', 'chatId must be a non-empty string', { details: { field: 'chatId' } })
  }
  return chatId
}

/**
 * The turnlog session of an AI SDK chat: UUIDv5 of `ai-sdk:<chatId>` (`sessionIdFromExternal`), so every
 * request for one chat id (`useChat`'s `id`) finds the same session without a lookup table. Chat ids
 * must be unique in the store (the AI SDK's `generateId` ids are random); prefix them with a tenant
 * yourself if two tenants may choose the same one. Throws `INVALID_INPUT` for an empty chat id.
 */
export function chatSessionId(chatId: string): SessionId {
  return sessionIdFromExternal(`${PREFIX}${checkChatId(chatId)}`)
}

/** The scope in which a chat's client message ids are unique: `ai-sdk:<chatId>` (see {@link chatMessageId}). */
export function chatScope(chatId: string): string {
  return `${PREFIX}${checkChatId(chatId)}`
}

/**
 * The turnlog id of a new `UIMessage` of a chat: UUIDv5 of the message's own `id` in the chat's scope
 * (`messageIdFromExternal(uiMessage.id, 'ai-sdk:<chatId>')`). Deterministic, so a re-posted message gets
 * the same id and is stored once; scoped, so two chats may use the same client id (`useChat` ids are
 * short random strings, not UUIDs, and not secret). A message a fork carried over keeps the id it had in
 * the parent: the functions of this package look a client id up in the chat's live list first and
 * derive only for a message the chat does not hold.
 */
export function chatMessageId(chatId: string, uiMessageId: string): MessageId {
  if (typeof uiMessageId !== 'string' || uiMessageId.length === 0) {
    throw new TurnlogError('INVALID_INPUT', 'a UIMessage id must be a non-empty string', { details: { field: 'id' } })
  }
  return messageIdFromExternal(uiMessageId, chatScope(chatId))
}
