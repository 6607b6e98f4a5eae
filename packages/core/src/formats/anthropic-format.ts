import { z } from 'zod'
import { cloneJson, type JsonValue } from '../json-value.js'
import { copyPayload, structuralRedaction, type OpaqueField } from './item-format-kit.js'
import type { MessageFormat, MessagePreview } from './message-format.js'
import { REDACTED_CONTENT } from './structural-placeholder.js'

/** The name of the Anthropic Messages API format. */
export const ANTHROPIC_FORMAT = 'anthropic'

/**
 * A content block as turnlog reads it: a `type` and, for the types the format knows, the fields the
 * API requires (checked by the schema); every other field, and every block type turnlog does not
 * know, is kept verbatim.
 */
export interface AnthropicContentBlock {
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * A payload of the `anthropic` format: one entry of the Messages API's `messages` (the
 * `@anthropic-ai/sdk` `MessageParam`: a user, assistant or system turn with a string or a list of
 * content blocks). Unknown fields are kept verbatim. Type your own messages as
 * `Message<MessageParam>` (from `@anthropic-ai/sdk`) to get the SDK's type back from `toWire`.
 */
export interface AnthropicMessageParam {
  readonly role: 'user' | 'assistant' | 'system'
  readonly content: string | readonly AnthropicContentBlock[]
  readonly [key: string]: unknown
}

/** The `tool_result` block of a synthetic "interrupted" result (a `ToolResultBlockParam`). */
export type AnthropicInterruptedToolResult = {
  type: 'tool_result'
  tool_use_id: string
  content: string
  is_error: true
}

/**
 * The synthetic "interrupted" result `toWire(…, { repairPairing: true })` sends for unanswered
 * `tool_use` blocks: one user message of `tool_result` blocks with `is_error: true` (a
 * `UserMessageParam`).
 */
export type AnthropicInterruptedResult = {
  role: 'user'
  content: AnthropicInterruptedToolResult[]
}

/**
 * The `anthropic` format's type: a {@link MessageFormat} whose `interruptedResults` are typed as the
 * SDK's `UserMessageParam` shape ({@link AnthropicInterruptedResult}).
 */
export interface AnthropicFormat extends MessageFormat<AnthropicMessageParam> {
  interruptedResults(toolCallIds: readonly string[], content: string): AnthropicInterruptedResult[]
}

/** Any JSON object (a tool's `input`, an image's `source`). */
const JsonObject = z.looseObject({})

/** A value that is present (`content` of a server tool's result: an object or a list). */
const ServerToolContent = z.union([z.looseObject({}), z.array(z.unknown())])

const ToolUseId = z.string().min(1)

const SERVER_TOOL_RESULTS = [
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
] as const

/** The blocks a content list may hold, by type: what the API requires of each (unknown fields kept). */
const KNOWN_BLOCKS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['text', z.looseObject({ text: z.string(), citations: z.array(JsonObject).nullable().optional() })],
  ['image', z.looseObject({ source: z.looseObject({ type: z.string() }) })],
  ['document', z.looseObject({ source: z.looseObject({ type: z.string() }) })],
  [
    'search_result',
    z.looseObject({
      content: z.array(z.looseObject({ type: z.literal('text'), text: z.string() })),
      source: z.string(),
      title: z.string(),
    }),
  ],
  ['thinking', z.looseObject({ thinking: z.string(), signature: z.string() })],
  ['redacted_thinking', z.looseObject({ data: z.string() })],
  ['tool_use', z.looseObject({ id: ToolUseId, name: z.string(), input: JsonObject })],
  ['server_tool_use', z.looseObject({ id: ToolUseId, name: z.string(), input: JsonObject })],
  ['container_upload', z.looseObject({ file_id: z.string() })],
  ['tool_reference', z.looseObject({ tool_name: z.string() })],
  ...SERVER_TOOL_RESULTS.map((type): [string, z.ZodType] => [type, z.looseObject({ tool_use_id: ToolUseId, content: ServerToolContent })]),
])

/** Copies zod issues of a nested parse into `ctx`, under the current path. */
function reportIssues(ctx: z.RefinementCtx, issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): void {
  for (const issue of issues) ctx.addIssue({ code: 'custom', message: issue.message, path: [...prefix, ...issue.path] })
}

/** A block: any `type`; a known type must have its required fields. */
const Block: z.ZodType<AnthropicContentBlock> = z.looseObject({ type: z.string() }).superRefine((block, ctx) => {
  const known = KNOWN_BLOCKS.get(block.type)
  if (known === undefined) return
  const result = known.safeParse(block)
  if (!result.success) reportIssues(ctx, result.error.issues)
})

/**
 * A string or a list of blocks (`content`). Not a zod union: a bad block reports its own path
 * (`content.2.id`), not "invalid input" at `content`.
 */
function stringOrBlocks(optional: boolean): z.ZodType {
  const blocks = z.array(Block)
  const schema = z.unknown().superRefine((value, ctx) => {
    if (typeof value === 'string') return
    if (!Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'expected a string or an array of content blocks' })
      return
    }
    const result = blocks.safeParse(value)
    if (!result.success) reportIssues(ctx, result.error.issues)
  })
  return optional ? schema.optional() : schema
}

