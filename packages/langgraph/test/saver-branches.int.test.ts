import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'
import { uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import { sql } from 'kysely'
import { expectCleanAudit } from './support/expect-clean-audit.js'

// The saver's own API, no graph: two savers (two processes) writing one thread, a branch taken by a
// saver whose memory of the session is stale, and a LangChain id removed and then added again.

const meta = { source: 'loop' as const, step: 0, parents: {} }
const checkpoint = (messages: readonly BaseMessage[], version: number): Checkpoint => ({
  v: 4,
  id: uuid6(version),
  ts: new Date().toISOString(),
  channel_values: { messages: [...messages] },
  channel_versions: { messages: version },
  versions_seen: {},
})
const ids = (tuple: { checkpoint: Checkpoint } | undefined): string[] =>
  ((tuple?.checkpoint.channel_values['messages'] ?? []) as BaseMessage[]).map((m) => m.id as string)

describe.each(['postgres', 'pglite'] as const)('the saver (%s)', (flavor) => {
  let store: PostgresStore
  useTestStoreOfKind(flavor, (t) => ({ store } = t))

  it('branches correctly when another saver moved the session on (a stale memory of it fails and is retried)', async () => {
    // given: saver a writes the first checkpoint, saver b continues it
    const a = new TurnlogCheckpointSaver({ store })
    const b = new TurnlogCheckpointSaver({ store })
    const [h1, h2, h3] = ['one', 'two', 'three'].map((content, i) => new HumanMessage({ id: `h${i + 1}`, content })) as [
      HumanMessage,
      HumanMessage,
      HumanMessage,
    ]
    const c1 = await a.put({ configurable: { thread_id: 'two-savers' } }, checkpoint([h1], 1), meta, { messages: 1 })
    const c2 = await b.put(c1, checkpoint([h1, h2], 2), meta, { messages: 2 })

    // when: a continues c1 (a branch), believing the session is still where it left it
    const c3 = await a.put(c1, checkpoint([h1, h3], 2), meta, { messages: 2 })

    // then: each checkpoint has its own messages; the branch is a fork sharing h1
    expect(ids(await a.getTuple(c2))).toEqual(['h1', 'h2'])
    expect(ids(await b.getTuple(c3))).toEqual(['h1', 'h3'])
    const main = await a.messagesRef(c2 as RunnableConfig)
    const branch = await a.messagesRef(c3 as RunnableConfig)
    expect(branch?.sessionId).not.toBe(main?.sessionId)
    expect((await store.getSession(branch?.sessionId as string)).parent?.sessionId).toBe(main?.sessionId)
    expect((await store.load(main?.sessionId as string)).messages.map((m) => m.externalId)).toEqual(['h1', 'h2'])
    expect((await store.load(branch?.sessionId as string)).messages.map((m) => m.externalId)).toEqual(['h1', 'h3'])
    for (const ref of [main, branch]) await expectCleanAudit(store, ref?.sessionId as string)
  })

  it('writes a LangChain id removed and added again under a new turnlog id (the old one stays retracted)', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const h1 = new HumanMessage({ id: 'x1', content: 'first' })
    const h2 = new HumanMessage({ id: 'x2', content: 'second' })
    const c1 = await saver.put({ configurable: { thread_id: 're-added' } }, checkpoint([h1, h2], 1), meta, { messages: 1 })
    const c2 = await saver.put(c1, checkpoint([h1], 2), meta, { messages: 2 })

    // when: x2 comes back
    const c3 = await saver.put(c2, checkpoint([h1, h2], 3), meta, { messages: 3 })

    // then
    expect(ids(await saver.getTuple(c3))).toEqual(['x1', 'x2'])
    const ref = await saver.messagesRef(c3 as RunnableConfig)
    const { entries } = await store.transcript(ref?.sessionId as string)
    const x2 = entries.filter((e) => e.message.externalId === 'x2')
    expect(x2.map((e) => e.status)).toEqual(['retracted', 'live'])
    expect(new Set(x2.map((e) => e.message.id)).size).toBe(2)
    await expectCleanAudit(store, ref?.sessionId as string)
  })

  it('writes a LangChain id removed and added again with other content under a new turnlog id (no conflict with the retracted copy)', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const h1 = new HumanMessage({ id: 'y1', content: 'first' })
    const h2 = new HumanMessage({ id: 'y2', content: 'second' })
    const c1 = await saver.put({ configurable: { thread_id: 're-added-edited' } }, checkpoint([h1, h2], 1), meta, { messages: 1 })
    const c2 = await saver.put(c1, checkpoint([h1], 2), meta, { messages: 2 })

    // when: y2 comes back with other content
    const edited = new HumanMessage({ id: 'y2', content: 'second, edited' })
    const c3 = await saver.put(c2, checkpoint([h1, edited], 3), meta, { messages: 3 })

    // then
    const messages = (await saver.getTuple(c3))?.checkpoint.channel_values['messages'] as BaseMessage[]
    expect(messages.map((m) => [m.id, m.content])).toEqual([
      ['y1', 'first'],
      ['y2', 'second, edited'],
    ])
    const ref = await saver.messagesRef(c3 as RunnableConfig)
    const { entries } = await store.transcript(ref?.sessionId as string)
    const y2 = entries.filter((e) => e.message.externalId === 'y2')
    expect(y2.map((e) => [e.status, (e.message.payload as unknown as { kwargs: { content: string } }).kwargs.content])).toEqual([
      ['retracted', 'second'],
      ['live', 'second, edited'],
    ])
    await expectCleanAudit(store, ref?.sessionId as string)
  })

  it("deleteThread: 'redact' also erases the messages' content, ids and hashes kept, audit clean", async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store, deleteThread: 'redact' })
    const c1 = await saver.put(
      { configurable: { thread_id: 'erase-me' } },
      checkpoint([new HumanMessage({ id: 'p1', content: 'my card is 4111 1111 1111 1111' })], 1),
      meta,
      { messages: 1 },
    )
    const ref = await saver.messagesRef(c1 as RunnableConfig)

    // when
    await saver.deleteThread('erase-me')

    // then: the thread is gone for LangGraph; the message is retracted and its content scrubbed everywhere
    expect(await saver.getTuple({ configurable: { thread_id: 'erase-me' } })).toBeUndefined()
    const { entries } = await store.transcript(ref?.sessionId as string)
    expect(entries.map((e) => [e.message.externalId, e.status])).toEqual([['p1', 'retracted']])
    expect(JSON.stringify(entries)).not.toContain('4111')
    const types: string[] = []
    for await (const e of store.events(ref?.sessionId as string)) types.push(e.type)
    expect(types).toEqual(['message_appended', 'messages_retracted', 'message_redacted'])
    await expectCleanAudit(store, ref?.sessionId as string)
  })

  it('stores a messages write as a reference once a child checkpoint holds its messages, read back the same; a copy otherwise', async () => {
    // given: c1, writes of three tasks on it (one the child keeps as is, one it changes, one by another saver)
    const saver = new TurnlogCheckpointSaver({ store })
    const other = new TurnlogCheckpointSaver({ store })
    const h1 = new HumanMessage({ id: 'w1', content: 'question' })
    const a1 = new AIMessage({ id: 'w2', content: 'answer' })
    const a2 = new AIMessage({ id: 'w3', content: 'draft' })
    const a3 = new AIMessage({ id: 'w4', content: 'from another process' })
    const a4 = new AIMessage({ id: 'w5', content: 'one message, not a list' })
    const c1 = await saver.put({ configurable: { thread_id: 'write-refs' } }, checkpoint([h1], 1), meta, { messages: 1 })
    await saver.putWrites(c1, [['messages', [a1]]], 'kept')
    await saver.putWrites(c1, [['messages', a2]], 'changed')
    await other.putWrites(c1, [['messages', [a3]]], 'elsewhere')
    await saver.putWrites(c1, [['messages', a4]], 'single')
    const before = (await saver.getTuple(c1))?.pendingWrites

    // when: the child checkpoint holds a1 as written, a2 revised, a3 and a4 as written
    const revised = new AIMessage({ id: 'w3', content: 'final' })
    const c2 = await saver.put(c1, checkpoint([h1, a1, revised, a3, a4], 2), meta, { messages: 2 })

    // then: only the write this saver made and the child holds unchanged became a reference; every write reads back the same
    const rows = await sql<{ task_id: string; type: string; ref: string }>`
      select task_id, type, convert_from(blob, 'UTF8') as ref from turnlog_langgraph.writes
       where thread_id = 'write-refs' and checkpoint_id = ${c1.configurable?.['checkpoint_id'] as string} order by task_id`.execute(
      store.db,
    )
    expect(rows.rows.map((r) => [r.task_id, r.type])).toEqual([
      ['changed', 'json'],
      ['elsewhere', 'json'],
      ['kept', 'turnlog'],
      ['single', 'turnlog'],
    ])
    // a reference names the list's ids, and says `single` only when the write was one message
    const refs = rows.rows.filter((r) => r.type === 'turnlog').map((r) => JSON.parse(r.ref) as Record<string, unknown>)
    expect(refs.map((r) => [r['ids'], r['single']])).toEqual([
      [['w2'], undefined],
      [['w5'], true],
    ])
    const after = (await saver.getTuple(c1))?.pendingWrites
    expect(after).toEqual(before)
    const kept = after?.find(([task]) => task === 'kept')?.[2] as BaseMessage[]
    expect(kept[0]).toBeInstanceOf(AIMessage)
    expect(kept.map((m) => [m.id, m.content])).toEqual([['w2', 'answer']])
    const single = after?.find(([task]) => task === 'single')?.[2] as BaseMessage
    expect(single).toBeInstanceOf(AIMessage)
    expect([single.id, single.content]).toEqual(['w5', 'one message, not a list'])
    expect(ids(await other.getTuple(c2))).toEqual(['w1', 'w2', 'w3', 'w4', 'w5'])
  })

  it('puts a child on its parent row as it is now when another saver rewrote that row (the remembered row is checked, the failed attempt leaves nothing)', async () => {
    // given: saver a puts c1 (it remembers where c1's messages are); saver b puts the same checkpoint again with other messages
    const a = new TurnlogCheckpointSaver({ store })
    const b = new TurnlogCheckpointSaver({ store })
    const [h1, h2, a1] = [
      new HumanMessage({ id: 'r1', content: 'one' }),
      new HumanMessage({ id: 'r2', content: 'two' }),
      new AIMessage({ id: 'r3', content: 'three' }),
    ]
    const first = checkpoint([h1], 1)
    const c1 = await a.put({ configurable: { thread_id: 'rewritten-parent' } }, first, meta, { messages: 1 })
    const before = await a.messagesRef(c1)
    await b.put({ configurable: { thread_id: 'rewritten-parent' } }, { ...first, channel_values: { messages: [h1, h2] } }, meta, {
      messages: 1,
    })
    const rewritten = await a.messagesRef(c1)

    // when: a continues c1
    const c2 = await a.put(c1, checkpoint([h1, h2, a1], 2), meta, { messages: 2 })

    // then: the child continues the parent's messages as the row says now; the session a remembered was left as it was
    expect(rewritten?.sessionId).not.toBe(before?.sessionId)
    expect(ids(await b.getTuple(c2))).toEqual(['r1', 'r2', 'r3'])
    expect((await a.messagesRef(c2))?.sessionId).toBe(rewritten?.sessionId)
    expect((await store.load(before?.sessionId as string)).messages.map((m) => m.externalId)).toEqual(['r1'])
    expect((await store.getSession(before?.sessionId as string)).version).toBe(before?.version)
    for (const ref of [before, rewritten]) await expectCleanAudit(store, ref?.sessionId as string)
  })

  it('reads checkpoints whose row does not name its messages (written before it could: a marker blob row), and continues them', async () => {
    // given: two checkpoints and a third that leaves the messages as they were, rewritten as the schema before 0002 stored them
    const saver = new TurnlogCheckpointSaver({ store })
    const [h1, a1] = [new HumanMessage({ id: 'l1', content: 'question' }), new AIMessage({ id: 'l2', content: 'answer' })]
    const c1 = await saver.put({ configurable: { thread_id: 'legacy' } }, checkpoint([h1], 1), meta, { messages: 1 })
    const c2 = await saver.put(c1, checkpoint([h1, a1], 2), meta, { messages: 2 })
    const c3 = await saver.put(c2, checkpoint([h1, a1], 2), meta, {})
    expect(ids(await saver.getTuple(c3))).toEqual(['l1', 'l2'])
    await sql`update turnlog_langgraph.checkpoints set messages_channel = null, messages_version = null,
                     checkpoint = (checkpoint::jsonb || jsonb_build_object('id', checkpoint_id))::json where thread_id = 'legacy'`.execute(
      store.db,
    )
    await sql`insert into turnlog_langgraph.blobs (thread_id, checkpoint_ns, channel, version, type, blob)
              values ('legacy', '', 'messages', '1', 'turnlog', null), ('legacy', '', 'messages', '2', 'turnlog', null)`.execute(store.db)

    // when: a saver without memory of them reads them and continues the last one
    const fresh = new TurnlogCheckpointSaver({ store })
    const read = await Promise.all([c1, c2, c3].map((c) => fresh.getTuple(c)))
    const c4 = await fresh.put(c3, checkpoint([h1, a1], 2), meta, {})

    // then
    expect(read.map(ids)).toEqual([['l1'], ['l1', 'l2'], ['l1', 'l2']])
    expect(read.map((t) => t?.checkpoint.id)).toEqual([c1, c2, c3].map((c) => c.configurable?.['checkpoint_id']))
    expect(ids(await fresh.getTuple(c4))).toEqual(['l1', 'l2'])
    expect(ids(await saver.getTuple({ configurable: { thread_id: 'legacy' } }))).toEqual(['l1', 'l2'])
  })

  it('refuses bad input with INVALID_INPUT, writing nothing', async () => {
    const saver = new TurnlogCheckpointSaver({ store })
    await expect(saver.put({ configurable: {} }, checkpoint([], 1), meta, {})).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task')).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect(() => new TurnlogCheckpointSaver({ store, deleteThread: 'drop' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    )
    expect(() => new TurnlogCheckpointSaver({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
  })

  it.each<[string, unknown, string]>([
    ['null', null, 'store'],
    ['undefined', undefined, 'store'],
    ['a number', 7, 'store'],
    ['a serde that is no serializer', { serde: { dumps: () => '' } }, 'serde'],
    ['a null serde', { serde: null }, 'serde'],
    ['a messagesChannel that is no string', { messagesChannel: 5 }, 'messagesChannel'],
    ['an empty messagesChannel', { messagesChannel: '' }, 'messagesChannel'],
    ['a tenantId that is no string', { tenantId: 42 }, 'tenantId'],
  ])('refuses a config with %s as INVALID_INPUT naming its field, before LangGraph reads it', (_, extra, field) => {
    // given: the store (when the case is an object) and the bad key
    const config = typeof extra === 'object' && extra !== null ? { store, ...extra } : extra
    // when / then: never a TypeError from LangGraph's own constructor
    expect(() => new TurnlogCheckpointSaver(config as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field }) }),
    )
  })
})
