/**
 * packages/langgraph/README.md and docs/adapters/langgraph.md, the promises no other test of this
 * package pins down (an audit of both, promise by promise), on Postgres and on PGlite:
 *
 * - `TurnlogChatMessageHistory`: "`addMessage` appends ..., `clear` rewinds the session to empty".
 *   A message whose LangChain id was cleared, added again, was a duplicate of the retracted copy and
 *   silently dropped (or `MESSAGE_CONFLICT` with other content); it is now a new message, in order.
 * - `tenantId`: "tenant of the sessions it creates".
 * - "What goes where": a thread is a root session with `metadata.langgraph.threadId`; `RemoveMessage`
 *   is a `messages_retracted` naming it with `data.sync: true`.
 * - `messagesChannel`: the channel named lives in turnlog; the default saver keeps that channel a blob.
 * - a checkpoint whose step did not touch the channel keeps its parent's session, version and channel version.
 * - "Neither memory is trusted": two savers putting children of one checkpoint at once each get their
 *   own messages back (one continues the session, the other is a fork), nothing lost or mixed (the losing
 *   put used to fail now and then with `VERSION_CONFLICT` when it had read the session from the store);
 *   so do two savers writing a new thread's first checkpoint at once (one root session).
 * - "a value that is not a list of LangChain messages with ids ... is stored as a plain blob": no
 *   turnlog session, read back equal.
 * - `migrateLangGraph`: "`MIGRATION_FAILED` on failure, nothing applied", with a later migration failing
 *   after an earlier one ran.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, RemoveMessage, type BaseMessage } from '@langchain/core/messages'
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint'
import { isTurnlogError, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, createTestDatabase, openTestStore, turnlogRejection, useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogChatMessageHistory, TurnlogCheckpointSaver, migrateLangGraph } from '@turnlog/langgraph'
import { sql } from 'kysely'
import { reactGraph } from './support/react-graph.js'
import { expectCleanAudit } from './support/expect-clean-audit.js'

describe.each(STORE_KINDS)('packages/langgraph/README.md promises (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('TurnlogChatMessageHistory: a message whose id was cleared, added again, is stored again (in order, other content too)', async () => {
    const sessionId = await store.createSession()
    const history = new TurnlogChatMessageHistory({ store, sessionId })
    await history.addMessages([new HumanMessage({ id: 'u0', content: 'zero' }), new HumanMessage({ id: 'u1', content: 'hi' })])
    await history.clear()

    // the same id and content again, after a new one in the same batch: both live, in the batch's order
    await history.addMessages([new HumanMessage({ id: 'u2', content: 'new' }), new HumanMessage({ id: 'u1', content: 'hi' })])
    expect((await history.getMessages()).map((m) => [m.id, m.content])).toEqual([
      ['u2', 'new'],
      ['u1', 'hi'],
    ])
    // a redelivery of a live message is still stored once
    await history.addMessage(new HumanMessage({ id: 'u1', content: 'hi' }))
    expect(await history.getMessages()).toHaveLength(2)
    // cleared again, the id comes back with other content
    await history.clear()
    await history.addMessage(new AIMessage({ id: 'u1', content: 'hi again' }))
    const messages = await history.getMessages()
    expect(messages.map((m) => [m.getType(), m.id, m.content])).toEqual([['ai', 'u1', 'hi again']])
    expect((await store.transcript(sessionId)).entries.map((e) => [e.message.externalId, e.status])).toEqual([
      ['u0', 'retracted'],
      ['u1', 'retracted'],
      ['u2', 'retracted'],
      ['u1', 'retracted'],
      ['u1', 'live'],
    ])
    await expectCleanAudit(store, sessionId)
    // a live id with other content is a conflict, not a silent copy
    const conflict = await turnlogRejection(history.addMessage(new HumanMessage({ id: 'u1', content: 'other' })))
    expect(conflict.code).toBe('MESSAGE_CONFLICT')
  })

  it('TurnlogChatMessageHistory: concurrent writers of one session all land, each message once', async () => {
    const sessionId = await store.createSession()
    const writers = Array.from({ length: 8 }, () => new TurnlogChatMessageHistory({ store, sessionId }))
    await Promise.all(writers.map((w, k) => w.addMessage(new HumanMessage({ id: `w${String(k)}`, content: `from ${String(k)}` }))))
    const ids = (await writers[0]?.getMessages())?.map((m) => m.id)
    expect([...(ids ?? [])].sort()).toEqual(writers.map((_, k) => `w${String(k)}`).sort())
  })

  it('tenantId: the sessions the saver creates belong to the tenant', async () => {
    const saver = new TurnlogCheckpointSaver({ store, tenantId: 'acme' })
    const config = { configurable: { thread_id: `tenant-${kind}` } }
    await reactGraph(saver).invoke({ messages: [new HumanMessage('What is 2 + 3?')] }, config)
    const ref = await saver.messagesRef(config)
    expect(ref).toBeDefined()
    expect((await store.getSession(ref?.sessionId ?? '')).tenantId).toBe('acme')
  })

  it('"What goes where": a thread is a root session naming it; RemoveMessage a retraction with data.sync: true', async () => {
    const saver = new TurnlogCheckpointSaver({ store })
    const graph = reactGraph(saver)
    const config = { configurable: { thread_id: `where-${kind}` } }
    const { messages } = await graph.invoke({ messages: [new HumanMessage('What is 2 + 3?')] }, config)
    const ref = await saver.messagesRef(config)
    if (ref === undefined) throw new Error('no turnlog session for the thread')
    expect((await store.getSession(ref.sessionId)).metadata).toEqual({ langgraph: { threadId: `where-${kind}` } })

    const removed = messages[1] as BaseMessage
    await graph.updateState(config, { messages: [new RemoveMessage({ id: removed.id as string })] })

    const retractions: StoredEvent[] = []
    for await (const event of store.events(ref.sessionId)) if (event.type === 'messages_retracted') retractions.push(event)
    const removedId = (await store.transcript(ref.sessionId)).entries.find((e) => e.message.externalId === removed.id)?.message.id
    expect(retractions.map((e) => e.data)).toEqual([expect.objectContaining({ ids: [removedId], sync: true })])
  })

  it('messagesChannel: the channel it names lives in turnlog, and only that one', async () => {
    const checkpoint = (channel: string): Checkpoint => ({
      ...emptyCheckpoint(),
      id: '1ef4f797-8335-6428-8001-8a1503f9b876',
      channel_values: { [channel]: [new HumanMessage({ id: 'h1', content: 'in chat' })] },
      channel_versions: { [channel]: 1 },
    })
    const named = new TurnlogCheckpointSaver({ store, messagesChannel: 'chat' })
    const config = { configurable: { thread_id: `channel-${kind}`, checkpoint_ns: '' } }
    const saved = await named.put(config, checkpoint('chat'), { source: 'input', step: -1, parents: {} }, { chat: 1 })
    const ref = await named.messagesRef(saved)
    expect((await store.load(ref?.sessionId ?? '')).messages.map((m) => m.externalId)).toEqual(['h1'])
    // the default saver keeps a `chat` channel as a blob
    const plain = new TurnlogCheckpointSaver({ store })
    const other = { configurable: { thread_id: `channel-default-${kind}`, checkpoint_ns: '' } }
    const blob = await plain.put(other, checkpoint('chat'), { source: 'input', step: -1, parents: {} }, { chat: 1 })
    expect(await plain.messagesRef(blob)).toBeUndefined()
    const tuple = await plain.getTuple(blob)
    expect((tuple?.checkpoint.channel_values['chat'] as BaseMessage[]).map((m) => m.id)).toEqual(['h1'])
  })

  it('two savers continuing one checkpoint at once: each child holds its own messages, one continues the session, the other forks it', async () => {
    for (let round = 0; round < 10; round++) {
      const a = new TurnlogCheckpointSaver({ store })
      const b = new TurnlogCheckpointSaver({ store })
      const meta = { source: 'loop' as const, step: 0, parents: {} }
      const at = (messages: BaseMessage[], version: number): Checkpoint => ({
        ...emptyCheckpoint(),
        id: uuid6(version),
        channel_values: { messages },
        channel_versions: { messages: version },
      })
      const h1 = new HumanMessage({ id: 'h1', content: 'one' })
      const parent = await a.put({ configurable: { thread_id: `race-${kind}-${String(round)}` } }, at([h1], 1), meta, { messages: 1 })

      const [fromA, fromB] = await Promise.all([
        a.put(parent, at([h1, new AIMessage({ id: 'a2', content: 'from a' })], 2), meta, { messages: 2 }),
        b.put(parent, at([h1, new AIMessage({ id: 'b2', content: 'from b' })], 2), meta, { messages: 2 }),
      ])

      const idsOf = async (config: typeof parent): Promise<string[]> =>
        ((await b.getTuple(config))?.checkpoint.channel_values['messages'] as BaseMessage[]).map((m) => m.id as string)
      expect(await idsOf(fromA)).toEqual(['h1', 'a2'])
      expect(await idsOf(fromB)).toEqual(['h1', 'b2'])
      const refs = await Promise.all([a.messagesRef(fromA), a.messagesRef(fromB)])
      expect(new Set(refs.map((r) => r?.sessionId)).size).toBe(2)
      for (const ref of refs) {
        const live = (await store.load(ref?.sessionId ?? '')).messages.map((m) => m.externalId)
        expect(live.length === 2 && live[0] === 'h1' && ['a2', 'b2'].includes(live[1] ?? '')).toBe(true)
        await expectCleanAudit(store, ref?.sessionId ?? '')
      }
    }
  })

  it('"A checkpoint whose step did not touch the channel keeps its parent\'s session, version and channel version"', async () => {
    const saver = new TurnlogCheckpointSaver({ store })
    const meta = { source: 'loop' as const, step: 0, parents: {} }
    const h1 = new HumanMessage({ id: 'h1', content: 'one' })
    const parentCheckpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(1),
      channel_values: { messages: [h1], counter: 1 },
      channel_versions: { messages: 1, counter: 1 },
    }
    const parent = await saver.put({ configurable: { thread_id: `untouched-${kind}` } }, parentCheckpoint, meta, {
      messages: 1,
      counter: 1,
    })
    const childCheckpoint: Checkpoint = {
      ...parentCheckpoint,
      id: uuid6(2),
      channel_values: { messages: [h1], counter: 2 },
      channel_versions: { messages: 1, counter: 2 },
    }
    const child = await saver.put(parent, childCheckpoint, meta, { counter: 2 })

    expect(await saver.messagesRef(child)).toEqual(await saver.messagesRef(parent))
    const tuple = await saver.getTuple(child)
    expect(tuple?.checkpoint.channel_versions).toEqual({ messages: 1, counter: 2 })
    expect((tuple?.checkpoint.channel_values['messages'] as BaseMessage[]).map((m) => m.id)).toEqual(['h1'])
    expect(tuple?.checkpoint.channel_values['counter']).toBe(2)
  })

  it("two savers writing a new thread's first checkpoint at once: one root session, each checkpoint its own messages", async () => {
    for (let round = 0; round < 6; round++) {
      const a = new TurnlogCheckpointSaver({ store })
      const b = new TurnlogCheckpointSaver({ store })
      const meta = { source: 'input' as const, step: -1, parents: {} }
      const first = (id: string): Checkpoint => ({
        ...emptyCheckpoint(),
        id: uuid6(1),
        channel_values: { messages: [new HumanMessage({ id, content: id })] },
        channel_versions: { messages: 1 },
      })
      const thread = { configurable: { thread_id: `first-race-${kind}-${String(round)}` } }

      const [fromA, fromB] = await Promise.all([
        a.put(thread, first('from-a'), meta, { messages: 1 }),
        b.put(thread, first('from-b'), meta, { messages: 1 }),
      ])

      for (const [config, id] of [
        [fromA, 'from-a'],
        [fromB, 'from-b'],
      ] as const) {
        const messages = (await a.getTuple(config))?.checkpoint.channel_values['messages'] as BaseMessage[]
        expect(messages.map((m) => m.id)).toEqual([id])
      }
      const roots = await sql<{ n: number }>`
        select count(*)::int as n from turnlog_langgraph.threads where thread_id = ${thread.configurable.thread_id}`.execute(store.db)
      expect(roots.rows[0]?.n).toBe(1)
    }
  })

  it('a messages value without ids is a plain blob: no turnlog session, read back equal', async () => {
    const saver = new TurnlogCheckpointSaver({ store })
    const config = { configurable: { thread_id: `no-ids-${kind}-${randomUUID()}`, checkpoint_ns: '' } }
    const checkpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id: '1ef4f797-8335-6428-8001-8a1503f9b875',
      channel_values: { messages: [new HumanMessage('no id'), new AIMessage({ id: 'a1', content: 'has one' })] },
      channel_versions: { messages: 1 },
    }
    const saved = await saver.put(config, checkpoint, { source: 'input', step: -1, parents: {} }, { messages: 1 })
    expect(await saver.messagesRef(saved)).toBeUndefined()
    const tuple = await saver.getTuple(saved)
    const messages = tuple?.checkpoint.channel_values['messages'] as HumanMessage[]
    expect(messages.map((m) => [m.getType(), m.content, m.id])).toEqual([
      ['human', 'no id', undefined],
      ['ai', 'has one', 'a1'],
    ])
  })
})

describe('migrateLangGraph: MIGRATION_FAILED, nothing applied (Postgres and PGlite)', () => {
  const failingMigration = async (store: PostgresStore): Promise<void> => {
    // 0002 creates this function: an existing one makes it fail after 0001 ran in the same call
    await sql`create schema turnlog_langgraph`.execute(store.db)
    await sql`create function turnlog_langgraph.checkpoint_tuple(p_thread text, p_ns text, p_checkpoint_id text) returns int language sql as 'select 1'`.execute(
      store.db,
    )
    const error = await turnlogRejection(migrateLangGraph(store.db))
    expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
    expect(error.details).toMatchObject({ failed: '0002_messages_in_checkpoint_row' })
    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables where table_schema = 'turnlog_langgraph' order by 1`.execute(store.db)
    // 0001's tables rolled back with it; kysely's own bookkeeping tables are all that is left
    expect(tables.rows.map((r) => r.name).filter((n) => !n.startsWith('migration'))).toEqual([])
    const applied = await sql<{ name: string }>`select name from turnlog_langgraph.migrations`.execute(store.db)
    expect(applied.rows).toEqual([])
  }

  it('postgres', async () => {
    const db = await createTestDatabase({ migrated: true })
    const store = await openStore({ connectionString: db.connectionString })
    try {
      await failingMigration(store)
    } finally {
      await store.close()
      await db.drop()
    }
  })

  it('pglite', async () => {
    const { store, close } = await openTestStore('pglite')
    try {
      await failingMigration(store)
    } finally {
      await close()
    }
  })
})
