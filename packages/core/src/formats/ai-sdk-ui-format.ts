import { z } from 'zod'
import { cloneJson, type JsonValue } from '../json-value.js'
import { copyPayload, structuralRedaction, type OpaqueField } from './item-format-kit.js'
import type { MessageFormat } from './message-format.js'

/** The name of the AI SDK UI message format (`UIMessage` of the `ai` package, v6). */
export const AI_SDK_UI_FORMAT = 'ai-sdk-ui'

/** The states of a tool part (`UIToolInvocation['state']`). */
export type AiSdkUiToolState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied'

/** The tool-part states that carry the call's result (the part answers the call it opens). */
const ANSWERED_STATES: ReadonlySet<string> = new Set(['output-available', 'output-error', 'output-denied'])

/**
 * A part of an `ai-sdk-ui` message as stored: one of the `ai` SDK's `UIMessagePart` kinds (`text`,
 * `reasoning`, `source-url`, `source-document`, `file`, `step-start`, `data-*`, `tool-<name>`,
 * `dynamic-tool`) or a part type a later SDK adds, kept verbatim.
 */
export interface AiSdkUiPart {
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * A payload of the `ai-sdk-ui` format: the `ai` SDK's `UIMessage` (`{ id, role, metadata?, parts }`),
 * as JSON. `id` is the client's id, kept verbatim (it is not turnlog's message id).
 */
export interface AiSdkUiMessage {
  readonly id: string
  readonly role: 'system' | 'user' | 'assistant'
  readonly metadata?: unknown
  readonly parts: readonly AiSdkUiPart[]
  readonly [key: string]: unknown
}

const providerMetadata = z.record(z.string(), z.record(z.string(), z.unknown())).optional()

const approvalSchema = z.looseObject({
  id: z.string(),
  approved: z.boolean().optional(),
  reason: z.string().optional(),
  signature: z.string().optional(),
})

/** Fields of a tool part by state: what each state requires. */
const toolStateSchema = z.discriminatedUnion('state', [
  z.looseObject({
    state: z.literal('input-streaming'),
    rawInput: z.string().optional(),
    inputEncoding: z.enum(['json', 'text']).optional(),
  }),
  z.looseObject({ state: z.literal('input-available'), input: z.unknown() }),
  z.looseObject({ state: z.literal('approval-requested'), input: z.unknown(), approval: approvalSchema }),
  z.looseObject({ state: z.literal('approval-responded'), input: z.unknown(), approval: approvalSchema.extend({ approved: z.boolean() }) }),
  z.looseObject({
    state: z.literal('output-available'),
    input: z.unknown(),
    output: z.unknown(),
    preliminary: z.boolean().optional(),
    approval: approvalSchema.extend({ approved: z.literal(true) }).optional(),
  }),
  z.looseObject({
    state: z.literal('output-error'),
    errorText: z.string(),
    approval: approvalSchema.extend({ approved: z.literal(true) }).optional(),
  }),
  z.looseObject({ state: z.literal('output-denied'), input: z.unknown(), approval: approvalSchema.extend({ approved: z.literal(false) }) }),
])

const toolCommon = {
  toolCallId: z.string().min(1),
  title: z.string().optional(),
  toolMetadata: z.record(z.string(), z.unknown()).optional(),
  providerExecuted: z.boolean().optional(),
  callProviderMetadata: providerMetadata,
  resultProviderMetadata: providerMetadata,
}

const KNOWN_PARTS: Readonly<Record<string, z.ZodType>> = {
  text: z.looseObject({ type: z.literal('text'), text: z.string(), state: z.enum(['streaming', 'done']).optional(), providerMetadata }),
  reasoning: z.looseObject({
    type: z.literal('reasoning'),
    id: z.string().optional(),
    text: z.string(),
    state: z.enum(['streaming', 'done']).optional(),
    providerMetadata,
  }),
  'source-url': z.looseObject({
    type: z.literal('source-url'),
    sourceId: z.string(),
    url: z.string(),
    title: z.string().optional(),
    providerMetadata,
  }),
  'source-document': z.looseObject({
    type: z.literal('source-document'),
    sourceId: z.string(),
    mediaType: z.string(),
    title: z.string(),
    filename: z.string().optional(),
    providerMetadata,
  }),
  file: z.looseObject({
    type: z.literal('file'),
    mediaType: z.string(),
    url: z.string(),
    filename: z.string().optional(),
    providerMetadata,
  }),
  'step-start': z.looseObject({ type: z.literal('step-start') }),
  'dynamic-tool': z.looseObject({ type: z.literal('dynamic-tool'), toolName: z.string(), ...toolCommon }).and(toolStateSchema),
}
const dataPart = z
  .looseObject({ type: z.string(), id: z.string().optional(), data: z.unknown() })
  .refine((p) => 'data' in p, { message: 'a data part needs data', path: ['data'] })
