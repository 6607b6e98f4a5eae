import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { validateUIMessages } from 'ai'
import { chatSessionId, loadChat, loadChatState } from '@turnlog/ai-sdk'
import { TestChat, scriptedModel, textStep, toolStep, tools } from './chat-fixture.js'
import { chatRoute, type RouteLog } from './chat-route.js'

const kinds = ['postgres', 'pglite'] as const

describe.each(kinds)('ai-sdk chat persistence on %s', (kind) => {
  let database: TestDatabase | undefined
  let store: PostgresStore
  beforeAll(async () => {
    if (kind === 'postgres') {
      database = await createTestDatabase()
      store = await openStore({ connectionString: database.connectionString })
    } else {
      store = await openStore({ embedded: true })
    }
  })
  afterAll(async () => {
    await store.close()
    await database?.drop()
  })

  it('a 3-step tool run keeps one assistant id, partial after the first step, final at the end', async () => {
    // given
    const model = scriptedModel([
      toolStep('c1', 'weather', { city: 'Paris' }),
      toolStep('c2', 'weather', { city: 'Oslo' }),
      textStep('Paris is warmer.'),
    ])
    const log: RouteLog = { replies: [] }
    const chat = new TestChat({ id: 'three-steps', api: chatRoute(store, model, log) })
    // when
    await chat.sendMessage({ text: 'Paris or Oslo?' })
    const reply = await log.replies[0]
    // then
    const events = await collect(store.events(chatSessionId('three-steps')))
    console.log(
      JSON.stringify(
        events.map((e) => [e.type, (e as { data?: unknown }).data]),
        null,
        1,
      ),
    )
    console.log(JSON.stringify(chat.list, null, 1))
    expect(reply?.status).toBe('final')
    expect(await loadChat(store, 'three-steps')).toEqual(chat.list)
    await validateUIMessages({ messages: await loadChat(store, 'three-steps'), tools })
  })
})

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
