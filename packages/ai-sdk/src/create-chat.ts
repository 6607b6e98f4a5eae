import { newSessionId, type JsonValue, type SessionStore } from '@turnlog/core'
import { chatSessionId } from './chat-ids.js'

/** Options for {@link createChat}. */
export interface CreateChatOptions {
  /** The chat id; minted (a UUIDv7) when absent. */
  readonly chatId?: string
  readonly tenantId?: string
  readonly metadata?: JsonValue
}

/**
 * Creates an empty chat and returns its id: `createChat()` of the AI SDK's persistence guide (the page
 * that starts a chat redirects to `/chat/<id>`). Idempotent for a given `chatId`. Optional: `receiveChat`
 * creates the chat on its first request too, for clients that mint the chat id themselves.
 */
export async function createChat(store: SessionStore, options: CreateChatOptions = {}): Promise<string> {
  const chatId = options.chatId ?? newSessionId()
  await store.createSession({
    id: chatSessionId(chatId),
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
  })
  return chatId
}
