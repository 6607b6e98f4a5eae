import { createMessage, type Message } from '@turnlog/core'

/** An assistant message calling tools with the given ids (`id` by default, `call_id` on request). */
export function assistantCalling(ids: readonly string[], key: 'id' | 'call_id' = 'id'): Message {
  return createMessage({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ [key]: id, type: 'function', function: { name: 'read_file', arguments: `{"n":"${id}"}` } })),
  })
}

/** A tool result for `id` (`tool_call_id` by default, `call_id` on request). */
export function toolResult(id: string, content = `result of ${id}`, key: 'tool_call_id' | 'call_id' = 'tool_call_id'): Message {
  return createMessage({ role: 'tool', [key]: id, content })
}

export function user(content: string, options: { ephemeral?: boolean } = {}): Message {
  return createMessage({ role: 'user', content }, options)
}

export function assistant(content: string): Message {
  return createMessage({ role: 'assistant', content })
}
