import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newSessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import type { UIMessage } from 'ai'
import { chatSessionId, createChat, forkChat, loadChat, persistReply, receiveChat, startModelTurn } from '@turnlog/ai-sdk'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] })
const assistant = (id: string, text: string): UIMessage => ({ id, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] })

/** The error code a call fails with (`'none'` when it does not). */
async function codeOf(call: () => Promise<unknown>): Promise<string> {
  try {
    await call()
    return 'none'
  } catch (error) {
    return isTurnlogError(error)
      ? `${error.code}${error.details?.reason === undefined ? '' : `:${String(error.details.reason)}`}`
      : String(error)
  }
}

describe.each(STORE_KINDS)('refusals and write failures on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('a bad request is INVALID_INPUT and writes nothing, not even the session', async () => {
    for (const bad of [null, 'hi', {}, { messages: 'x' }, { messages: [{ role: 'user' }] }, { message: 42 }, { messages: new Array(1) }]) {
      expect(await codeOf(() => receiveChat(store, 'bad-request', bad as never))).toBe('INVALID_INPUT')
    }
    expect(await codeOf(() => receiveChat(store, '', { messages: [] }))).toBe('INVALID_INPUT')
    // a chat's first request refused after the chat was read: no empty chat left behind either
    expect(await codeOf(() => receiveChat(store, 'bad-request', { messages: [assistant('a0', 'forged')] }))).toBe('INVALID_INPUT:role')
    const refuse = async (): Promise<never> => {
      throw new Error('schema says no')
    }
    expect(await codeOf(() => receiveChat(store, 'bad-request', { message: user('u1', 'x') }, { validate: refuse }))).toBe(
      'Error: schema says no',
    )
    expect(await codeOf(() => loadChat(store, 'bad-request'))).toBe('SESSION_NOT_FOUND')
  })

  it('refuses, writing nothing: a new assistant message from the client, a reorder, a malformed message, a failed validation', async () => {
    // given
    const chatId = await createChat(store, { chatId: `refusals-${kind}` })
    await receiveChat(store, chatId, { messages: [user('u1', 'one')] })
    const session = chatSessionId(chatId)
    const { version } = await store.getSession(session)
    // when / then
    expect(await codeOf(() => receiveChat(store, chatId, { messages: [user('u1', 'one'), assistant('a1', 'forged')] }))).toBe(
      'INVALID_INPUT:role',
    )
    expect(await codeOf(() => receiveChat(store, chatId, { messages: [user('u0', 'before'), user('u1', 'one')] }))).toBe(
      'INVALID_INPUT:reorder',
    )
    expect(await codeOf(() => receiveChat(store, chatId, { message: { id: 'u2', role: 'user' } as unknown as UIMessage }))).toBe(
      'INVALID_MESSAGE',
    )
    const refuse = async (): Promise<never> => {
      throw new Error('schema says no')
    }
    expect(await codeOf(() => receiveChat(store, chatId, { message: user('u2', 'two') }, { validate: refuse }))).toBe(
      'Error: schema says no',
    )
    expect((await store.getSession(session)).version).toBe(version)
    expect(await loadChat(store, chatId)).toEqual([user('u1', 'one')])
    // an app that does accept replies from the client says so
    const turn = await receiveChat(
      store,
      chatId,
      { messages: [user('u1', 'one'), assistant('a1', 'restored')] },
      { newRoles: ['user', 'assistant'] },
    )
    expect(turn.appended).toEqual(['a1'])
  })

  it('a concurrent writer makes a stale request fail with VERSION_CONFLICT', async () => {
    // given: two requests read the chat at the same version
    const chatId = `race-${kind}`
    await receiveChat(store, chatId, { messages: [user('u1', 'one')] })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = receiveChat(store, chatId, { message: user('u2', 'two') }, { validate: async (m) => (await gate, m) })
    // when: the other one writes first
    await receiveChat(store, chatId, { message: user('u3', 'three') })
    release()
    // then
    expect(await codeOf(() => slow)).toBe('VERSION_CONFLICT')
    expect((await loadChat(store, chatId)).map((m) => m.id)).toEqual(['u1', 'u3'])
  })

  it('a chat holds ai-sdk-ui messages only; a fork needs a message of the chat', async () => {
    const session = await store.createSession()
    await store.append(session, [createMessage({ role: 'user', content: 'chat completions' })])
    expect(await codeOf(() => startModelTurn(store, session, []))).toBe('INVALID_INPUT:format')
    // a chat's session that another writer gave a message of another format is refused, not misread
    const foreign = `foreign-format-${kind}`
    await store.createSession({ id: chatSessionId(foreign) })
    await store.append(chatSessionId(foreign), [createMessage({ role: 'user', content: 'chat completions' })])
    expect(await codeOf(() => loadChat(store, foreign))).toBe('INVALID_INPUT:format')
    expect(await codeOf(() => receiveChat(store, foreign, { messages: [user('u1', 'one')] }))).toBe('INVALID_INPUT:format')
    expect((await store.load(chatSessionId(foreign))).messages).toHaveLength(1)
    const chatId = `fork-refusal-${kind}`
    await receiveChat(store, chatId, { messages: [user('u1', 'one')] })
    expect(await codeOf(() => forkChat(store, chatId, { at: 'nope', chatId: `${chatId}-b` }))).toBe('INVALID_INPUT:unknown_message')
    await expect(store.getSession(chatSessionId(`${chatId}-b`))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    expect(await codeOf(() => startModelTurn(store, newSessionId(), [{ role: 'robot' } as never]))).toBe('INVALID_MESSAGE')
  })

  it('a failed reply write is never silent: onFinish throws and done rejects', async () => {
    // given: a reply stored at its first step, then retracted by another request
    const chatId = `lost-${kind}`
    const turn = await receiveChat(store, chatId, { messages: [user('u1', 'one')] })
    const reply = persistReply(store, turn)
    const id = reply.generateMessageId()
    await reply.onStepFinish({ responseMessage: assistant(id, 'step one'), isContinuation: false })
    await store.rewind(turn.sessionId, { after: turn.ids.get('u1') as string })
    // when / then
    expect(
      await codeOf(() =>
        reply.onFinish({ responseMessage: assistant(id, 'all'), isContinuation: false, isAborted: false, finishReason: 'stop' }),
      ),
    ).toBe('UNKNOWN_MESSAGE')
    expect(await codeOf(() => reply.done)).toBe('UNKNOWN_MESSAGE')
  })

  it('a step write that failed is reported by done even when the last write stored the whole reply', async () => {
    // given
    const chatId = `healed-${kind}`
    const turn = await receiveChat(store, chatId, { messages: [user('u1', 'one')] })
    const reply = persistReply(store, turn)
    const id = reply.generateMessageId()
    // when: step 1 hands over a message turnlog refuses (a part without its type); the AI SDK would only log it
    await expect(
      reply.onStepFinish({
        responseMessage: { id, role: 'assistant', parts: [{ text: 'x' }] } as unknown as UIMessage,
        isContinuation: false,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_MESSAGE' })
    await reply.onFinish({ responseMessage: assistant(id, 'all'), isContinuation: false, isAborted: false, finishReason: 'stop' })
    // then
    expect(await codeOf(() => reply.done)).toBe('INVALID_MESSAGE')
    expect(await loadChat(store, chatId)).toEqual([user('u1', 'one'), assistant(id, 'all')])
  })
})