const toolPart = z.looseObject({ type: z.string(), ...toolCommon }).and(toolStateSchema)

/** The schema a part of type `type` must pass (undefined: a part type this SDK version does not know). */
function partSchema(type: string): z.ZodType | undefined {
  const known = KNOWN_PARTS[type]
  if (known !== undefined) return known
  if (type.startsWith('tool-') && type.length > 'tool-'.length) return toolPart
  if (type.startsWith('data-') && type.length > 'data-'.length) return dataPart
  return undefined
}

const PartSchema = z.looseObject({ type: z.string().min(1) }).superRefine((part, ctx) => {
  const schema = partSchema(part.type)
  if (schema === undefined) return
  const result = schema.safeParse(part)
  if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path })
})

/** The `ai-sdk-ui` schema: `id`, `role` and `parts` required; known part kinds checked; unknown part kinds and fields kept. */
export const AiSdkUiMessageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(['system', 'user', 'assistant']),
  metadata: z.unknown().optional(),
  parts: z.array(PartSchema),
})

function isToolPart(part: AiSdkUiPart): boolean {
  return part.type === 'dynamic-tool' || (part.type.startsWith('tool-') && part.type.length > 'tool-'.length)
}

function toolParts(payload: AiSdkUiMessage): AiSdkUiPart[] {
  return payload.parts.filter(
    (p) => typeof p === 'object' && p !== null && typeof p.type === 'string' && isToolPart(p) && typeof p['toolCallId'] === 'string',
  )
}

function partText(part: AiSdkUiPart): string {
  if ((part.type === 'text' || part.type === 'reasoning') && typeof part['text'] === 'string')
    return part.type === 'text' ? part['text'] : `[reasoning] ${part['text']}`
  if (isToolPart(part))
    return `[${part.type === 'dynamic-tool' ? String(part['toolName']) : part.type.slice('tool-'.length)} ${String(part['state'])}]`
  return `[${part.type}]`
}

/** The wire copy of an unanswered tool part: `output-error` with `errorText` (an approval kept only when granted). */
function interruptedPart(part: AiSdkUiPart, content: string): AiSdkUiPart {
  const copy = cloneJson(part as unknown as JsonValue) as { [key: string]: unknown }
  delete copy['output']
  delete copy['inputEncoding']
  const approval = copy['approval'] as { approved?: unknown } | undefined
  if (approval !== undefined && approval.approved !== true) delete copy['approval']
  copy['state'] = 'output-error'
  copy['errorText'] = content
  return copy as AiSdkUiPart
}

/** Application data in a UI message (tool input and output, metadata, data parts, provider metadata): redaction keeps none of its strings. */
const OPAQUE_KEYS: ReadonlySet<string> = new Set([
  'input',
  'rawInput',
  'output',
  'metadata',
  'data',
  'providerMetadata',
  'callProviderMetadata',
])
const opaqueField: OpaqueField = (key) => OPAQUE_KEYS.has(key)

/**
 * The message without its tool parts' `inputEncoding` (how a streaming part's `rawInput` is written,
 * `'json' | 'text'`): a redaction empties `rawInput`, and the placeholder's `'[redacted]'` in its place
 * would not be a value the format allows. The message itself when no part has one.
 */
function withoutInputEncoding(payload: AiSdkUiMessage): AiSdkUiMessage {
  if (!Array.isArray(payload.parts) || !payload.parts.some((p) => typeof p === 'object' && p !== null && 'inputEncoding' in p))
    return payload
  const parts = payload.parts.map((p) => {
    if (typeof p !== 'object' || p === null || !('inputEncoding' in p)) return p
    const { inputEncoding: _dropped, ...rest } = p as { readonly [key: string]: unknown }
    return rest as AiSdkUiPart
  })
  return { ...payload, parts }
}

/**
 * `ai-sdk-ui`: the AI SDK's `UIMessage` (`ai` v6), what `useChat` sends and keeps. Each `tool-<name>`
 * or `dynamic-tool` part opens the call `toolCallId`; when its `state` says the result exists
 * (`output-available`, `output-error`, `output-denied`) the same part also answers it. A UI message
 * carries its own results, so the pairing repair does not insert a message: it rewrites the
 * unanswered part in the wire copy to `state: 'output-error'` with `errorText`
 * ({@link MessageFormat.answerInPlace}). A call with several parts (an open part beside or before the
 * answered one, in this message or another) keeps one on the wire, the answered part where there is
 * one ({@link MessageFormat.withoutCalls}); `interruptedResults` is the assistant message made of
 * output-error parts. The wire view is the `UIMessage` itself (the application calls `convertToModelMessages`).
 */
