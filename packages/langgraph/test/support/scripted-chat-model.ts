import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'

/**
 * A tiny fake chat model for a ReAct loop: to a question it answers with a call of the `add` tool on
 * the two numbers in it; to a tool result it answers with the result in words. Deterministic, so a
 * resumed run makes the same replies.
 */
export class ScriptedChatModel extends BaseChatModel {
  calls = 0

  _llmType(): string {
    return 'scripted'
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls++
    return { generations: [{ text: '', message: scriptedReply(messages) }] }
  }
}

/** The scripted reply to a conversation (see {@link ScriptedChatModel}). */
export function scriptedReply(messages: readonly BaseMessage[]): AIMessage {
  const last = messages[messages.length - 1]
  if (last instanceof ToolMessage) return new AIMessage({ content: `The sum is ${String(last.content)}.` })
  const text = typeof last?.content === 'string' ? last.content : ''
  const [a = 0, b = 0] = (text.match(/-?\d+/g) ?? []).map(Number)
  return new AIMessage({
    content: '',
    tool_calls: [{ id: `call_${messages.length}_${a}_${b}`, name: 'add', args: { a, b }, type: 'tool_call' }],
  })
}
