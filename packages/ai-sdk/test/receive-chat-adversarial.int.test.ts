/**
 * Attacks `receiveChat` with client lists a buggy or hostile client can post: one `UIMessage.id` twice
 * (the same message, or two contents), which the store keeps once while `turn.messages` (the
 * route's `originalMessages`, what the model is sent) held it twice: "`loadChat` equals the list the
 * client holds" broke. Such a list is now refused, nothing written.
 */
import { describe, expect, it } from '@jest/globals'
import { isTurnlogError } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import type { UIMessage } from 'ai'
import { loadChat, receiveChat } from '@turnlog/ai-sdk'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] })

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call()
    return 'ok'
  } catch (error) {
    return isTurnlogError(error)
      ? `${error.code}${error.details?.reason === undefined ? '' : `:${String(error.details.reason)}`}`
      : String(error)
  }
}

describe.each(STORE_KINDS)('receiveChat with repeated ids on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it.each([
    ['the same message twice', [user('u1', 'hi'), user('u1', 'hi')]],
    ['one id with two contents', [user('u1', 'hi'), user('u1', 'other')]],
    ['a stored id again after a new message', [user('u1', 'hi'), user('u2', 'two'), user('u1', 'hi')]],
    ['a new id twice', [user('u1', 'hi'), user('u3', 'three'), user('u3', 'three')]],
  ])('%s: refused (INVALID_INPUT, duplicate_id), nothing written', async (_name, messages) => {
    // given
    const chatId = `dup-${kind}-${Math.random().toString(36).slice(2)}`
    await receiveChat(store, chatId, { messages: [user('u1', 'hi')] })
    // when
    const result = await outcome(() => receiveChat(store, chatId, { messages }))
    // then: before the fix, the store kept one copy while turn.messages (streamed, sent to the model) held two
    expect(result).toBe('INVALID_INPUT:duplicate_id')
    expect(await loadChat(store, chatId)).toEqual([user('u1', 'hi')])
  })
})
