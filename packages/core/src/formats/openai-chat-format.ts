import { ChatMessageSchema, type ChatMessage, type ChatRole } from '../chat-message.js'
import { copyPayload } from './item-format-kit.js'
import type { MessageFormat } from './message-format.js'

/** The name of the OpenAI Chat Completions format (the default for a payload with a chat `role`). */
export const OPENAI_CHAT_FORMAT = 'openai-chat'

/** A text part as sent (`ChatCompletionContentPartText`). */
export interface OpenAIChatWireTextPart {
  type: 'text'
  text: string
  [key: string]: unknown
}

/** A refusal part of an assistant message as sent (`ChatCompletionContentPartRefusal`). */
export interface OpenAIChatWireRefusalPart {
  type: 'refusal'
  refusal: string
  [key: string]: unknown
}

/** A user content part as sent: text, image, audio or file (`ChatCompletionContentPart`). */
export type OpenAIChatWireUserPart =
  | OpenAIChatWireTextPart
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' | 'original' }; [key: string]: unknown }
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' }; [key: string]: unknown }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string }; [key: string]: unknown }

/** A tool call as sent: a function call or a custom tool call (`ChatCompletionMessageToolCall`). */
export type OpenAIChatWireToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string }; [key: string]: unknown }
  | { id: string; type: 'custom'; custom: { name: string; input: string }; [key: string]: unknown }

/**
 * A message of the `openai-chat` format as sent to the provider: a mutable copy shaped like the
 * `openai` SDK's `ChatCompletionMessageParam` (a `WireMessage[]` is assignable to
 * `ChatCompletionMessageParam[]`). The type names the SDK's shapes; whatever else a payload carries
 * (provider extras such as `reasoning_content`, part types the SDK does not know, `call_id` where a
 * provider uses it) is sent as stored and readable through the index signatures.
 */
export type OpenAIChatWireMessage =
  | { role: 'system'; content: string | OpenAIChatWireTextPart[]; name?: string; [key: string]: unknown }
  | { role: 'developer'; content: string | OpenAIChatWireTextPart[]; name?: string; [key: string]: unknown }
  | { role: 'user'; content: string | OpenAIChatWireUserPart[]; name?: string; [key: string]: unknown }
  | {
      role: 'assistant'
      content?: string | (OpenAIChatWireTextPart | OpenAIChatWireRefusalPart)[] | null
      tool_calls?: OpenAIChatWireToolCall[]
      name?: string
      refusal?: string | null
      [key: string]: unknown
    }
  | { role: 'tool'; content: string | OpenAIChatWireTextPart[]; tool_call_id: string; [key: string]: unknown }

/**
 * What `createMessage` accepts for the `openai-chat` format at compile time: a {@link ChatMessage}
 * literal (unknown fields allowed), or any value with a chat role, such as the `openai` SDK's
 * `ChatCompletionMessage` (a response's `choices[0].message`) or a `ChatCompletionMessageParam` other
 * than the deprecated `function` role. The payload is validated at run time either way.
 */
export type OpenAIChatInput = ChatMessage | { readonly role: ChatRole }

function callIds(payload: ChatMessage): string[] {
  if (payload.role !== 'assistant' || !Array.isArray(payload.tool_calls)) return []
  const ids: string[] = []
  for (const call of payload.tool_calls) {
    if (typeof call !== 'object' || call === null) continue
    const id = call.id ?? call.call_id
    if (typeof id === 'string') ids.push(id)
  }
  return ids
}

function resultIds(payload: ChatMessage): string[] {
  if (payload.role !== 'tool') return []
  const id = payload.tool_call_id ?? payload.call_id
  return typeof id === 'string' ? [id] : []
}

/**
 * What is sent of a chat payload: a fresh copy, without a `tool_calls` that is `null` or an empty
 * list (what OpenAI-compatible servers such as vLLM and a Python `model_dump()` write for a reply
 * without calls; the `openai` SDK's request type has no place for the null, and OpenAI refuses the
 * empty list with HTTP 400 `empty_array`). Every other field, other nulls included, is sent as stored.
 */
function wireCopy(payload: ChatMessage): { [key: string]: unknown } {
  const copy = copyPayload(payload) as { [key: string]: unknown }
  const calls = copy['tool_calls']
  if (calls === null || (Array.isArray(calls) && calls.length === 0)) delete copy['tool_calls']
  return copy
}

