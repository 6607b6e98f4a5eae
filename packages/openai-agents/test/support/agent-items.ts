/**
 * Agents SDK items for the tests, built as the SDK's own tests build them.
 * @packageDocumentation
 */
import type { AgentInputItem } from '@openai/agents-core'

/** A user message with one `input_text` part (the SDK tests' `createUserMessage`). */
export const userMessage = (text: string): AgentInputItem => ({ role: 'user', content: [{ type: 'input_text', text }] })

/** An assistant message. */
export const assistantMessage = (text: string): AgentInputItem => ({
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text }],
})

/** A function call. */
export const functionCall = (callId: string, args: string, id?: string): AgentInputItem => ({
  type: 'function_call',
  ...(id === undefined ? {} : { id }),
  callId,
  name: 'lookup',
  status: 'completed',
  arguments: args,
})

/** A function call's result. */
export const functionResult = (callId: string, output: string): AgentInputItem => ({
  type: 'function_call_result',
  callId,
  name: 'lookup',
  status: 'completed',
  output: { type: 'text', text: output },
})

/** A compaction marker. */
export const compactionItem = (content: string): AgentInputItem => ({ type: 'compaction', encrypted_content: content })
