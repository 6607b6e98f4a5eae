import { z } from 'zod'

/** One part of a multi-part content list (text, image_url, input_audio, …); unknown fields kept. */
export const ContentPartSchema = z.looseObject({ type: z.string() })

/** Message content: a string, a list of parts, or null (assistant messages with tool calls). */
export const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)])

/** A tool call on an assistant message. Providers name the id `id` or `call_id`; one is required. */
export const ToolCallSchema = z
  .looseObject({
    id: z.string().min(1).optional(),
    call_id: z.string().min(1).optional(),
    type: z.string().optional(),
    function: z.looseObject({ name: z.string(), arguments: z.string() }).optional(),
  })
  .refine((c) => c.id !== undefined || c.call_id !== undefined, {
    message: 'a tool call needs an id (or call_id)',
  })

const base = { name: z.string().optional() }

/** The provider message (OpenAI chat format, extended). Unknown fields are kept verbatim. */
export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: ContentSchema, ...base }),
  z.looseObject({ role: z.literal('developer'), content: ContentSchema, ...base }),
  z.looseObject({ role: z.literal('user'), content: ContentSchema, ...base }),
  z.looseObject({
    role: z.literal('assistant'),
    content: ContentSchema.nullable().optional(),
    // null: what OpenAI-compatible servers (vLLM, LiteLLM, Ollama) and a Python model_dump() write for
    // a reply without calls; kept as given (toWire leaves the key out)
    tool_calls: z.array(ToolCallSchema).nullable().optional(),
    ...base,
  }),
  z
    .looseObject({
      role: z.literal('tool'),
      content: ContentSchema,
      tool_call_id: z.string().min(1).optional(),
      call_id: z.string().min(1).optional(),
      ...base,
    })
    .refine((m) => m.tool_call_id !== undefined || m.call_id !== undefined, {
      message: 'a tool result needs tool_call_id (or call_id)',
    }),
])

/** The roles turnlog accepts. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool'

/** A tool call as carried by an assistant message. */
export interface ToolCall {
  readonly id?: string
  readonly call_id?: string
  readonly type?: string
  readonly function?: { readonly name: string; readonly arguments: string; readonly [key: string]: unknown }
  readonly [key: string]: unknown
}

/** A provider message. Deeply read-only once inside a {@link Message}. */
export interface ChatMessage {
  readonly role: ChatRole
  readonly content?: string | readonly { readonly type: string; readonly [key: string]: unknown }[] | null
  /** The calls it makes; `null` as some OpenAI-compatible servers write it for a reply without calls. */
  readonly tool_calls?: readonly ToolCall[] | null
  readonly tool_call_id?: string
  readonly call_id?: string
  readonly name?: string
  readonly [key: string]: unknown
}
