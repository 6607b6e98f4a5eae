/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not an option of the call is refused, naming it, and
 * nothing is written. Before, every function read its options for the keys it knew and ignored the
 * rest: `receiveChat(store, id, body, { validat })` stored the client's list unchecked,
 * `createChat(store, { chatID })` created a chat under a minted id, `startModelTurn(…, { turnID })`
 * stored a retried request's input twice, and `loadChat(…, { att: 3 })` returned the chat as it is now.
 * The request body is the client's, not an options object: its other fields stay accepted.
 */
import { describe, expect, it } from '@jest/globals'
import { refusal } from '@turnlog/testing'
import type { PostgresStore } from '@turnlog/postgres'
import type { UIMessage } from 'ai'
import { createChat, forkChat, loadChat, loadChatState, receiveChat, startModelTurn } from '@turnlog/ai-sdk'
import { useTestStoreOfKind } from './store-kinds.js'

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] })

/** Everything a refused call could have written: every session and its version (one per event). */
async function snapshot(store: PostgresStore): Promise<unknown> {
  return (await store.sessions({ limit: 1000 })).sessions.map((s) => [s.sessionId, s.version])
}

type Row = readonly [name: string, call: () => unknown, field: string, suggestion: string | undefined]

describe('the ai-sdk functions refuse a key that is not an option, nothing written', () => {
  let store: PostgresStore
  useTestStoreOfKind('postgres', (t) => ({ store } = t))

  it('names the key and writes nothing', async () => {
    // given a chat of one message, and the database as it is
    const chatId = await createChat(store)
    await receiveChat(store, chatId, { messages: [user('u1', 'hi')], trigger: 'submit-message', id: chatId } as never)
    const before = await snapshot(store)
    const validate = (messages: UIMessage[]): UIMessage[] => messages
    const rows: Row[] = [
      ['createChat', () => createChat(store, { chatID: 'c-new' } as never), 'options.chatID', 'chatId'],
      [
        'forkChat',
        () => forkChat(store, chatId, { at: 'u1', chatId: 'c-fork', tenantID: 'acme' } as never),
        'options.tenantID',
        'tenantId',
      ],
      ['loadChat', () => loadChat(store, chatId, { att: 1 } as never), 'options.att', 'at'],
      ['loadChatState', () => loadChatState(store, chatId, { version: 1 } as never), 'options.version', undefined],
      [
        'receiveChat',
        () => receiveChat(store, chatId, { message: user('u2', 'more') }, { validat: validate } as never),
        'options.validat',
        'validate',
      ],
      [
        'startModelTurn',
        () => startModelTurn(store, '01990000-0000-7000-8000-000000000001', [{ role: 'user', content: 'hi' }], { turnID: 't-1' } as never),
        'options.turnID',
        'turnId',
      ],
      // not a key, but the same promise: a malformed argument is named in details.field
      ['startModelTurn sessionId', () => startModelTurn(store, 'not-a-session', [{ role: 'user', content: 'hi' }]), 'sessionId', undefined],
    ]

    // when each is called
    const outcomes: unknown[] = []
    for (const [name, call] of rows) outcomes.push([name, await refusal(call)])

    // then each is refused naming its key, and nothing was written
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    expect(await snapshot(store)).toEqual(before)

    // while the keys spelt right work (a key given undefined is absent)
    expect(await createChat(store, { chatId: 'c-new', tenantID: undefined } as never)).toBe('c-new')
    expect(await forkChat(store, chatId, { at: 'u1', chatId: 'c-fork' })).toBe('c-fork')
    expect((await loadChat(store, chatId, { at: 1 })).map((m) => m.id)).toEqual(['u1'])
    const turn = await receiveChat(store, chatId, { message: user('u2', 'more') }, { validate })
    expect(turn.messages.map((m) => m.id)).toEqual(['u1', 'u2'])
  })
})
