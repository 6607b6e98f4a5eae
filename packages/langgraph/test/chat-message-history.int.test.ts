import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogChatMessageHistory } from '@turnlog/langgraph'
import { expectCleanAudit } from './support/expect-clean-audit.js'

// LangChain's legacy list chat history on a turnlog session, Postgres and PGlite.
describe.each(['postgres', 'pglite'] as const)('TurnlogChatMessageHistory (%s)', (flavor) => {
  let store: PostgresStore
  useTestStoreOfKind(flavor, (t) => ({ store } = t))

  it('appends, reads back the live list, keeps ids, and clears by a rewind', async () => {
    // given
    const sessionId = await store.createSession()
    const history = new TurnlogChatMessageHistory({ store, sessionId })

    // when
    await history.addMessage(new HumanMessage({ id: 'u1', content: 'hi' }))
    await history.addAIMessage('hello')
    await history.addMessages([new HumanMessage({ id: 'u2', content: 'bye' })])
    await history.addMessage(new HumanMessage({ id: 'u1', content: 'hi' })) // a redelivery: stored once

    // then
    const messages = await history.getMessages()
    expect(messages.map((m) => [m.getType(), m.content])).toEqual([
      ['human', 'hi'],
      ['ai', 'hello'],
      ['human', 'bye'],
    ])
    expect(messages[0]?.id).toBe('u1')
    expect(messages[1]).toBeInstanceOf(AIMessage)
    expect((await store.load(sessionId)).messages.map((m) => m.externalId)).toEqual(['u1', messages[1]?.id, 'u2'])

    // when cleared: empty live list, history kept
    await history.clear()
    expect(await history.getMessages()).toEqual([])
    expect((await store.transcript(sessionId)).entries).toHaveLength(3)
    await expectCleanAudit(store, sessionId)
  })
})
