import { z } from 'zod'
import { cloneJson, type JsonValue } from '../json-value.js'
import { copyPayload, structuralRedaction, type OpaqueField } from './item-format-kit.js'
import type { MessageFormat } from './message-format.js'

/** The name of the AI SDK model message format (`ModelMessage` of the `ai` package, v6). */
export const AI_SDK_MODEL_FORMAT = 'ai-sdk-model'

/**
 * A content part of an `ai-sdk-model` message as stored: one of the `ai` SDK's parts (`text`, `image`,
 * `file`, `reasoning`, `tool-call`, `tool-result`, `tool-approval-request`, `tool-approval-response`)
 * or a part type a later SDK adds, kept verbatim. Binary data (`image`, `file` `data`) is stored as a
 * base64 or URL string: a payload is JSON.
 */
export interface AiSdkModelPart {
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * A payload of the `ai-sdk-model` format: the `ai` SDK's `ModelMessage` (system, user, assistant or
 * tool message), as JSON.
 */
export type AiSdkModelMessage =
  | { readonly role: 'system'; readonly content: string; readonly [key: string]: unknown }
  | { readonly role: 'user' | 'assistant'; readonly content: string | readonly AiSdkModelPart[]; readonly [key: string]: unknown }
  | { readonly role: 'tool'; readonly content: readonly AiSdkModelPart[]; readonly [key: string]: unknown }

const providerOptions = z.record(z.string(), z.record(z.string(), z.unknown())).optional()

const outputSchema = z.looseObject({ type: z.string().min(1) }).superRefine((output, ctx) => {
  const schema = OUTPUTS[output.type]
  if (schema === undefined) return
  const result = schema.safeParse(output)
  if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path })
})

/** Tool-result outputs (`ToolResultOutput`) by type; an output type this SDK version does not know is kept. */
const OUTPUTS: Readonly<Record<string, z.ZodType>> = {
  text: z.looseObject({ value: z.string() }),
  'error-text': z.looseObject({ value: z.string() }),
  json: z.looseObject({ value: z.unknown() }).refine((o) => 'value' in o, { message: 'a json output needs a value', path: ['value'] }),
  'error-json': z
    .looseObject({ value: z.unknown() })
    .refine((o) => 'value' in o, { message: 'an error-json output needs a value', path: ['value'] }),
  'execution-denied': z.looseObject({ reason: z.string().optional() }),
  content: z.looseObject({ value: z.array(z.looseObject({ type: z.string().min(1) })) }),
}

const toolCallPart = z.looseObject({
  type: z.literal('tool-call'),
  toolCallId: z.string().min(1),
  toolName: z.string(),
  input: z.unknown(),
  providerExecuted: z.boolean().optional(),
  providerOptions,
})
const toolResultPart = z.looseObject({
  type: z.literal('tool-result'),
  toolCallId: z.string().min(1),
  toolName: z.string(),
  output: outputSchema,
  providerOptions,
})

const PARTS: Readonly<Record<string, z.ZodType>> = {
  text: z.looseObject({ type: z.literal('text'), text: z.string(), providerOptions }),
  image: z.looseObject({ type: z.literal('image'), image: z.string(), mediaType: z.string().optional(), providerOptions }),
  file: z.looseObject({
    type: z.literal('file'),
    data: z.string(),
    mediaType: z.string(),
    filename: z.string().optional(),
    providerOptions,
  }),
  reasoning: z.looseObject({ type: z.literal('reasoning'), text: z.string(), providerOptions }),
  'tool-call': toolCallPart,
  'tool-result': toolResultPart,
  'tool-approval-request': z.looseObject({
    type: z.literal('tool-approval-request'),
    approvalId: z.string(),
    toolCallId: z.string().min(1),
    signature: z.string().optional(),
  }),
  'tool-approval-response': z.looseObject({
    type: z.literal('tool-approval-response'),
    approvalId: z.string(),
    approved: z.boolean(),
    reason: z.string().optional(),
    providerExecuted: z.boolean().optional(),
  }),
}

/** Which known part kinds each role may carry (an unknown kind is kept in any role). */
const ROLE_PARTS: Readonly<Record<string, ReadonlySet<string>>> = {
  user: new Set(['text', 'image', 'file']),
  assistant: new Set(['text', 'file', 'reasoning', 'tool-call', 'tool-result', 'tool-approval-request']),
  tool: new Set(['tool-result', 'tool-approval-response']),
}

function partsOf(role: 'user' | 'assistant' | 'tool'): z.ZodType {
  const allowed = ROLE_PARTS[role] ?? new Set<string>()
  return z.array(
    z.looseObject({ type: z.string().min(1) }).superRefine((part, ctx) => {
      const schema = PARTS[part.type]
      if (schema === undefined) return
      if (!allowed.has(part.type)) {
        ctx.addIssue({ code: 'custom', message: `a ${role} message cannot carry a ${part.type} part`, path: ['type'] })
        return
      }
      const result = schema.safeParse(part)
      if (!result.success)
        for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path })
    }),
  )
}

/** The `ai-sdk-model` schema: a `ModelMessage` by role; known part kinds checked; unknown part kinds and fields kept. */
export const AiSdkModelMessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: z.string(), providerOptions }),
  z.looseObject({ role: z.literal('user'), content: z.union([z.string(), partsOf('user')]), providerOptions }),
  z.looseObject({ role: z.literal('assistant'), content: z.union([z.string(), partsOf('assistant')]), providerOptions }),
  z.looseObject({ role: z.literal('tool'), content: partsOf('tool'), providerOptions }),
])

