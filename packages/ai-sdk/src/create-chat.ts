import { newSessionId, type JsonValue, type SessionStore } from '@turnlog/core'
import { checkOptions, optionKeys } from '@turnlog/core/internal'
import { chatSessionId } from './chat-ids.js'

/** Options for {@link createChat}. */
export interface CreateChatOptions {
  /** The chat id; minted (a UUIDv7) when absent. */
  readonly chatId?: string
  readonly tenantId?: string
  readonly metadata?: JsonValue
}

/** Every option of {@link createChat}: a misspelt `chatId` would mint a new chat. */
const CREATE_CHAT_OPTIONS = optionKeys<CreateChatOptions>({ chatId: true, tenantId: true, metadata: true })

/**
 * Creates an empty chat and returns its id: `createChat()` of the AI SDK's persistence guide (the page
 * that starts a chat redirects to `/chat/<id>`). Idempotent for a given `chatId`. Optional: `receiveChat`
 * creates the chat on its first request too, for clients that mint the chat id themselves. A key that is
 * not an option is `INVALID_INPUT` (`details.field` naming it: `options.chatID`), nothing written.
 */
export async function createChat(store: SessionStore, options: CreateChatOptions = {}): Promise<string> {
  checkOptions(options, 'createChat options', CREATE_CHAT_OPTIONS)
  const chatId = options.chatId ?? newSessionId()
  await store.createSession({
    id: chatSessionId(chatId),
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
  })
  return chatId
}
