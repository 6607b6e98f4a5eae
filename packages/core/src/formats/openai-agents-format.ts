import { z } from 'zod'
import { callPreview, copyPayload, resultPreview, structuralRedaction, type OpaqueField } from './item-format-kit.js'
import type { MessageFormat, MessagePreview } from './message-format.js'
import { sendEachItemIdOnce, type ItemIdRules, type RepeatedItemId } from './send-each-item-id-once.js'
import { partsSchema, partsText, typedItemSchema } from './typed-item-schema.js'

/** The name of the OpenAI Agents SDK format: one `AgentInputItem` per message. */
export const OPENAI_AGENTS_FORMAT = 'openai-agents'

/**
 * A payload of the `openai-agents` format: one item of the OpenAI Agents SDK's protocol
 * (`AgentInputItem` from `@openai/agents-core`: a user, system or assistant message, a
 * `function_call` or its `function_call_result`, a `hosted_tool_call`, a `computer_call`, a
 * `shell_call`, an `apply_patch_call`, a `reasoning` or `compaction` item, `unknown`, …). Fields are
 * camelCase (`callId`, `providerData`) and kept verbatim; the item's own `id` is the provider's, not
 * turnlog's.
 */
export interface OpenAIAgentsItem {
  readonly type?: string
  readonly id?: string
  readonly role?: string
  readonly callId?: string
  readonly providerData?: { readonly [key: string]: unknown }
  readonly [key: string]: unknown
}

const text = z.looseObject({ type: z.string(), text: z.string() })
const USER_PARTS = partsSchema({
  input_text: text,
  input_image: z.looseObject({ type: z.literal('input_image') }),
  input_file: z.looseObject({ type: z.literal('input_file') }),
  audio: z.looseObject({ type: z.literal('audio'), audio: z.union([z.string(), z.looseObject({ id: z.string() })]) }),
})
const ASSISTANT_PARTS = partsSchema({
  output_text: text,
  refusal: z.looseObject({ type: z.literal('refusal'), refusal: z.string() }),
  audio: z.looseObject({ type: z.literal('audio'), audio: z.union([z.string(), z.looseObject({ id: z.string() })]) }),
  image: z.looseObject({ type: z.literal('image'), image: z.string() }),
})
const messageType = z.literal('message').optional()
const providerData = z.record(z.string(), z.unknown()).optional()

/** Messages by role, as the SDK's `UserMessageItem`, `SystemMessageItem`, `AssistantMessageItem`. */
const MESSAGE_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  user: z.looseObject({ type: messageType, role: z.literal('user'), content: z.union([z.string(), USER_PARTS]), providerData }),
  system: z.looseObject({ type: messageType, role: z.literal('system'), content: z.string(), providerData }),
  assistant: z.looseObject({
    type: messageType,
    role: z.literal('assistant'),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    content: ASSISTANT_PARTS,
    providerData,
  }),
}
const AnyMessage = z.looseObject({ role: z.enum(['user', 'system', 'assistant']) })

const callId = z.string().min(1)
const status = z.string()

/** The fields a tool search call and its output share: the call id under either name, where it ran. */
const TOOL_SEARCH_FIELDS = {
  callId: z.string().nullable().optional(),
  call_id: z.string().nullable().optional(),
  execution: z.enum(['client', 'server']).optional(),
  providerData,
}

/** The known item kinds: what the SDK's zod schemas require of each (unknown fields are kept). */
const ITEM_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  function_call: z.looseObject({ type: z.literal('function_call'), callId, name: z.string(), arguments: z.string(), providerData }),
  function_call_result: z.looseObject({
    type: z.literal('function_call_result'),
    callId,
    name: z.string(),
    status,
    output: z.union([z.string(), z.looseObject({ type: z.string() }), z.array(z.looseObject({ type: z.string() }))]),
    providerData,
  }),
  hosted_tool_call: z.looseObject({
    type: z.literal('hosted_tool_call'),
    name: z.string(),
    arguments: z.string().optional(),
    output: z.string().optional(),
    providerData,
  }),
  computer_call: z
    .looseObject({
      type: z.literal('computer_call'),
      callId,
      status,
      action: z.looseObject({ type: z.string() }).optional(),
      actions: z
        .array(z.looseObject({ type: z.string() }))
        .min(1)
        .optional(),
      providerData,
    })
    .refine((c) => c.action !== undefined || c.actions !== undefined, {
      message: 'a computer_call needs action or actions',
      path: ['action'],
    }),
  computer_call_result: z.looseObject({
    type: z.literal('computer_call_result'),
    callId,
    output: z.looseObject({ type: z.literal('computer_screenshot'), data: z.string() }),
    providerData,
  }),
  shell_call: z.looseObject({
    type: z.literal('shell_call'),
    callId,
    action: z.looseObject({ commands: z.array(z.string()) }),
    providerData,
  }),
  shell_call_output: z.looseObject({
    type: z.literal('shell_call_output'),
    callId,
    output: z.array(z.looseObject({ stdout: z.string(), stderr: z.string(), outcome: z.looseObject({ type: z.string() }) })),
    providerData,
  }),
  apply_patch_call: z.looseObject({
    type: z.literal('apply_patch_call'),
    callId,
    status,
    operation: z.looseObject({ type: z.string(), path: z.string() }),
    providerData,
  }),
  apply_patch_call_output: z.looseObject({
    type: z.literal('apply_patch_call_output'),
    callId,
    status,
    output: z.string().optional(),
    providerData,
  }),
  tool_search_call: z.looseObject({ type: z.literal('tool_search_call'), ...TOOL_SEARCH_FIELDS }),
  tool_search_output: z.looseObject({ type: z.literal('tool_search_output'), ...TOOL_SEARCH_FIELDS, tools: z.array(z.unknown()) }),
  program: z.looseObject({ type: z.literal('program'), callId, code: z.string(), fingerprint: z.string(), providerData }),
  program_output: z.looseObject({ type: z.literal('program_output'), callId, output: z.string(), status, providerData }),
  reasoning: z.looseObject({
    type: z.literal('reasoning'),
    content: z.array(z.looseObject({ type: z.string(), text: z.string() })),
    rawContent: z.array(z.looseObject({ type: z.string(), text: z.string() })).optional(),
    providerData,
  }),
  compaction: z.looseObject({ type: z.literal('compaction'), encrypted_content: z.string(), providerData }),
  unknown: z.looseObject({ type: z.literal('unknown'), providerData }),
}
const TypeField = z.looseObject({ type: z.string() })

