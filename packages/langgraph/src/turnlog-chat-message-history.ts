import { BaseListChatMessageHistory } from '@langchain/core/chat_history'
import type { BaseMessage } from '@langchain/core/messages'
import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { randomUUID } from 'node:crypto'
import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { checkKnownKeys, optionKeys } from '@turnlog/core/internal'
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

/** Every key of a {@link TurnlogChatMessageHistoryConfig}. */
const HISTORY_CONFIG_KEYS = optionKeys<TurnlogChatMessageHistoryConfig>({ store: true, sessionId: true, serde: true })

/** How many times `addMessages` reads again after another writer moved the session. */
const MAX_ADD_ATTEMPTS = 8

/**
 * LangChain's legacy chat history (`BaseListChatMessageHistory`, for `RunnableWithMessageHistory`) on a
 * turnlog session, in the saver's format: `addMessage` appends (a message with a LangChain id keeps it
 * as `externalId`; one without gets a new one), `getMessages` is the live list, `clear` rewinds the
 * session to empty (the messages stay in the log). A message whose LangChain id is live already is a
 * redelivery (stored once; with other content, `MESSAGE_CONFLICT`); one whose id was cleared is a new
 * message (a turnlog id in the next scope of the session, as the saver does).
 */
export class TurnlogChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['turnlog', 'langgraph']
  readonly #store: PostgresStore
  readonly #sessionId: string
  readonly #serde: SerializerProtocol

  /** Throws `INVALID_INPUT` for a config that is not an object, or a key that is not one of its (`config.sessionID`). */
  constructor(config: TurnlogChatMessageHistoryConfig) {
    super()
    if (typeof config !== 'object' || config === null)
      throw new TurnlogError('INVALID_INPUT', 'TurnlogChatMessageHistory needs { store, sessionId }', { details: { field: 'config' } })
    checkKnownKeys(config, HISTORY_CONFIG_KEYS, 'config', 'TurnlogChatMessageHistory')
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
    const encoded: { readonly payload: Record<string, unknown>; readonly id: string }[] = []
    for (const m of messages) {
      const payload = await encodeLangChainMessage(this.#serde, m)
      if (payload === undefined) throw new TurnlogError('INVALID_MESSAGE', 'the serializer wrote no JSON for a message')
      const given = typeof m.id === 'string' && m.id !== ''
      const id = given ? (m.id as string) : randomUUID()
      // a message without an id gets one, in its serialized form too (so it reads back with it)
      const kwargs = payload['kwargs']
      const withId = given || typeof kwargs !== 'object' || kwargs === null ? payload : { ...payload, kwargs: { ...kwargs, id } }
      encoded.push({ payload: withId, id })
    }
    if (encoded.length === 0) return
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#append(encoded)
        return
      } catch (error) {
        // another writer moved the session between the read and the append: read again, after a jittered pause
        if (!isTurnlogError(error, 'VERSION_CONFLICT') || attempt >= MAX_ADD_ATTEMPTS) throw error
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** attempt))
      }
    }
  }

  /**
   * Appends under `expectedVersion`, each message under the first scope of the session its LangChain id
   * was not cleared from: a cleared id added again is a new message (as the saver does), never a
   * duplicate of the retracted copy, which would drop it. A session whose every event is an append (its
   * version is its live length) has no cleared id: the scopes are known without folding it.
   */
  async #append(encoded: readonly { readonly payload: Record<string, unknown>; readonly id: string }[]): Promise<void> {
    const live = await this.#store.load(this.#sessionId)
    // a LangChain id live in the session keeps the scope its id was derived in (a fork's messages keep
    // the parent's): adding it again is a redelivery (a duplicate, or MESSAGE_CONFLICT), never a second copy
    const liveScopes = new Map<string, string>()
    for (const m of live.messages)
      if (m.externalId !== undefined && m.externalScope !== undefined) liveScopes.set(m.externalId, m.externalScope)
    const liveMessage = (e: { readonly payload: Record<string, unknown>; readonly id: string }) => {
      const scope = liveScopes.get(e.id)
      return scope === undefined ? undefined : turnlogMessageFor(e.payload, e.id, scope)
    }
    if (live.version === live.messages.length) {
      const batch = encoded.map((e) => liveMessage(e) ?? turnlogMessageFor(e.payload, e.id, messageScope(this.#sessionId)))
      await this.#store.append(this.#sessionId, batch, { expectedVersion: live.version })
      return
    }
    const state = await this.#store.state(this.#sessionId)
    const batch = encoded.map((e) => {
      const held = liveMessage(e)
      if (held !== undefined) return held
      for (let scope = 0; ; scope++) {
        const message = turnlogMessageFor(e.payload, e.id, messageScope(this.#sessionId, scope))
        const known = state.messages.get(message.id)
        if (known === undefined || (known.state !== 'retracted' && known.state !== 'compacted')) return message
      }
    })
    await this.#store.append(this.#sessionId, batch, { expectedVersion: state.version })
  }

  override async clear(): Promise<void> {
    const first = (await this.#store.load(this.#sessionId)).messages[0]
    if (first !== undefined) await this.#store.rewind(this.#sessionId, { from: first.id }, { reason: 'langchain: chat history cleared' })
  }
}