/**
 * The wire copy of an assistant message opening each call once and none of `drop` (a call id an
 * earlier message opened): a repeated `tool_calls` entry is left out. A message left with neither
 * tool calls nor content (`null` or absent) is not sent: providers refuse an empty assistant message
 * and an empty `tool_calls` list alike.
 */
function withoutCalls(payload: ChatMessage, drop: ReadonlySet<string>): unknown {
  const copy = wireCopy(payload) as { [key: string]: unknown; tool_calls?: unknown }
  if (payload.role !== 'assistant' || !Array.isArray(copy.tool_calls)) return copy
  const seen = new Set<string>()
  const kept = (copy.tool_calls as unknown[]).filter((call) => {
    if (typeof call !== 'object' || call === null) return true
    const { id, call_id: callId } = call as { id?: unknown; call_id?: unknown }
    const opened = id ?? callId
    if (typeof opened !== 'string') return true
    if (drop.has(opened) || seen.has(opened)) return false
    seen.add(opened)
    return true
  })
  if (kept.length > 0) {
    copy.tool_calls = kept
    return copy
  }
  delete copy.tool_calls
  return copy['content'] === null || copy['content'] === undefined ? undefined : copy
}

/**
 * The wire copy of a message with the call ids it opens (`tool_calls[].id`, else `call_id`) or
 * answers (`tool_call_id`, else `call_id`) renamed by `renames`: the field pairing reads is renamed,
 * and its twin with it when the twin holds the same id (a call or result carrying the id under both
 * names); a twin holding another value is left as it is.
 */
function renameToolIds(payload: ChatMessage, renames: ReadonlyMap<string, string>): unknown {
  const copy = wireCopy(payload)
  const renamed = (record: { [key: string]: unknown }, first: string, second: string): void => {
    const id = record[first] !== undefined && record[first] !== null ? record[first] : record[second]
    const to = typeof id === 'string' ? renames.get(id) : undefined
    if (to === undefined) return
    for (const field of [first, second]) if (record[field] === id) record[field] = to
  }
  if (payload.role === 'tool') renamed(copy, 'tool_call_id', 'call_id')
  if (payload.role === 'assistant' && Array.isArray(copy['tool_calls'])) {
    for (const call of copy['tool_calls'] as unknown[])
      if (typeof call === 'object' && call !== null) renamed(call as { [key: string]: unknown }, 'id', 'call_id')
  }
  return copy
}

/** The text of a chat message's content: the string, or its parts' texts (`[type]` for others). */
function contentText(payload: ChatMessage): string {
  const c = payload.content
  if (typeof c === 'string') return c
  if (Array.isArray(c)) return c.map((p) => (typeof p['text'] === 'string' ? p['text'] : `[${String(p.type)}]`)).join(' ')
  return ''
}

/**
 * `openai-chat`: OpenAI Chat Completions messages (system, developer, user, assistant, tool), the
 * default for a payload with a chat `role`. An assistant message's `tool_calls[].id` (or `call_id`)
 * opens a call (`tool_calls: null` or `[]`, which OpenAI-compatible servers write, is stored as given
 * and left out of the wire copy); a tool message's `tool_call_id` (or `call_id`) answers one. The synthetic
 * "interrupted" result is `{ role: 'tool', tool_call_id, content }`; the pairing repair leaves a
 * repeated call id out of `tool_calls` ({@link MessageFormat.withoutCalls}) and renames a reused one
 * in `tool_calls` and `tool_call_id` ({@link MessageFormat.renameToolIds}).
 */
export const openAIChatFormat: MessageFormat<ChatMessage> = {
  name: OPENAI_CHAT_FORMAT,
  schema: ChatMessageSchema,
  toolCalls: callIds,
  toolResults: resultIds,
  interruptedResults: (ids, content) => ids.map((id) => ({ role: 'tool', tool_call_id: id, content })),
  withoutCalls,
  renameToolIds,
  toWire: wireCopy,
  preview(payload) {
    const calls = callIds(payload)
    const kind = calls.length > 0 ? 'tool_calls' : payload.role === 'tool' ? 'tool_result' : 'text'
    return { role: String(payload.role), kind, text: contentText(payload) }
  },
}
