/**
 * What a new user's walkthrough of packages/ai-sdk/README.md found (the README's route behind a Node
 * `http` server, driven by the AI SDK's own client, from packed tarballs in a fresh npm project), on
 * Postgres and on PGlite:
 *
 * - A second tab that drops the question of a reply still streaming, before the reply's first write (a
 *   one-step text reply is written only at its end): the reply was appended anyway, after the second tab's
 *   turn, so the chat held a reply to a message it no longer held, and `loadChat` differed from what
 *   the second tab holds. The README says a whole-list request that does not hold a reply drops it and
 *   the reply's next write fails (`UNKNOWN_MESSAGE`, through `reply.done`): now the first write fails
 *   the same way when the message it answers is no longer live, and nothing is appended.
 * - The first write still lands when another request kept the question live (the one-message shape
 *   "appends after what the chat holds and never drops it").
 * - A retried regenerate request is a new regeneration (useChat's `regenerate()` sends no message id, so
 *   a retry cannot be told from a second click): it retracts the reply the lost response carried and the
 *   model runs again, in both request shapes (the README now says so).
 */
import { describe, expect, it } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import type { UIMessage } from 'ai'
import { chatMessageId, chatSessionId, loadChat, persistReply, receiveChat } from '@turnlog/ai-sdk'
import { turnlogRejection } from '@turnlog/testing'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] })
const assistant = (id: string, text: string): UIMessage => ({ id, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] })
const finish = { isContinuation: false, isAborted: false, finishReason: 'stop' } as const

describe.each(STORE_KINDS)('packages/ai-sdk/README.md, a new user walkthrough (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  async function answered(chatId: string, messages: UIMessage[], text: string): Promise<UIMessage> {
    const reply = persistReply(store, await receiveChat(store, chatId, { messages }))
    const message = assistant(reply.generateMessageId(), text)
    await reply.onFinish({ responseMessage: message, ...finish })
    await reply.done
    return message
  }

  it('a reply whose question another tab dropped before its first write is not appended: UNKNOWN_MESSAGE through done', async () => {
    const chatId = `dropped-question-${kind}`
    const a1 = await answered(chatId, [user('u1', 'hello')], 'hi')
    // tab 1 asks; its reply streams (one step: nothing written before its end)
    const turn = await receiveChat(store, chatId, { messages: [user('u1', 'hello'), a1, user('u2', 'a slow story')] })
    const reply = persistReply(store, turn)
    const slow = assistant(reply.generateMessageId(), 'once upon a time')
    // tab 2, loaded before tab 1 asked, posts its whole list: the question is dropped (retracted)
    const tab2 = await receiveChat(store, chatId, { messages: [user('u1', 'hello'), a1, user('u3', 'from tab 2')] })
    expect(tab2.retracted).toEqual(['u2'])

    const error = await turnlogRejection(reply.onFinish({ responseMessage: slow, ...finish }))
    expect(error).toMatchObject({ code: 'UNKNOWN_MESSAGE', details: { chatId, uiMessageId: slow.id, answers: 'u2' } })
    await expect(reply.done).rejects.toMatchObject({ code: 'UNKNOWN_MESSAGE' })
    expect((await loadChat(store, chatId)).map((m) => m.id)).toEqual(['u1', a1.id, 'u3'])
    const transcript = await store.transcript(chatSessionId(chatId))
    expect(transcript.entries.some((e) => e.message.id === chatMessageId(chatId, slow.id))).toBe(false)
  })

  it('a reply whose question another request kept live is still written, after that request', async () => {
    const chatId = `kept-question-${kind}`
    const a1 = await answered(chatId, [user('u1', 'hello')], 'hi')
    const reply = persistReply(store, await receiveChat(store, chatId, { messages: [user('u1', 'hello'), a1, user('u2', 'a slow story')] }))
    const slow = assistant(reply.generateMessageId(), 'once upon a time')
    // tab 2 sends one message: appended after what the chat holds, the question kept
    await receiveChat(store, chatId, { message: user('u3', 'from tab 2') })

    await reply.onStepFinish({ responseMessage: slow, isContinuation: false })
    await reply.onFinish({ responseMessage: slow, ...finish })
    await expect(reply.done).resolves.toMatchObject({ status: 'final', uiMessageId: slow.id })
    expect((await loadChat(store, chatId)).map((m) => m.id)).toEqual(['u1', a1.id, 'u2', 'u3', slow.id])
  })

  it.each(['messages', 'message'] as const)(
    'a retried regenerate request (%s) regenerates again: no answered reply, not settled',
    async (shape) => {
      const chatId = `retried-regenerate-${shape}-${kind}`
      const question = user('u1', 'hello')
      await answered(chatId, [question], 'first')
      // useChat's regenerate(): the list without the reply, trigger 'regenerate-message', no message id
      const body =
        shape === 'messages'
          ? { messages: [question], trigger: 'regenerate-message' }
          : { message: question, trigger: 'regenerate-message' }
      await answered(chatId, [question], 'second') // what the first regenerate stored (its response lost)
      const retry = await receiveChat(store, chatId, body)
      expect(retry).toMatchObject({ duplicate: false, settled: false, answered: undefined })
      expect(retry.retracted).toHaveLength(1)
      expect(retry.messages).toEqual([question])
    },
  )
})