function parts(payload: AiSdkModelMessage): readonly AiSdkModelPart[] {
  return typeof payload.content === 'string'
    ? []
    : payload.content.filter((p) => typeof p === 'object' && p !== null && typeof p.type === 'string')
}

function idsOf(payload: AiSdkModelMessage, type: 'tool-call' | 'tool-result'): string[] {
  if (payload.role !== 'assistant' && payload.role !== 'tool') return []
  return parts(payload)
    .filter((p) => p.type === type && typeof p['toolCallId'] === 'string')
    .map((p) => p['toolCallId'] as string)
}

/**
 * The payload without its parts of `type` whose `toolCallId` is in `ids` or repeats one kept before it
 * (the first of several kept); `undefined` when no part is left. A text payload is copied as it is.
 */
function withoutParts(payload: AiSdkModelMessage, ids: ReadonlySet<string>, type: 'tool-call' | 'tool-result'): JsonValue | undefined {
  if (typeof payload.content === 'string') return cloneJson(payload as unknown as JsonValue)
  const seen = new Set<string>()
  const kept = payload.content.filter((p) => {
    if (p.type !== type || typeof p['toolCallId'] !== 'string') return true
    const id = p['toolCallId']
    if (ids.has(id) || seen.has(id)) return false
    seen.add(id)
    return true
  })
  if (kept.length === 0) return undefined
  return cloneJson({ ...payload, content: kept } as unknown as JsonValue)
}

function partText(part: AiSdkModelPart): string {
  if ((part.type === 'text' || part.type === 'reasoning') && typeof part['text'] === 'string')
    return part.type === 'text' ? part['text'] : `[reasoning] ${part['text']}`
  if (part.type === 'tool-call') return `[${String(part['toolName'])}]`
  if (part.type === 'tool-result') {
    const output = part['output'] as { type?: unknown; value?: unknown } | undefined
    return typeof output?.value === 'string' ? output.value : `[${String(output?.type)}]`
  }
  return `[${part.type}]`
}

/**
 * Application data in a model message (tool input, provider options and metadata, the `value` of a
 * `json` or `error-json` tool output): redaction keeps none of its strings.
 */
const OPAQUE_KEYS: ReadonlySet<string> = new Set(['input', 'providerOptions', 'providerMetadata'])
const opaqueField: OpaqueField = (key, parent) =>
  OPAQUE_KEYS.has(key) || (key === 'value' && (parent['type'] === 'json' || parent['type'] === 'error-json'))

/**
 * `ai-sdk-model`: the AI SDK's `ModelMessage` (`ai` v6), what `generateText`/`streamText` take as
 * `messages` and return in `response.messages`. An assistant message's `tool-call` parts open calls
 * (`toolCallId`); `tool-result` parts answer them, in a `tool` message or, for a provider-executed
 * tool, in the assistant message itself. The synthetic "interrupted" result is one `tool` message with
 * a `tool-result` part per call whose `output` is `{ type: 'error-text', value }`. Approval parts open
 * and answer nothing.
 */
export const aiSdkModelFormat: MessageFormat<AiSdkModelMessage> = {
  name: AI_SDK_MODEL_FORMAT,
  redactedPayload: (payload, content) => structuralRedaction(payload, content, opaqueField),
  schema: AiSdkModelMessageSchema,
  toolCalls: (payload) => idsOf(payload, 'tool-call'),
  toolResults: (payload) => idsOf(payload, 'tool-result'),
  interruptedResults(ids, content, call) {
    if (ids.length === 0) return []
    const calls = call === undefined ? [] : parts(call).filter((p) => p.type === 'tool-call')
    const results = ids.map((toolCallId) => {
      const toolName = calls.find((p) => p['toolCallId'] === toolCallId)?.['toolName']
      return {
        type: 'tool-result',
        toolCallId,
        toolName: typeof toolName === 'string' ? toolName : 'unknown',
        output: { type: 'error-text', value: content },
      }
    })
    return [{ role: 'tool', content: results }]
  },
  // a call an earlier message opened, or a second call with one id here, is left out
  withoutCalls: (payload, ids) => withoutParts(payload, ids, 'tool-call'),
  // an orphan or a later result is dropped; of several results for one call here, the first is kept
  withoutResults: (payload, ids) => withoutParts(payload, ids, 'tool-result'),
  // a reused call id: every part of this message that names it (call, result, approval request)
  renameToolIds(payload, renames) {
    const copy = cloneJson(payload as unknown as JsonValue) as { content: { [key: string]: unknown }[] | string }
    if (typeof copy.content === 'string') return copy
    for (const p of copy.content) {
      const id = p['toolCallId']
      if (typeof id === 'string' && renames.has(id)) p['toolCallId'] = renames.get(id)
    }
    return copy
  },
  toWire: copyPayload,
  preview(payload) {
    const kind = idsOf(payload, 'tool-call').length > 0 ? 'tool_calls' : payload.role === 'tool' ? 'tool_result' : 'text'
    const text = typeof payload.content === 'string' ? payload.content : parts(payload).map(partText).join(' ')
    return { role: payload.role, kind, text }
  },
}