/** The item kinds that open a call (by `callId`) and the result kind that answers it. */
const CALLS: Readonly<Record<string, string>> = {
  function_call: 'function_call_result',
  computer_call: 'computer_call_result',
  shell_call: 'shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
  tool_search_call: 'tool_search_output',
}
const RESULTS = new Set(Object.values(CALLS))

/** The item's kind: its `type`, or `message` when it has none (a message's `type` is optional). */
function kindOf(item: Readonly<Record<string, unknown>>): string {
  const type = item['type']
  if (type === undefined) return 'message'
  return typeof type === 'string' ? type : ''
}

const schema = typedItemSchema((item) => {
  const kind = kindOf(item)
  if (kind === 'message') {
    const role = item['role']
    return typeof role === 'string' && Object.hasOwn(MESSAGE_SCHEMAS, role) ? MESSAGE_SCHEMAS[role] : AnyMessage
  }
  if (Object.hasOwn(ITEM_SCHEMAS, kind)) return ITEM_SCHEMAS[kind]
  // a type that is not a string is refused; a string type this version does not know is kept verbatim
  return kind === '' ? TypeField : undefined
})

/** The call id of a call or result item: `callId` (a tool search item may carry `call_id`). */
function idOf(item: OpenAIAgentsItem): string | undefined {
  const id = item.callId ?? item['call_id']
  return typeof id === 'string' && id.length > 0 ? id : undefined
}

function callIds(item: OpenAIAgentsItem): string[] {
  const kind = kindOf(item)
  if (!Object.hasOwn(CALLS, kind)) return []
  // a server-executed tool search carries its own result: it opens nothing
  if (kind === 'tool_search_call' && item['execution'] === 'server') return []
  const id = idOf(item)
  return id === undefined ? [] : [id]
}

function resultIds(item: OpenAIAgentsItem): string[] {
  const kind = kindOf(item)
  if (!RESULTS.has(kind)) return []
  if (kind === 'tool_search_output' && item['execution'] === 'server') return []
  const id = idOf(item)
  return id === undefined ? [] : [id]
}

/**
 * The wire copy of an item with the call id it opens or answers (`callId`, else `call_id`) renamed by
 * `renames`, in each of its id fields (`callId`, `call_id`, `id`) that holds that id: an item carrying
 * the call id under both names is renamed in both. An `id` holding another value (the provider's
 * item id, `fc_…`) is kept.
 */
function renameToolIds(item: OpenAIAgentsItem, renames: ReadonlyMap<string, string>): unknown {
  const copy = copyPayload(item) as { [key: string]: unknown }
  const id = callIds(item)[0] ?? resultIds(item)[0]
  const to = id === undefined ? undefined : renames.get(id)
  if (to === undefined) return copy
  for (const field of ['callId', 'call_id', 'id']) if (copy[field] === id) copy[field] = to
  return copy
}

/** This format's "interrupted" result for call `callId`, shaped by the call that opened it. */
function interrupted(callId: string, content: string, call: OpenAIAgentsItem | undefined): OpenAIAgentsItem {
  switch (call === undefined ? 'function_call' : kindOf(call)) {
    case 'computer_call':
      // a computer call is answered by a screenshot: there is none, so its data is empty
      return { type: 'computer_call_result', callId, output: { type: 'computer_screenshot', data: '' } }
    case 'shell_call':
      return {
        type: 'shell_call_output',
        callId,
        status: 'incomplete',
        output: [{ stdout: '', stderr: content, outcome: { type: 'timeout' } }],
      }
    case 'apply_patch_call':
      return { type: 'apply_patch_call_output', callId, status: 'failed', output: content }
    case 'tool_search_call':
      return { type: 'tool_search_output', callId, execution: 'client', status: 'incomplete', tools: [] }
    default: {
      const name = call !== undefined && typeof call['name'] === 'string' ? call['name'] : ''
      return { type: 'function_call_result', callId, name, status: 'incomplete', output: content }
    }
  }
}