export const aiSdkUiFormat: MessageFormat<AiSdkUiMessage> = {
  name: AI_SDK_UI_FORMAT,
  redactedPayload: (payload, content) => structuralRedaction(withoutInputEncoding(payload), content, opaqueField),
  schema: AiSdkUiMessageSchema,
  toolCalls: (payload) => toolParts(payload).map((p) => p['toolCallId'] as string),
  toolResults: (payload) =>
    toolParts(payload)
      .filter((p) => ANSWERED_STATES.has(String(p['state'])))
      .map((p) => p['toolCallId'] as string),
  interruptedResults(ids, content, call) {
    const parts = ids.map((id): AiSdkUiPart => {
      const opened = call === undefined ? undefined : toolParts(call).find((p) => p['toolCallId'] === id)
      return opened === undefined
        ? { type: 'dynamic-tool', toolName: 'unknown', toolCallId: id, state: 'output-error', input: null, errorText: content }
        : interruptedPart(opened, content)
    })
    return parts.length === 0 ? [] : [{ id: `${call?.id ?? 'interrupted'}-interrupted`, role: 'assistant', parts }]
  },
  answerInPlace(payload, ids, content) {
    const missing = new Set(ids)
    const answered = new Set<string>()
    const copy = cloneJson(payload as unknown as JsonValue) as unknown as { parts: AiSdkUiPart[] }
    copy.parts = payload.parts.flatMap((p) => {
      const id = p['toolCallId']
      if (!isToolPart(p) || typeof id !== 'string' || ANSWERED_STATES.has(String(p['state'])))
        return [cloneJson(p as unknown as JsonValue) as unknown as AiSdkUiPart]
      // a later open part of a call answered here repeats the call: rewritten too it would be a second
      // result, left open a call the model request never answers; the wire copy leaves it out
      if (answered.has(id)) return []
      if (!missing.has(id)) return [cloneJson(p as unknown as JsonValue) as unknown as AiSdkUiPart]
      // the first open part of the call answers it
      missing.delete(id)
      answered.add(id)
      return [interruptedPart(p, content)]
    })
    return copy
  },
  withoutCalls(payload, ids) {
    // the part kept per call: the first answered part, else the first open one; none for `ids`
    const keep = new Map<string, AiSdkUiPart>()
    for (const p of toolParts(payload)) {
      const id = p['toolCallId'] as string
      if (ids.has(id)) continue
      const kept = keep.get(id)
      if (kept === undefined || (!ANSWERED_STATES.has(String(kept['state'])) && ANSWERED_STATES.has(String(p['state'])))) keep.set(id, p)
    }
    const parts = payload.parts.filter((p) => !isToolPart(p) || typeof p['toolCallId'] !== 'string' || keep.get(p['toolCallId']) === p)
    if (parts.length === 0) return undefined
    return cloneJson({ ...payload, parts } as unknown as JsonValue)
  },
  withoutResults(payload, ids) {
    const seen = new Set<string>()
    const parts = payload.parts.filter((p) => {
      if (!isToolPart(p) || typeof p['toolCallId'] !== 'string' || !ANSWERED_STATES.has(String(p['state']))) return true
      const id = p['toolCallId']
      // a later result is dropped; of several answered parts for one call here, the first is kept
      if (ids.has(id) || seen.has(id)) return false
      seen.add(id)
      return true
    })
    if (parts.length === 0) return undefined
    return cloneJson({ ...payload, parts } as unknown as JsonValue)
  },
  // a reused call id: every tool part of this message that names it
  renameToolIds(payload, renames) {
    const copy = cloneJson(payload as unknown as JsonValue) as unknown as { parts: { [key: string]: unknown }[] }
    for (const p of copy.parts) {
      const id = p['toolCallId']
      if (typeof id === 'string' && renames.has(id) && typeof p['type'] === 'string' && isToolPart(p as AiSdkUiPart))
        p['toolCallId'] = renames.get(id)
    }
    return copy
  },
  toWire: copyPayload,
  preview(payload) {
    const tools = toolParts(payload)
    const kind = tools.length === 0 ? 'text' : tools.every((p) => ANSWERED_STATES.has(String(p['state']))) ? 'tool_result' : 'tool_calls'
    return { role: payload.role, kind, text: payload.parts.map(partText).join(' ') }
  },
}
