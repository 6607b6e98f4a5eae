/**
 * Attacks `TurnlogCheckpointSaver` with graphs a demanding user builds, each run side by side with
 * LangGraph's own `MemorySaver` (the reference for what a checkpointer must give back):
 *
 * - a `messages` channel with a plain concatenating reducer (not `messagesStateReducer`), where one
 *   LangChain id can appear twice in the list (a node that returns the same message object again);
 * - message content with NUL characters, lone surrogates and other odd but valid strings;
 * - the state history (`getStateHistory`) and every checkpoint's messages after removals and a re-add.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { RunnableConfig } from '@langchain/core/runnables'
import { AIMessage, HumanMessage, RemoveMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages'
import {
  Annotation,
  MemorySaver,
  MessagesAnnotation,
  REMOVE_ALL_MESSAGES,
  StateGraph,
  START,
  END,
  type BaseCheckpointSaver,
} from '@langchain/langgraph'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import { expectCleanAudit } from './support/expect-clean-audit.js'

const ConcatState = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
})

/** A graph whose node appends the same message (same id) on every run. */
function concatGraph(checkpointer: BaseCheckpointSaver) {
  const echo = new AIMessage({ id: 'echo', content: 'echo' })
  return new StateGraph(ConcatState)
    .addNode('echo', () => ({ messages: [echo] }))
    .addEdge(START, 'echo')
    .addEdge('echo', END)
    .compile({ checkpointer })
}

const view = (messages: readonly BaseMessage[]): unknown[] => messages.map((m) => [m.getType(), m.id, m.content])

async function history(
  graph: { getStateHistory: (c: RunnableConfig) => AsyncIterable<{ values: unknown }> },
  config: RunnableConfig,
): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const s of graph.getStateHistory(config)) out.push(view((s.values as { messages: BaseMessage[] }).messages))
  return out
}