/** `tool_result`: the id it answers, and its content (a string or blocks). */
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: ToolUseId,
  content: stringOrBlocks(true),
  is_error: z.boolean().optional(),
})

/** Blocks only an assistant turn carries (the model's output). */
const ASSISTANT_ONLY = new Set(['tool_use', 'server_tool_use', 'thinking', 'redacted_thinking', ...SERVER_TOOL_RESULTS])

/**
 * The schema of an `anthropic` payload: a `MessageParam` (`role` user, assistant or system;
 * `content` a string or content blocks). A block of a known type must carry the fields the API
 * requires (`tool_use` an `id`, `name` and object `input`; `tool_result` a `tool_use_id`; `text` a
 * `text`; …); one `tool_use` and one `tool_result` per id in a message; a `tool_result` only in a
 * user turn; `tool_use`, `thinking` and server-tool blocks only in an assistant turn; a system turn
 * only text. Unknown fields and unknown block types are kept
 * verbatim. A response `Message` (`type: 'message'`) is refused: store its `{ role, content }`.
 */
export const AnthropicMessageParamSchema: z.ZodType<AnthropicMessageParam> = z
  .looseObject({ role: z.enum(['user', 'assistant', 'system']), content: stringOrBlocks(false) })
  .superRefine((message, ctx) => {
    if (message['type'] === 'message') {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: 'a response Message is not a MessageParam: store { role, content } (model, usage, stop_reason go to meta)',
      })
    }
    if (!Array.isArray(message.content)) return
    // one block per id and kind: the API refuses a repeated tool_use id, and a repeated result for one call
    const seen = new Set<string>()
    const once = (kind: string, id: unknown, i: number, field: string): void => {
      if (typeof id !== 'string') return
      if (seen.has(`${kind}:${id}`))
        ctx.addIssue({
          code: 'custom',
          path: ['content', i, field],
          message: `a second ${kind} block for id ${JSON.stringify(id.slice(0, 80))} in one message`,
        })
      seen.add(`${kind}:${id}`)
    }
    ;(message.content as AnthropicContentBlock[]).forEach((block, i) => {
      if (block.type === 'tool_use') once('tool_use', block['id'], i, 'id')
      if (block.type === 'tool_result') once('tool_result', block['tool_use_id'], i, 'tool_use_id')
      if (block.type === 'tool_result') {
        if (message.role !== 'user')
          ctx.addIssue({ code: 'custom', path: ['content', i, 'type'], message: 'a tool_result block belongs in a user message' })
        const result = ToolResultBlock.safeParse(block)
        if (!result.success) reportIssues(ctx, result.error.issues, ['content', i])
      } else if (ASSISTANT_ONLY.has(block.type) && message.role !== 'assistant') {
        ctx.addIssue({ code: 'custom', path: ['content', i, 'type'], message: `a ${block.type} block belongs in an assistant message` })
      } else if (message.role === 'system' && block.type !== 'text') {
        ctx.addIssue({ code: 'custom', path: ['content', i, 'type'], message: 'a system message holds text blocks only' })
      }
    })
  }) as z.ZodType<AnthropicMessageParam>

function blocksOf(payload: AnthropicMessageParam): readonly AnthropicContentBlock[] {
  return typeof payload.content === 'string' ? [] : payload.content
}

function callIds(payload: AnthropicMessageParam): string[] {
  const ids: string[] = []
  for (const b of blocksOf(payload)) if (b.type === 'tool_use' && typeof b['id'] === 'string') ids.push(b['id'])
  return ids
}

function resultIds(payload: AnthropicMessageParam): string[] {
  const ids: string[] = []
  for (const b of blocksOf(payload)) if (b.type === 'tool_result' && typeof b['tool_use_id'] === 'string') ids.push(b['tool_use_id'])
  return ids
}

/** The text of a tool result's content (its string, or its text blocks). */
function resultText(block: AnthropicContentBlock): string {
  const c = block['content']
  if (typeof c === 'string') return c
  if (Array.isArray(c))
    return (c as AnthropicContentBlock[]).map((b) => (typeof b['text'] === 'string' ? b['text'] : `[${String(b.type)}]`)).join(' ')
  return ''
}

function blockText(block: AnthropicContentBlock): string {
  switch (block.type) {
    case 'text':
      return String(block['text'])
    case 'thinking':
      return `[thinking] ${String(block['thinking'])}`
    case 'tool_use':
    case 'server_tool_use':
      return `[${block.type} ${String(block['name'])}] ${JSON.stringify(block['input'])}`
    case 'tool_result':
      return `[tool_result${block['is_error'] === true ? ' error' : ''}] ${resultText(block)}`
    default:
      return `[${block.type}]`
  }
}

function preview(payload: AnthropicMessageParam): MessagePreview {
  const blocks = blocksOf(payload)
  const kind =
    typeof payload.content === 'string'
      ? 'text'
      : blocks.some((b) => b.type === 'tool_use')
        ? 'tool_calls'
        : blocks.some((b) => b.type === 'tool_result')
          ? 'tool_result'
          : blocks.length > 0 && blocks.every((b) => b.type === 'thinking' || b.type === 'redacted_thinking')
            ? 'thinking'
            : 'text'
  const text = typeof payload.content === 'string' ? payload.content : blocks.map(blockText).join(' ')
  return { role: payload.role, kind, text }
}

