import { AI_SDK_UI_FORMAT, TurnlogError, toWire, type Message, type MessageId, type SessionId, type SessionStore } from '@turnlog/core'
import type { UIMessage } from 'ai'
import { checkOptions, optionKeys } from '@turnlog/core/internal'
import { chatSessionId } from './chat-ids.js'

/** Options for {@link loadChatState} and `loadChat`. */
export interface LoadChatOptions {
  /** Time travel: the chat as of this session version. */
  readonly at?: number
}

/** Every option of {@link loadChatState}: a misspelt `at` would load the chat as it is now. */
const LOAD_CHAT_OPTIONS = optionKeys<LoadChatOptions>({ at: true })

/**
 * A chat as the store holds it.
 * @typeParam UI - the application's `UIMessage` type.
 */
export interface ChatState<UI extends UIMessage = UIMessage> {
  readonly chatId: string
  readonly sessionId: SessionId
  /** The session version read (pass it on to detect a concurrent writer). */
  readonly version: number
  /** The live list as `UIMessage`s: fresh mutable copies, what `useChat` holds. */
  readonly messages: UI[]
  /** The stored messages behind `messages`, same order (turnlog ids, status, meta). */
  readonly stored: readonly Message<UI>[]
  /** `UIMessage.id` → turnlog id, for every live message. */
  readonly ids: ReadonlyMap<string, MessageId>
  /**
   * `UIMessage.id`s of replies left partial: a stream that was aborted (or a process that died mid-stream)
   * before its end. The message holds what was streamed until then.
   */
  readonly interrupted: readonly string[]
}

/**
 * Loads a chat with what the store knows about it: the `UIMessage` list, turnlog ids, the session
 * version and the replies left partial. Throws `SESSION_NOT_FOUND` for a chat never written to, and
 * `INVALID_INPUT` (`details.reason: 'format'`) when the session holds a message that is not an
 * `ai-sdk-ui` message (it is not an AI SDK chat), and for a key that is not an option (`details.field`
 * naming it: `options.At`).
 */
export async function loadChatState<UI extends UIMessage = UIMessage>(
  store: SessionStore,
  chatId: string,
  options: LoadChatOptions = {},
): Promise<ChatState<UI>> {
  checkOptions(options, 'loadChat options', LOAD_CHAT_OPTIONS)
  const sessionId = chatSessionId(chatId)
  const { version, messages } = await store.load(sessionId, options.at === undefined ? {} : { at: options.at })
  const foreign = messages.find((m) => m.format !== AI_SDK_UI_FORMAT)
  if (foreign !== undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `chat ${chatId} holds message ${foreign.id} of format ${foreign.format}, not ${AI_SDK_UI_FORMAT}`,
      {
        details: { chatId, sessionId, messageId: foreign.id, format: foreign.format, reason: 'format' },
      },
    )
  }
  const stored = messages as unknown as Message<UI>[]
  const ui = toWire(stored)
  return {
    chatId,
    sessionId,
    version,
    messages: ui,
    stored,
    ids: new Map(stored.map((m) => [m.payload.id, m.id])),
    interrupted: stored.filter((m) => m.status === 'partial').map((m) => m.payload.id),
  }
}
