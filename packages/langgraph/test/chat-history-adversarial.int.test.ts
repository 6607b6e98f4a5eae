/**
 * Attacks `TurnlogChatMessageHistory` on sessions it did not write alone: a fork of a history (turnlog
 * `store.fork`, whose messages keep the parent's ids) and a session the checkpoint saver wrote. The
 * README: "A message whose LangChain id is live is a redelivery, stored once (with other content:
 * `MESSAGE_CONFLICT`)", which must hold whatever scope the live message's id was derived in.
 */
import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { isTurnlogError } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogChatMessageHistory } from '@turnlog/langgraph'

describe.each(STORE_KINDS)('TurnlogChatMessageHistory on a fork (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('a live message inherited by a fork, added again, is a redelivery: stored once; with other content MESSAGE_CONFLICT', async () => {
    // given
    const parent = await store.createSession()
    await new TurnlogChatMessageHistory({ store, sessionId: parent }).addMessages([
      new HumanMessage({ id: 'u1', content: 'hi' }),
      new AIMessage({ id: 'a1', content: 'hello' }),
    ])
    const forkId = await store.fork(parent, { at: (await store.load(parent)).messages[1]!.id })
    const fork = new TurnlogChatMessageHistory({ store, sessionId: forkId })
    // when: a retry re-adds the last message
    await fork.addMessage(new AIMessage({ id: 'a1', content: 'hello' }))
    const conflict = await fork.addMessage(new AIMessage({ id: 'a1', content: 'changed' })).then(
      () => undefined,
      (e: unknown) => e,
    )
    // then
    expect((await fork.getMessages()).map((m) => [m.id, m.content])).toEqual([
      ['u1', 'hi'],
      ['a1', 'hello'],
    ])
    expect(isTurnlogError(conflict, 'MESSAGE_CONFLICT')).toBe(true)
  })

  it('the same on a fork whose history has a clear (the folded path)', async () => {
    // given
    const parent = await store.createSession()
    const history = new TurnlogChatMessageHistory({ store, sessionId: parent })
    await history.addMessage(new HumanMessage({ id: 'u0', content: 'old' }))
    await history.clear()
    await history.addMessages([new HumanMessage({ id: 'u1', content: 'hi' }), new AIMessage({ id: 'a1', content: 'hello' })])
    const forkId = await store.fork(parent, { at: (await store.load(parent)).messages[1]!.id })
    const fork = new TurnlogChatMessageHistory({ store, sessionId: forkId })
    await fork.clear()
    await fork.addMessages([new HumanMessage({ id: 'u1', content: 'hi' }), new AIMessage({ id: 'a2', content: 'bye' })])
    // when
    await fork.addMessage(new AIMessage({ id: 'a2', content: 'bye' }))
    // then
    expect((await fork.getMessages()).map((m) => m.id)).toEqual(['u1', 'a2'])
  })
})