/**
 * A thinking block as a redaction leaves it: `thinking` with the redacted marker as its `signature`, or
 * `redacted_thinking` with it as its `data` (the signature and the data carry the encrypted thinking,
 * so the placeholder keeps neither). Anthropic verifies both and refuses such a block.
 */
function isThinkingPlaceholder(block: unknown): boolean {
  if (typeof block !== 'object' || block === null) return false
  const b = block as Readonly<Record<string, unknown>>
  return (
    (b['type'] === 'thinking' && b['signature'] === REDACTED_CONTENT) ||
    (b['type'] === 'redacted_thinking' && b['data'] === REDACTED_CONTENT)
  )
}

/**
 * What is sent of wire copies of `anthropic` messages: each copy without its redacted thinking blocks
 * ({@link isThinkingPlaceholder}), which Anthropic would refuse; a turn left with no block at all is
 * not sent. Anthropic lets the thinking of earlier assistant turns be left out; the last assistant
 * turn of an unfinished tool-use loop must start with its thinking when thinking is enabled, which a
 * redacted turn no longer has (docs/security.md, "Redaction").
 */
function withoutThinkingPlaceholders(copies: unknown[]): unknown[] {
  const out: unknown[] = []
  for (const copy of copies) {
    const content = (copy as { content?: unknown }).content
    if (!Array.isArray(content) || !content.some(isThinkingPlaceholder)) {
      out.push(copy)
      continue
    }
    const kept = content.filter((b) => !isThinkingPlaceholder(b))
    if (kept.length === 0) continue
    ;(copy as { content: unknown[] }).content = kept
    out.push(copy)
  }
  return out
}

/** A tool's `input` is application data: redaction keeps none of its strings, whatever their keys. */
const opaqueField: OpaqueField = (key) => key === 'input'

/**
 * `anthropic`: the Anthropic Messages API's `MessageParam` (`@anthropic-ai/sdk`). A `tool_use`
 * block (in an assistant turn) opens a call by its `id`; a `tool_result` block (in a user turn)
 * answers it by `tool_use_id`. Server tools (`server_tool_use` and its `web_search_tool_result`,
 * `code_execution_tool_result`, … blocks) run on Anthropic's side and pair nothing: the client never
 * answers them, and a `server_tool_use` may rightly stand without its result (a turn paused for a
 * client tool). The synthetic "interrupted" result is one user message of `tool_result` blocks with
 * `is_error: true`, inserted after the calling message's results (the API joins consecutive user
 * messages into one turn); an orphan `tool_result` block is removed from the wire copy, a message
 * left with no content is not sent, and a `tool_use` id called again after its result (the API wants
 * every id once) is renamed in its block and its results. A redacted thinking block (its signature
 * the redacted marker) is never sent. docs/formats.md has the details.
 */
export const anthropicFormat: AnthropicFormat = {
  name: ANTHROPIC_FORMAT,
  redactedPayload: (payload, content) => structuralRedaction(payload, content, opaqueField),
  schema: AnthropicMessageParamSchema,
  toolCalls: callIds,
  toolResults: resultIds,
  interruptedResults: (ids, content) =>
    ids.length === 0
      ? []
      : [{ role: 'user', content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content, is_error: true })) }],
  toWire: copyPayload,
  wireRun: withoutThinkingPlaceholders,
  withoutCalls(payload, toolCallIds) {
    const copy = cloneJson(payload as unknown as JsonValue) as { content: AnthropicContentBlock[] | string }
    if (typeof copy.content === 'string') return copy
    const seen = new Set<string>()
    copy.content = copy.content.filter((b) => {
      if (b.type !== 'tool_use' || typeof b['id'] !== 'string') return true
      if (toolCallIds.has(b['id']) || seen.has(b['id'])) return false
      seen.add(b['id'])
      return true
    })
    return copy.content.length === 0 ? undefined : copy
  },
  withoutResults(payload, toolCallIds) {
    const copy = cloneJson(payload as unknown as JsonValue) as { content: AnthropicContentBlock[] | string }
    if (typeof copy.content === 'string') return copy
    copy.content = copy.content.filter((b) => !(b.type === 'tool_result' && toolCallIds.has(b['tool_use_id'] as string)))
    return copy.content.length === 0 ? undefined : copy
  },
  renameToolIds(payload, renames) {
    const copy = cloneJson(payload as unknown as JsonValue) as { content: { [key: string]: unknown }[] | string }
    if (typeof copy.content === 'string') return copy
    for (const b of copy.content) {
      const field = b['type'] === 'tool_use' ? 'id' : b['type'] === 'tool_result' ? 'tool_use_id' : undefined
      const id = field === undefined ? undefined : b[field as string]
      if (typeof id === 'string' && renames.has(id)) b[field as string] = renames.get(id)
    }
    return copy
  },
  preview,
}