describe.each(STORE_KINDS)('TurnlogCheckpointSaver against MemorySaver (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('a concatenating messages channel that holds one LangChain id twice reads back as MemorySaver does', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const memory = new MemorySaver()
    const graphs = [concatGraph(saver), concatGraph(memory)] as const
    const config = { configurable: { thread_id: `t-${randomUUID()}` } }
    // when: two runs, each adds a question and the same 'echo' message
    const results = []
    for (const graph of graphs) {
      await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config)
      results.push(await graph.invoke({ messages: [new HumanMessage({ id: 'q2', content: 'two' })] }, config))
    }
    // then
    const [ours, theirs] = results as [{ messages: BaseMessage[] }, { messages: BaseMessage[] }]
    expect(view(theirs.messages)).toEqual([
      ['human', 'q1', 'one'],
      ['ai', 'echo', 'echo'],
      ['human', 'q2', 'two'],
      ['ai', 'echo', 'echo'],
    ])
    expect(view(ours.messages)).toEqual(view(theirs.messages))
    expect(view((await graphs[0].getState(config)).values.messages)).toEqual(view((await graphs[1].getState(config)).values.messages))
    expect(await history(graphs[0], config)).toEqual(await history(graphs[1], config))
    // the list holding 'echo' twice is a blob (README), not mirrored: the session holds the list up to it
    const ref = await saver.messagesRef(config)
    expect(ref).toBeDefined()
    expect((await store.load(ref!.sessionId)).messages.map((m) => m.externalId)).toEqual(['q1', 'echo', 'q2'])
  })

  it('NUL characters, lone surrogates and long strings in message content live in turnlog and come back exactly', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const odd = ['nul \u0000 inside', 'lone \ud800 high', 'lone \udc00 low', '', '🦜 \u2028 \u2029', 'x'.repeat(100_000)]
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('reply', () => ({ messages: [new AIMessage({ id: 'r', content: odd.join('|') })] }))
      .addEdge(START, 'reply')
      .addEdge('reply', END)
      .compile({ checkpointer: saver })
    const config = { configurable: { thread_id: `t-${randomUUID()}` } }
    const input = odd.map((content, i) => new HumanMessage({ id: `q${i}`, content }))
    // when
    await graph.invoke({ messages: input }, config)
    // then: in turnlog, exactly
    const ref = await saver.messagesRef(config)
    expect(ref).toBeDefined()
    const stored = await store.load(ref!.sessionId)
    expect(stored.messages.map((m) => m.externalId)).toEqual([...input.map((m) => m.id), 'r'])
    expect(view((await graph.getState(config)).values.messages)).toEqual([...view(input), ['ai', 'r', odd.join('|')]])
  })

  it('ids turnlog cannot store (NUL, lone surrogates, over 4096 characters) keep the channel a blob, read back as MemorySaver does', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const memory = new MemorySaver()
    const odd = ['nul \u0000 inside', 'lone \ud800 high', 'lone \udc00 low', '', '🦜 \u2028 \u2029', 'x'.repeat(100_000)]
    const make = (checkpointer: BaseCheckpointSaver) =>
      new StateGraph(MessagesAnnotation)
        .addNode('reply', (state) => ({ messages: [new AIMessage({ id: `r-${state.messages.length}`, content: odd.join('|') })] }))
        .addEdge(START, 'reply')
        .addEdge('reply', END)
        .compile({ checkpointer })
    const config = { configurable: { thread_id: `t-${randomUUID()}` } }
    // when
    const out = []
    for (const graph of [make(saver), make(memory)]) {
      await graph.invoke(
        { messages: odd.map((content, i) => new HumanMessage({ id: i === 0 ? 'i'.repeat(4097) : `id \u0000 ${i} \ud800`, content })) },
        config,
      )
      out.push((await graph.getState(config)).values.messages as BaseMessage[])
    }
    // then
    const [ours, theirs] = out as [BaseMessage[], BaseMessage[]]
    expect(view(ours)).toEqual(view(theirs))
    expect(view(ours).length).toBe(odd.length + 1)
  })

  it('a removed id added again, then the history: every checkpoint reads as MemorySaver has it', async () => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const memory = new MemorySaver()
    const make = (checkpointer: BaseCheckpointSaver) =>
      new StateGraph(MessagesAnnotation)
        .addNode('noop', () => ({}))
        .addEdge(START, 'noop')
        .addEdge('noop', END)
        .compile({ checkpointer })
    const config = { configurable: { thread_id: `t-${randomUUID()}` } }
    const histories = []
    // when
    for (const graph of [make(saver), make(memory)]) {
      await graph.invoke({ messages: [new HumanMessage({ id: 'a', content: 'A' }), new AIMessage({ id: 'b', content: 'B' })] }, config)
      await graph.invoke({ messages: [new RemoveMessage({ id: 'a' })] }, config)
      await graph.invoke({ messages: [new HumanMessage({ id: 'a', content: 'A again' })] }, config)
      await graph.invoke({ messages: [new RemoveMessage({ id: 'a' }), new RemoveMessage({ id: 'b' })] }, config)
      await graph.invoke({ messages: [new HumanMessage({ id: 'a', content: 'A' }), new AIMessage({ id: 'b', content: 'B2' })] }, config)
      histories.push(await history(graph, config))
    }
    // then
    expect(histories[0]).toEqual(histories[1])
  })

  it.each([
    [
      'a message removed and added again in one update (it moves to the end)',
      [new RemoveMessage({ id: 'a' }), new HumanMessage({ id: 'a', content: 'A' })],
    ],
    [
      'every message removed and added again in another order',
      [
        new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
        new AIMessage({ id: 'b', content: 'B' }),
        new HumanMessage({ id: 'a', content: 'A' }),
      ],
    ],
    [
      'every message removed and added again, one changed',
      [
        new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
        new HumanMessage({ id: 'a', content: 'A2' }),
        new AIMessage({ id: 'b', content: 'B' }),
      ],
    ],
  ])('%s: reads back as MemorySaver has it, history included', async (_name, update) => {
    // given
    const saver = new TurnlogCheckpointSaver({ store })
    const memory = new MemorySaver()
    const make = (checkpointer: BaseCheckpointSaver) =>
      new StateGraph(MessagesAnnotation)
        .addNode('noop', () => ({}))
        .addEdge(START, 'noop')
        .addEdge('noop', END)
        .compile({ checkpointer })
    const config = { configurable: { thread_id: `t-${randomUUID()}` } }
    const out = []
    // when
    for (const graph of [make(saver), make(memory)]) {
      await graph.invoke({ messages: [new HumanMessage({ id: 'a', content: 'A' }), new AIMessage({ id: 'b', content: 'B' })] }, config)
      await graph.invoke({ messages: update }, config)
      out.push({ state: view((await graph.getState(config)).values.messages), history: await history(graph, config) })
    }
    // then
    expect(out[0]).toEqual(out[1])
  })

  it.each([
    ['one saver', false],
    ['a new saver each round (another process)', true],
  ])(
    'a summarizing node (REMOVE_ALL_MESSAGES, a new summary, a pinned first question, the tail) round after round, %s: as MemorySaver, audit clean',
    async (_name, fresh) => {
      // given: LangGraph's summarization pattern, the summary placed before the messages it keeps; the
      // first question kept after it every round, so its id moves again and again
      const savers: TurnlogCheckpointSaver[] = []
      const memory = new MemorySaver()
      const make = (checkpointer: BaseCheckpointSaver) =>
        new StateGraph(MessagesAnnotation)
          .addNode('reply', (state) => ({ messages: [new AIMessage({ id: `r${state.messages.length}`, content: 'ok' })] }))
          .addNode('summarize', (state) => {
            if (state.messages.length <= 4) return {}
            const pinned = state.messages.filter((m) => m.id === 'q0')
            const keep = state.messages.slice(-2)
            const summary = new SystemMessage({
              id: `s${state.messages.length}-${keep[0]?.id ?? ''}`,
              content: `summary of ${state.messages.length}`,
            })
            return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), summary, ...pinned, ...keep] }
          })
          .addEdge(START, 'reply')
          .addEdge('reply', 'summarize')
          .addEdge('summarize', END)
          .compile({ checkpointer })
      const ours = () => {
        if (fresh || savers.length === 0) savers.push(new TurnlogCheckpointSaver({ store }))
        return make(savers.at(-1) as TurnlogCheckpointSaver)
      }
      const config = { configurable: { thread_id: `t-${randomUUID()}` } }
      const out = []
      // when
      for (const graph of [ours, () => make(memory)]) {
        for (let round = 0; round < 6; round++)
          await graph().invoke({ messages: [new HumanMessage({ id: `q${round}`, content: `question ${round}` })] }, config)
        out.push({ state: view((await graph().getState(config)).values.messages), history: await history(graph(), config) })
      }
      // then
      expect(out[0]).toEqual(out[1])
      expect((out[1]?.state as unknown[][]).map((m) => m[1])).toContain('q0')
      const ref = await (savers.at(-1) as TurnlogCheckpointSaver).messagesRef(config)
      expect((await store.load(ref!.sessionId)).messages.map((m) => m.externalId)).toEqual(
        (out[1]?.state as [string, string, string][]).map(([, id]) => id),
      )
      await expectCleanAudit(store, ref!.sessionId)
    },
  )
})
