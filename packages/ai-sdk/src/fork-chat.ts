import { TurnlogError, type SessionStore } from '@turnlog/core'
import { checkOptions, optionKeys } from '@turnlog/core/internal'
import { chatSessionId } from './chat-ids.js'
import { loadChatState } from './load-chat-state.js'

/** Options for {@link forkChat}. */
export interface ForkChatOptions {
  /** The `UIMessage.id` of the last message the new chat keeps (a message of the chat's live list). */
  readonly at: string
  /** The new chat's id (the `id` the client's `useChat` will use). */
  readonly chatId: string
  readonly tenantId?: string
}

/** Every option of {@link forkChat}. */
const FORK_CHAT_OPTIONS = optionKeys<ForkChatOptions>({ at: true, chatId: true, tenantId: true })

/**
 * Branches a chat: a new chat (`chatId`) holding the messages of `fromChatId` up to and including the
 * message `at`, with the same turnlog ids (`store.fork`), so `loadChat(store, chatId)` returns exactly that
 * prefix and the original chat is untouched. Messages the new chat adds derive their ids in its own scope.
 * Idempotent for one `chatId`. Throws `INVALID_INPUT` (`reason: 'unknown_message'`) when `at` is not in the
 * chat, `SESSION_NOT_FOUND` for an unknown chat, `INVALID_INPUT` for a key that is not an option
 * (`details.field` naming it: `options.tenantID`), nothing written.
 */
export async function forkChat(store: SessionStore, fromChatId: string, options: ForkChatOptions): Promise<string> {
  checkOptions(options, 'forkChat options', FORK_CHAT_OPTIONS)
  const state = await loadChatState(store, fromChatId)
  const at = state.ids.get(options.at)
  if (at === undefined) {
    throw new TurnlogError('INVALID_INPUT', `chat ${fromChatId} holds no message ${options.at}`, {
      details: { chatId: fromChatId, uiMessageId: options.at, reason: 'unknown_message' },
    })
  }
  await store.fork(state.sessionId, {
    at,
    id: chatSessionId(options.chatId),
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
  })
  return options.chatId
}
