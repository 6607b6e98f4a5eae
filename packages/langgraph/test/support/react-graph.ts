import { MessagesAnnotation, StateGraph, START, type BaseCheckpointSaver } from '@langchain/langgraph'
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt'
import { tool } from '@langchain/core/tools'
import { ScriptedChatModel } from './scripted-chat-model.js'

/** The `add` tool; `ran` counts its runs. */
export function addTool(ran: { count: number } = { count: 0 }) {
  return tool(
    async ({ a, b }: { a: number; b: number }) => {
      ran.count++
      return String(a + b)
    },
    {
      name: 'add',
      description: 'Adds two numbers.',
      schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    },
  )
}

/** A ReAct graph (agent → tools → agent ...) over `MessagesAnnotation` with the scripted model and the `add` tool. */
export function reactGraph(checkpointer: BaseCheckpointSaver, ran: { count: number } = { count: 0 }) {
  const model = new ScriptedChatModel({})
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode([addTool(ran)]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', '__end__'])
    .addEdge('tools', 'agent')
    .compile({ checkpointer })
}
