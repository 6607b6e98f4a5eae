import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { REMOVE_ALL_MESSAGES } from '@langchain/langgraph'
import type { StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { REMOVE_ALL_REASON, TurnlogCheckpointSaver, decodeLangChainMessage, type MessagesRef } from '@turnlog/langgraph'
import { reactGraph } from './support/react-graph.js'
import { expectCleanAudit } from './support/expect-clean-audit.js'

// A ReAct graph (scripted model, a real tool node) on the saver: the `messages` channel is mirrored into
// turnlog with the same ids, one event per change; every checkpoint's messages are `load({ at })` of its
// session version; RemoveMessage and REMOVE_ALL_MESSAGES are retractions; a past checkpoint continued is
// a fork; deleteThread retracts; the audit is clean. On Postgres and PGlite.

const ids = (messages: readonly BaseMessage[]): string[] => messages.map((m) => m.id as string)
const events = async (store: PostgresStore, session: string): Promise<StoredEvent[]> => {
  const all: StoredEvent[] = []
  for await (const e of store.events(session)) all.push(e)
  return all
}
/** A message as plain data, for comparing a revived message with the graph's own. */
const plain = (m: BaseMessage): unknown => JSON.parse(JSON.stringify(m.toDict()))

describe.each(['postgres', 'pglite'] as const)('a ReAct graph on the saver (%s)', (flavor) => {
  let opened: OpenedTestStore | undefined
  let store: PostgresStore
  let saver: TurnlogCheckpointSaver
  let graph: ReturnType<typeof reactGraph>
  const ran = { count: 0 }
  const thread = { configurable: { thread_id: `react-${flavor}` } }

  beforeAll(async () => {
    opened = await openTestStore(flavor)
    store = opened.store
    saver = new TurnlogCheckpointSaver({ store })
    graph = reactGraph(saver, ran)
  })
  afterAll(async () => {
    await opened?.close()
  })

  const ref = async (config = thread): Promise<MessagesRef> => {
    const found = await saver.messagesRef(config)
    if (found === undefined) throw new Error('no turnlog session for the checkpoint')
    return found
  }
  const liveOf = async (session: string): Promise<BaseMessage[]> =>
    Promise.all((await store.load(session)).messages.map((m) => decodeLangChainMessage(saver.serde, m)))
  const expectClean = (session: string): Promise<void> => expectCleanAudit(store, session)

  it('mirrors the messages channel into turnlog with the same ids, one append per message', async () => {
    // given / when: a question that needs the tool
    const result = await graph.invoke({ messages: [new HumanMessage('What is 2 + 3?')] }, thread)

    // then: human, tool call, tool result, answer
    const messages = result.messages
    expect(messages.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'ai'])
    expect(messages[3]?.content).toBe('The sum is 5.')
    expect(ran.count).toBe(1)
    const { sessionId, version } = await ref()
    const loaded = await store.load(sessionId)
    expect(loaded.version).toBe(version)
    expect(loaded.messages.map((m) => m.externalId)).toEqual(ids(messages))
    expect(loaded.messages.every((m) => m.format === 'json')).toBe(true)
    expect((await liveOf(sessionId)).map(plain)).toEqual(messages.map(plain))
    const appended = (await events(store, sessionId)).filter((e) => e.type === 'message_appended')
    expect(appended.map((e) => e.messageId)).toEqual(loaded.messages.map((m) => m.id))

    // a second turn continues the same session
    const second = await graph.invoke({ messages: [new HumanMessage('And 10 + 20?')] }, thread)
    expect(second.messages).toHaveLength(8)
    expect((await ref()).sessionId).toBe(sessionId)
    expect((await store.load(sessionId)).messages.map((m) => m.externalId)).toEqual(ids(second.messages))
    await expectClean(sessionId)
  })

  it('gives every past checkpoint the messages of its session version (getTuple equals load({ at }))', async () => {
    let checked = 0
    for await (const snapshot of graph.getStateHistory(thread)) {
      const tuple = await saver.getTuple(snapshot.config)
      const at = await saver.messagesRef(snapshot.config)
      const messages = (snapshot.values as { messages?: BaseMessage[] }).messages ?? []
      if (at === undefined) {
        expect(messages).toEqual([])
        continue
      }
      const loaded = await store.load(at.sessionId, { at: at.version })
      const revived = await Promise.all(loaded.messages.map((m) => decodeLangChainMessage(saver.serde, m)))
      expect(revived.map(plain)).toEqual(messages.map(plain))
      expect(((tuple?.checkpoint.channel_values['messages'] as BaseMessage[]) ?? []).map(plain)).toEqual(messages.map(plain))
      checked++
    }
    expect(checked).toBeGreaterThanOrEqual(8)
  })

  it('forks the turnlog session when a past checkpoint is continued (updateState on an old config)', async () => {
    // given: the checkpoint right after the first tool result
    const { sessionId } = await ref()
    let past: Awaited<ReturnType<typeof graph.getState>> | undefined
    for await (const snapshot of graph.getStateHistory(thread)) {
      const messages = (snapshot.values as { messages?: BaseMessage[] }).messages ?? []
      if (messages.length === 3 && messages[2] instanceof ToolMessage && messages[2].content === '5') past = snapshot
    }
    if (past === undefined) throw new Error('no checkpoint after the first tool result')
    const pastMessages = (past.values as { messages: BaseMessage[] }).messages
    const headBefore = await store.load(sessionId)

    // when: that checkpoint is continued with another answer
    const branched = await graph.updateState(past.config, { messages: [new AIMessage('Branch: five.')] }, 'agent')

    // then: a fork of the thread's session holds the past messages (same ids) and the new one
    const branch = await ref(branched as typeof thread)
    expect(branch.sessionId).not.toBe(sessionId)
    const info = await store.getSession(branch.sessionId)
    expect(info.parent?.sessionId).toBe(sessionId)
    const forked = await store.load(branch.sessionId)
    expect(forked.messages.map((m) => m.externalId)).toEqual([...ids(pastMessages), expect.any(String)])
    expect((await liveOf(branch.sessionId)).at(-1)?.content).toBe('Branch: five.')
    // the original session did not change
    expect((await store.load(sessionId)).version).toBe(headBefore.version)
    // the branch is the thread's latest state, and goes on in the fork
    const state = await graph.getState(thread)
    expect(ids(state.values.messages as BaseMessage[])).toEqual(forked.messages.map((m) => m.externalId))
    const more = await graph.invoke({ messages: [new HumanMessage('7 + 8?')] }, thread)
    expect((await ref()).sessionId).toBe(branch.sessionId)
    expect((await store.load(branch.sessionId)).messages.map((m) => m.externalId)).toEqual(ids(more.messages))
    await expectClean(branch.sessionId)
    await expectClean(sessionId)
  })

  it('records a message replaced by id as a revision, RemoveMessage as a retraction, REMOVE_ALL_MESSAGES as a rewind', async () => {
    // given
    const { sessionId } = await ref()
    const before = (await graph.getState(thread)).values.messages as BaseMessage[]
    const answer = before[3] as AIMessage
    const toolResult = before[6] as ToolMessage

    // when: the first answer is replaced by id
    await graph.updateState(thread, { messages: [new AIMessage({ id: answer.id as string, content: 'Five.' })] })
    // then: one revision of that message, same turnlog id
    const revised = (await events(store, sessionId)).filter((e) => e.type === 'message_revised')
    const answerId = (await store.load(sessionId)).messages.find((m) => m.externalId === answer.id)?.id
    expect(revised.map((e) => e.messageId)).toEqual([answerId])
    expect(((await liveOf(sessionId))[3] as AIMessage).content).toBe('Five.')

    // when: a RemoveMessage
    await graph.updateState(thread, { messages: [new RemoveMessage({ id: toolResult.id as string })] })
    // then: a retraction naming it
    const live = await store.load(sessionId)
    expect(live.messages.map((m) => m.externalId)).toEqual(ids(before).filter((id) => id !== toolResult.id))
    const retracted = (await events(store, sessionId)).filter((e) => e.type === 'messages_retracted')
    expect(retracted).toHaveLength(1)
    const toolTurnlogId = (await store.transcript(sessionId)).entries.find((e) => e.message.externalId === toolResult.id)?.message.id
    expect((retracted[0]?.data as unknown as { ids: string[] }).ids).toEqual([toolTurnlogId])

    // when: every message is removed and a new one added
    await graph.updateState(thread, { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), new HumanMessage('Start over: 1 + 1?')] })
    // then: a rewind from the first message (reason REMOVE_ALL_REASON), then the new message
    const after = await store.load(sessionId)
    expect(after.messages.map((m) => (m.payload as unknown as { kwargs: { content: string } }).kwargs.content)).toEqual([
      'Start over: 1 + 1?',
    ])
    const rewinds = (await events(store, sessionId)).filter((e) => e.type === 'messages_retracted')
    expect(rewinds).toHaveLength(2)
    const rewind = rewinds[1]?.data as unknown as { ids: string[]; reason?: string; sync?: boolean }
    expect(rewind.reason).toBe(REMOVE_ALL_REASON)
    expect(rewind.sync).toBeUndefined()
    expect(rewind.ids).toHaveLength(7)
    // the graph goes on from there
    const resumed = await graph.invoke(null, thread)
    expect(resumed.messages.map((m) => m.getType())).toEqual(['human'])
    const next = await graph.invoke({ messages: [new HumanMessage('2 + 2?')] }, thread)
    expect((await store.load(sessionId)).messages.map((m) => m.externalId)).toEqual(ids(next.messages))
    await expectClean(sessionId)

    // a checkpoint from before the REMOVE_ALL_MESSAGES continued: none of its messages is live any more,
    // so nothing can be inherited by a turnlog fork; the branch is a new session that names its origin
    let old: Awaited<ReturnType<typeof graph.getState>> | undefined
    for await (const snapshot of graph.getStateHistory(thread)) {
      if (ids((snapshot.values as { messages?: BaseMessage[] }).messages ?? []).includes(answer.id as string)) old ??= snapshot
    }
    if (old === undefined) throw new Error('no checkpoint before the removal')
    const oldRef = await ref(old.config as typeof thread)
    const branched = await ref((await graph.updateState(old.config, { messages: [new HumanMessage('9 + 9?')] })) as typeof thread)
    expect(branched.sessionId).not.toBe(sessionId)
    expect((await store.getSession(branched.sessionId)).metadata).toEqual({
      langgraph: { threadId: thread.configurable.thread_id, branchOf: { sessionId: oldRef.sessionId, version: oldRef.version } },
    })
    const oldMessages = (old.values as { messages: BaseMessage[] }).messages
    expect((await store.load(branched.sessionId)).messages.map((m) => m.externalId)).toEqual([...ids(oldMessages), expect.any(String)])
    await expectClean(branched.sessionId)
  })

  it('deleteThread retracts every session of the thread and keeps the audit trail', async () => {
    // given: every session the thread's checkpoints name
    const sessions = new Set<string>()
    for await (const snapshot of graph.getStateHistory(thread)) {
      const at = await saver.messagesRef(snapshot.config)
      if (at !== undefined) sessions.add(at.sessionId)
    }
    expect(sessions.size).toBeGreaterThanOrEqual(3)
    const entries = new Map<string, number>()
    const liveBefore = new Map<string, number>()
    for (const session of sessions) {
      entries.set(session, (await store.transcript(session)).entries.length)
      liveBefore.set(session, (await store.load(session)).messages.length)
    }

    // when
    await saver.deleteThread(thread.configurable.thread_id)

    // then: LangGraph sees no thread; turnlog keeps the history, retracted
    expect(await saver.getTuple(thread)).toBeUndefined()
    for (const session of sessions) {
      expect((await store.load(session)).messages).toEqual([])
      expect((await store.transcript(session)).entries).toHaveLength(entries.get(session) ?? -1)
      if ((liveBefore.get(session) ?? 0) > 0) {
        const last = (await events(store, session)).at(-1)
        expect(last?.type).toBe('messages_retracted')
        expect((last?.data as { reason?: string }).reason).toBe('langgraph: deleteThread')
      }
      await expectClean(session)
    }
    // the same thread id starts afresh in a new session
    const again = await graph.invoke({ messages: [new HumanMessage('3 + 4?')] }, thread)
    expect(again.messages).toHaveLength(4)
    const fresh = await ref()
    expect([...sessions]).not.toContain(fresh.sessionId)
    await expectClean(fresh.sessionId)
  })
})
