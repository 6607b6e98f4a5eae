/**
 * A scripted model implementing the Agents SDK's `Model` interface (as the SDK's own tests do with
 * their fake models): each call returns the next scripted output and records the input it was given.
 * @packageDocumentation
 */
import {
  Usage,
  type AgentInputItem,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents-core'

/** One scripted turn: the items the model "returns", or a function of the request that makes them. */
export type ScriptedTurn = readonly AgentOutputItem[] | ((request: ModelRequest) => readonly AgentOutputItem[])

/** A `Model` that plays a script, one turn per `getResponse` call. */
export class FakeModel implements Model {
  readonly #script: ScriptedTurn[]
  /** The input of every call, copied, in call order. */
  readonly inputs: AgentInputItem[][] = []

  constructor(script: readonly ScriptedTurn[]) {
    this.#script = [...script]
  }

  /** Turns not played yet. */
  get remaining(): number {
    return this.#script.length
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input
    this.inputs.push(structuredClone(input))
    const turn = this.#script.shift()
    if (turn === undefined) throw new Error('FakeModel: the script has no more turns')
    const output = typeof turn === 'function' ? turn(request) : turn
    return { output: structuredClone([...output]), usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }) }
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error('FakeModel: streaming is not scripted')
  }
}

/** An assistant message as a model returns it. */
export const modelMessage = (text: string, id: string): AgentOutputItem => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
})

/** A function call as a model returns it. */
export const modelFunctionCall = (name: string, args: object, callId: string): AgentOutputItem => ({
  type: 'function_call',
  id: `fc_${callId}`,
  callId,
  name,
  status: 'completed',
  arguments: JSON.stringify(args),
})