function preview(item: OpenAIAgentsItem): MessagePreview {
  const kind = kindOf(item)
  if (kind === 'message') return { role: String(item.role), kind: 'text', text: partsText(item['content']) }
  if (Object.hasOwn(CALLS, kind) || kind === 'hosted_tool_call' || kind === 'program') {
    const name = typeof item['name'] === 'string' ? item['name'] : kind
    const args = item['arguments'] ?? item['action'] ?? item['actions'] ?? item['operation'] ?? item['code']
    return callPreview(kind, callIds(item).length > 0, name, args)
  }
  if (RESULTS.has(kind) || kind === 'program_output')
    return resultPreview(kind, resultIds(item).length > 0, item['output'] ?? item['tools'])
  if (kind === 'reasoning') return { role: 'assistant', kind, text: partsText(item['content']) }
  return { role: typeof item.role === 'string' ? item.role : 'assistant', kind, text: '' }
}

/** An assistant message or a function call: the API ties it to its response's reasoning item by its `id`, which may go. */
function tiedToReasoning(item: Readonly<Record<string, unknown>>): boolean {
  const kind = kindOf(item)
  return (kind === 'message' && item['role'] === 'assistant') || kind === 'function_call'
}

/** Items a response outputs: assistant messages, reasoning, calls. An input (a user or system message, a result, a compaction) ends the response. */
function isResponseOutput(item: Readonly<Record<string, unknown>>): boolean {
  const kind = kindOf(item)
  if (kind === 'message') return item['role'] === 'assistant'
  return kind !== 'compaction' && !RESULTS.has(kind)
}

/**
 * The item kinds that go without their `id` when an earlier item sent it: every `AgentInputItem`'s
 * `id` is optional, and the SDK sends these to the Responses API without it where the API allows it.
 */
const ID_OPTIONAL = new Set([
  'message',
  'function_call',
  'function_call_result',
  'computer_call_result',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'tool_search_call',
  'tool_search_output',
  'compaction',
])

/**
 * What becomes of an item (not a reasoning item: a repeat is left out) under an id an earlier item
 * sent (the Responses API refuses one item id twice): a kind the API takes without an `id` goes
 * without it; a hosted tool call or a program item (their Responses `id` required) is left
 * out when it repeats the first one byte for byte; a computer call (its `id` required, and it opens a
 * call) and an unknown kind go as they are.
 */
function repeatedItemId(item: Readonly<Record<string, unknown>>): RepeatedItemId {
  const kind = kindOf(item)
  if (ID_OPTIONAL.has(kind)) return 'without-id'
  return kind === 'hosted_tool_call' || kind === 'program' || kind === 'program_output' ? 'left-out-if-same' : 'as-is'
}

const ITEM_ID_RULES: ItemIdRules = {
  placeholder: () => false,
  reasoning: (item) => kindOf(item) === 'reasoning',
  tiedToReasoning,
  endsResponse: (item) => !isResponseOutput(item),
  repeated: repeatedItemId,
}

/** `providerData` is the provider's data: redaction keeps none of its strings. */
const opaqueField: OpaqueField = (key) => key === 'providerData'

/**
 * `openai-agents`: items of the OpenAI Agents SDK (`AgentInputItem`, what `result.history` and
 * `result.output` hold), one per message, camelCase as the SDK writes them. Messages need a role
 * (`user`, `system`, `assistant`) and content (an assistant message also a `status`); each known item
 * kind needs what the SDK's schema requires; an item of a kind this version does not know is kept
 * verbatim.
 *
 * Pairing by `callId`: `function_call` ↔ `function_call_result`, `computer_call` ↔
 * `computer_call_result`, `shell_call` ↔ `shell_call_output`, `apply_patch_call` ↔
 * `apply_patch_call_output`, a client `tool_search_call` ↔ `tool_search_output`. A `hosted_tool_call`
 * carries its own output and opens nothing. The "interrupted" result is the answering kind's own
 * item (a `function_call_result` with the call's `name`, status `incomplete` and the text as
 * `output`, …). Each item `id` is sent once (the Responses API behind the SDK refuses one item id
 * twice): a later item under an id already sent goes without it, or is left out when it is a
 * reasoning item or a byte-for-byte repeat of a hosted tool call (docs/formats.md).
 */
export const openAIAgentsFormat: MessageFormat<OpenAIAgentsItem> = {
  name: OPENAI_AGENTS_FORMAT,
  redactedPayload: (payload, content) => structuralRedaction(payload, content, opaqueField),
  schema,
  toolCalls: callIds,
  toolResults: resultIds,
  interruptedResults: (ids, content, call) => ids.map((id) => interrupted(id, content, call)),
  renameToolIds,
  toWire: copyPayload,
  wireRun: (copies) => sendEachItemIdOnce(copies, ITEM_ID_RULES),
  preview,
}
