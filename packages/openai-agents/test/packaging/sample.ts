// A user's program: an OpenAI Agents SDK agent with a tool, its conversation kept by turnlog in embedded
// PGlite. The model is a tiny scripted `Model` (no network, no API key): it calls the tool, then answers.
import { Agent, Usage, run, setTracingDisabled, tool } from '@openai/agents-core'
import type { AgentInputItem, AgentOutputItem, Model, ModelRequest, ModelResponse, StreamEvent } from '@openai/agents-core'
import { audit, openStore } from 'turnlog'
import { TurnlogSession } from '@turnlog/openai-agents'

setTracingDisabled(true)

class ScriptedModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [] : request.input
    const result = [...input].reverse().find((item: AgentInputItem) => item.type === 'function_call_result')
    const output: AgentOutputItem[] =
      result === undefined
        ? [{ type: 'function_call', callId: 'call_1', name: 'get_weather', status: 'completed', arguments: '{"city":"Paris"}' }]
        : [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: `Forecast: ${JSON.stringify(result.output)}` }],
            },
          ]
    return { output, usage: new Usage() }
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('not streamed in this sample')
  }
}

const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
  execute: async (input: unknown) => `sunny in ${(input as { city: string }).city}`,
})

async function main(): Promise<void> {
  const store = await openStore({ embedded: true })
  try {
    const agent = new Agent({ name: 'weather', instructions: 'Answer with the weather.', model: new ScriptedModel(), tools: [getWeather] })
    const session = new TurnlogSession({ store, sessionId: 'user-42' })

    const result = await run(agent, 'What is the weather in Paris?', { session })
    const items = await session.getItems()
    if (typeof result.finalOutput !== 'string' || !result.finalOutput.includes('sunny in Paris'))
      throw new Error(`unexpected answer ${String(result.finalOutput)}`)
    const kinds = items.map((item) => item.type ?? 'message')
    if (kinds.join(',') !== 'message,function_call,function_call_result,message') throw new Error(`unexpected history ${kinds.join(',')}`)

    // the same conversation, opened again by its key, in the log as turnlog messages
    const reopened = new TurnlogSession({ store, sessionId: 'user-42' })
    const loaded = await store.load(reopened.turnlogSessionId)
    if (loaded.messages.length !== 4 || loaded.messages.some((m) => m.format !== 'openai-agents'))
      throw new Error('the log does not hold the 4 items')

    // popItem is a rewind: the item leaves the history, the log keeps it
    const popped = await reopened.popItem()
    if (popped?.type !== 'message') throw new Error('popItem did not return the answer')
    const transcript = await store.transcript(reopened.turnlogSessionId)
    const retracted = transcript.entries.filter((entry) => entry.status === 'retracted').length
    if (retracted !== 1 || (await reopened.getItems()).length !== 3) throw new Error('popItem was not a retraction')

    const report = await audit(store, reopened.turnlogSessionId)
    // the popped answer leaves the tool result last: not a finding; any finding is
    if (report.findings.length !== 0) throw new Error(`audit: ${JSON.stringify(report.findings)}`)
    console.log(JSON.stringify({ ok: true, answer: result.finalOutput, stored: loaded.messages.length, retracted, findings: 0 }))
  } finally {
    await store.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
