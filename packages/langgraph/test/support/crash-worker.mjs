// A process running the ReAct graph of react-graph.ts on TurnlogCheckpointSaver (the built package), for
// crash tests: it is killed with SIGKILL at a chosen point and another process resumes the thread.
// Config (JSON in TURNLOG_LANGGRAPH_WORKER): { dist, connectionString | dataDir, threadId, mode }, mode:
// - 'crash-in-tool': asks a question; the tool prints IN_TOOL and hangs (after `put`, before `putWrites`)
// - 'crash-after-writes': asks a question; after the tool's `putWrites` the process prints WROTE and hangs
//   (after `putWrites`, before the next `put`)
// - 'resume': continues the thread (`invoke(null)`) and prints DONE with the final message ids
// Every tool run prints TOOL_RAN.
import { AIMessage, ToolMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { MessagesAnnotation, StateGraph, START } from '@langchain/langgraph'
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt'
import { HumanMessage } from '@langchain/core/messages'

const cfg = JSON.parse(process.env.TURNLOG_LANGGRAPH_WORKER)
const { openStore } = await import(cfg.postgresDist)
const { TurnlogCheckpointSaver } = await import(cfg.dist)
const out = (line) => process.stdout.write(line + '\n')
const hang = () => new Promise(() => setInterval(() => {}, 1000))

const store = await openStore(cfg.connectionString ? { connectionString: cfg.connectionString } : { embedded: true, dataDir: cfg.dataDir })

class CrashingSaver extends TurnlogCheckpointSaver {
  async putWrites(config, writes, taskId) {
    await super.putWrites(config, writes, taskId)
    if (cfg.mode === 'crash-after-writes' && writes.some(([, value]) => [value].flat().some((v) => v instanceof ToolMessage))) {
      out('WROTE')
      await hang()
    }
  }
}

/** The scripted model of scripted-chat-model.ts. */
function scriptedReply(messages) {
  const last = messages[messages.length - 1]
  if (last instanceof ToolMessage) return new AIMessage({ content: `The sum is ${String(last.content)}.` })
  const [a = 0, b = 0] = (String(last?.content ?? '').match(/-?\d+/g) ?? []).map(Number)
  return new AIMessage({
    content: '',
    tool_calls: [{ id: `call_${messages.length}_${a}_${b}`, name: 'add', args: { a, b }, type: 'tool_call' }],
  })
}

const add = tool(
  async ({ a, b }) => {
    out('TOOL_RAN')
    if (cfg.mode === 'crash-in-tool') {
      out('IN_TOOL')
      await hang()
    }
    return String(a + b)
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
)

const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (state) => ({ messages: [scriptedReply(state.messages)] }))
  .addNode('tools', new ToolNode([add]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', '__end__'])
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new CrashingSaver({ store }) })

// durability 'sync': each checkpoint is written before the next step runs (the default, 'async', may
// still be writing the checkpoint holding the tool call when the tool runs)
const config = { configurable: { thread_id: cfg.threadId }, durability: 'sync' }
const input = cfg.mode === 'resume' ? null : { messages: [new HumanMessage('What is 2 + 3?')] }
const result = await graph.invoke(input, config)
out('DONE ' + JSON.stringify(result.messages.map((m) => m.id)))
await store.close()
