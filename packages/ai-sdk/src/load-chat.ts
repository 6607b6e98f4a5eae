import type { SessionStore } from '@turnlog/core'
import type { UIMessage } from 'ai'
import { loadChatState, type LoadChatOptions } from './load-chat-state.js'

/**
 * The chat's messages as `useChat` holds them: `loadChat(store, chatId)` of the AI SDK's persistence
 * guide. Every message is the `UIMessage` as last written (client messages as posted, edits as revised,
 * replies as streamed), in log order, as fresh mutable copies; pass them to `validateUIMessages` and
 * `useChat({ messages })`. A reply whose stream was aborted is there as far as it was streamed (see
 * `loadChatState(…).interrupted`). Throws `SESSION_NOT_FOUND` for a chat never written to.
 */
export async function loadChat<UI extends UIMessage = UIMessage>(
  store: SessionStore,
  chatId: string,
  options: LoadChatOptions = {},
): Promise<UI[]> {
  return (await loadChatState<UI>(store, chatId, options)).messages
}
