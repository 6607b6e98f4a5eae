// What a user of @turnlog/langgraph writes: a ReAct graph (a scripted model, a real tool node) on the
// saver over embedded PGlite; the messages channel lands in turnlog with the same ids. Throws if not.
import { openStore } from 'turnlog'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import { MessagesAnnotation, StateGraph, START } from '@langchain/langgraph'
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt'
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'

const store = await openStore({ embedded: true })
const checkpointer = new TurnlogCheckpointSaver({ store })
await checkpointer.setup()

const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: 'add',
  description: 'Adds two numbers.',
  schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
})
/** Stands in for a chat model: calls `add` on a question, answers a tool result. */
function reply(messages: readonly BaseMessage[]): AIMessage {
  const last = messages[messages.length - 1]
  if (last instanceof ToolMessage) return new AIMessage(`The sum is ${String(last.content)}.`)
  return new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'add', args: { a: 2, b: 3 }, type: 'tool_call' }] })
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [reply(state.messages)] }))
  .addNode('tools', new ToolNode([add]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', '__end__'])
  .addEdge('tools', 'agent')
  .compile({ checkpointer })

const config = { configurable: { thread_id: 'sample' }, durability: 'sync' as const }
const { messages } = await graph.invoke({ messages: [new HumanMessage('What is 2 + 3?')] }, config)
const ref = await checkpointer.messagesRef(config)
if (ref === undefined) throw new Error('the thread has no turnlog session')
const loaded = await store.load(ref.sessionId)
const ids = messages.map((m) => m.id)
const stored = loaded.messages.map((m) => m.externalId)
if (JSON.stringify(ids) !== JSON.stringify(stored))
  throw new Error(`turnlog holds ${JSON.stringify(stored)}, the graph ${JSON.stringify(ids)}`)
if (messages[messages.length - 1]?.content !== 'The sum is 5.') throw new Error('unexpected answer')
const resumed = await checkpointer.getTuple(config)
if ((resumed?.checkpoint.channel_values['messages'] as BaseMessage[] | undefined)?.length !== 4) throw new Error('getTuple lost messages')
await store.close()
console.log(JSON.stringify({ ok: true, messages: stored.length, session: ref.sessionId, version: ref.version }))
