import { BaseListChatMessageHistory } from '@langchain/core/chat_history'
import type { BaseMessage } from '@langchain/core/messages'
import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { randomUUID } from 'node:crypto'
import { TurnlogError } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { decodeLangChainMessage, encodeLangChainMessage, turnlogMessageFor } from './langchain-message-codec.js'
import { messageScope } from './mirror-messages.js'

/** Constructor input of {@link TurnlogChatMessageHistory}. */
export interface TurnlogChatMessageHistoryConfig {
  readonly store: PostgresStore
  /** An existing turnlog session (create it with `store.createSession`). */
  readonly sessionId: string
  /** Serializer of the payloads; default LangGraph's `JsonPlusSerializer` (the saver's format). */
  readonly serde?: SerializerProtocol
}

/**
 * LangChain's legacy chat history (`BaseListChatMessageHistory`, for `RunnableWithMessageHistory`) on a
 * turnlog session, in the saver's format: `addMessage` appends (a message with a LangChain id keeps it
 * as `externalId`; one without gets a new one), `getMessages` is the live list, `clear` rewinds the
 * session to empty (the messages stay in the log).
 */
export class TurnlogChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['turnlog', 'langgraph']
  readonly #store: PostgresStore
  readonly #sessionId: string
  readonly #serde: SerializerProtocol

  constructor(config: TurnlogChatMessageHistoryConfig) {
    super()
    this.#store = config.store
    this.#sessionId = config.sessionId
    this.#serde = config.serde ?? new JsonPlusSerializer()
  }

  async getMessages(): Promise<BaseMessage[]> {
    const { messages } = await this.#store.load(this.#sessionId)
    return Promise.all(messages.map((m) => decodeLangChainMessage(this.#serde, m)))
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message])
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const batch = []
    for (const m of messages) {
      const payload = await encodeLangChainMessage(this.#serde, m)
      if (payload === undefined) throw new TurnlogError('INVALID_MESSAGE', 'the serializer wrote no JSON for a message')
      const given = typeof m.id === 'string' && m.id !== ''
      const id = given ? (m.id as string) : randomUUID()
      // a message without an id gets one, in its serialized form too (so it reads back with it)
      const kwargs = payload['kwargs']
      const withId = given || typeof kwargs !== 'object' || kwargs === null ? payload : { ...payload, kwargs: { ...kwargs, id } }
      batch.push(turnlogMessageFor(withId, id, messageScope(this.#sessionId)))
    }
    await this.#store.append(this.#sessionId, batch)
  }

  override async clear(): Promise<void> {
    const first = (await this.#store.load(this.#sessionId)).messages[0]
    if (first !== undefined) await this.#store.rewind(this.#sessionId, { from: first.id }, { reason: 'langchain: chat history cleared' })
  }
}
