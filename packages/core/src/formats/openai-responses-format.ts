import { z } from 'zod'
import { callPreview, copyPayload, resultPreview, structuralRedaction } from './item-format-kit.js'
import type { MessageFormat, MessagePreview } from './message-format.js'
import { sendEachItemIdOnce, type ItemIdRules, type RepeatedItemId } from './send-each-item-id-once.js'
import { REDACTED_CONTENT } from './structural-placeholder.js'
import { optionalString, partsSchema, partsText, typedItemSchema } from './typed-item-schema.js'

/** The name of the OpenAI Responses API format: one input or output item per message. */
export const OPENAI_RESPONSES_FORMAT = 'openai-responses'

/**
 * A payload of the `openai-responses` format: one Responses API item, as the `openai` SDK's
 * `ResponseInputItem` or `ResponseOutputItem` shapes it (a message, a function call or its output, a
 * reasoning item, a hosted tool call, an item reference, …). `type` is absent only on an easy input
 * message (`{ role, content }`) or an item reference (`{ id }`). Every field is kept verbatim; the
 * item's own `id` is the provider's, not turnlog's.
 */
export interface OpenAIResponsesItem {
  readonly type?: string
  readonly id?: string | null
  readonly role?: string
  readonly call_id?: string | null
  readonly [key: string]: unknown
}

const ROLES = z.enum(['user', 'assistant', 'system', 'developer'])
const text = z.looseObject({ type: z.string(), text: z.string() })
const MESSAGE_PARTS = partsSchema({
  input_text: text,
  output_text: text,
  refusal: z.looseObject({ type: z.literal('refusal'), refusal: z.string() }),
  input_image: z.looseObject({ type: z.literal('input_image'), image_url: optionalString, file_id: optionalString }),
  input_file: z.looseObject({
    type: z.literal('input_file'),
    file_data: z.string().optional(),
    file_id: optionalString,
    file_url: z.string().optional(),
    filename: z.string().optional(),
  }),
})
const Message = z.looseObject({
  type: z.literal('message').optional(),
  role: ROLES,
  content: z.union([z.string(), MESSAGE_PARTS]),
  id: z.string().optional(),
})
const ItemReference = z.looseObject({ type: z.literal('item_reference').nullable().optional(), id: z.string() })

const callId = z.string().min(1)
const TypeField = z.looseObject({ type: z.string() })
const output = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))])

/** The known item kinds: what the SDK types require of each (unknown fields are kept). */
const ITEM_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  message: Message,
  item_reference: ItemReference,
  function_call: z.looseObject({ type: z.literal('function_call'), call_id: callId, name: z.string(), arguments: z.string() }),
  function_call_output: z.looseObject({ type: z.literal('function_call_output'), call_id: callId.nullable().optional(), output }),
  custom_tool_call: z.looseObject({ type: z.literal('custom_tool_call'), call_id: callId, name: z.string(), input: z.string() }),
  custom_tool_call_output: z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: callId, output }),
  computer_call: z.looseObject({
    type: z.literal('computer_call'),
    call_id: callId,
    id: z.string(),
    status: z.string(),
    pending_safety_checks: z.array(z.unknown()),
  }),
  computer_call_output: z.looseObject({
    type: z.literal('computer_call_output'),
    call_id: callId,
    output: z.looseObject({ type: z.literal('computer_screenshot') }),
  }),
  local_shell_call: z.looseObject({
    type: z.literal('local_shell_call'),
    call_id: callId,
    id: z.string(),
    status: z.string(),
    action: z.looseObject({ type: z.string() }),
  }),
  local_shell_call_output: z
    .looseObject({ type: z.literal('local_shell_call_output'), id: z.string().optional(), call_id: callId.optional(), output: z.string() })
    .refine((o) => o.call_id !== undefined || (o.id !== undefined && o.id.length > 0), {
      message: 'a local_shell_call_output needs the call id (id or call_id)',
      path: ['id'],
    }),
  shell_call: z.looseObject({ type: z.literal('shell_call'), call_id: callId, action: z.looseObject({ commands: z.array(z.string()) }) }),
  shell_call_output: z.looseObject({
    type: z.literal('shell_call_output'),
    call_id: callId,
    output: z.array(z.looseObject({ stdout: z.string(), stderr: z.string() })),
  }),
  apply_patch_call: z.looseObject({
    type: z.literal('apply_patch_call'),
    call_id: callId,
    status: z.string(),
    operation: z.looseObject({ type: z.string(), path: z.string() }),
  }),
  apply_patch_call_output: z.looseObject({ type: z.literal('apply_patch_call_output'), call_id: callId, status: z.string() }),
  mcp_approval_request: z.looseObject({
    type: z.literal('mcp_approval_request'),
    id: callId,
    name: z.string(),
    arguments: z.string(),
    server_label: z.string(),
  }),
  mcp_approval_response: z.looseObject({ type: z.literal('mcp_approval_response'), approval_request_id: callId, approve: z.boolean() }),
  mcp_call: z.looseObject({
    type: z.literal('mcp_call'),
    id: z.string(),
    name: z.string(),
    arguments: z.string(),
    server_label: z.string(),
  }),
  mcp_list_tools: z.looseObject({
    type: z.literal('mcp_list_tools'),
    id: z.string(),
    server_label: z.string(),
    tools: z.array(z.unknown()),
  }),
  tool_search_call: z.looseObject({
    type: z.literal('tool_search_call'),
    call_id: optionalString,
    execution: z.enum(['server', 'client']).optional(),
  }),
  tool_search_output: z.looseObject({
    type: z.literal('tool_search_output'),
    call_id: optionalString,
    execution: z.enum(['server', 'client']).optional(),
    tools: z.array(z.unknown()),
  }),
  reasoning: z.looseObject({
    type: z.literal('reasoning'),
    id: z.string(),
    summary: z.array(z.looseObject({ type: z.string() })),
    content: z.array(z.looseObject({ type: z.string() })).optional(),
    encrypted_content: optionalString,
  }),
  compaction: z.looseObject({ type: z.literal('compaction'), encrypted_content: z.string() }),
  file_search_call: z.looseObject({
    type: z.literal('file_search_call'),
    id: z.string(),
    queries: z.array(z.string()),
    status: z.string(),
  }),
  web_search_call: z.looseObject({ type: z.literal('web_search_call'), id: z.string(), status: z.string() }),
  code_interpreter_call: z.looseObject({
    type: z.literal('code_interpreter_call'),
    id: z.string(),
    code: z.string().nullable(),
    container_id: z.string(),
    status: z.string(),
  }),
  image_generation_call: z.looseObject({
    type: z.literal('image_generation_call'),
    id: z.string(),
    result: z.string().nullable(),
    status: z.string(),
  }),
}

/** The item kinds that open a call, with the field holding the call id, and the result kind that answers it. */
const CALLS: Readonly<Record<string, { readonly id: string; readonly result: string }>> = {
  function_call: { id: 'call_id', result: 'function_call_output' },
  custom_tool_call: { id: 'call_id', result: 'custom_tool_call_output' },
  computer_call: { id: 'call_id', result: 'computer_call_output' },
  local_shell_call: { id: 'call_id', result: 'local_shell_call_output' },
  shell_call: { id: 'call_id', result: 'shell_call_output' },
  apply_patch_call: { id: 'call_id', result: 'apply_patch_call_output' },
  mcp_approval_request: { id: 'id', result: 'mcp_approval_response' },
  tool_search_call: { id: 'call_id', result: 'tool_search_output' },
}

/** The result kinds, with the field holding the id of the call they answer. */
const RESULTS: Readonly<Record<string, string>> = {
  function_call_output: 'call_id',
  custom_tool_call_output: 'call_id',
  computer_call_output: 'call_id',
  local_shell_call_output: 'call_id',
  shell_call_output: 'call_id',
  apply_patch_call_output: 'call_id',
  mcp_approval_response: 'approval_request_id',
  tool_search_output: 'call_id',
}

/** The item's kind: its `type`, or `message` / `item_reference` for an item without one. */
function kindOf(item: Readonly<Record<string, unknown>>): string {
  const type = item['type']
  if (typeof type === 'string') return type
  // no type: an easy input message (`{ role, content }`) or an item reference (`{ id }`)
  if (type === undefined || type === null) return 'id' in item && !('role' in item) ? 'item_reference' : 'message'
  return ''
}

const schema = typedItemSchema((item) => {
  const kind = kindOf(item)
  if (Object.hasOwn(ITEM_SCHEMAS, kind)) return ITEM_SCHEMAS[kind]
  // a type that is not a string is refused; a string type this version does not know is kept verbatim
  return kind === '' ? TypeField : undefined
})

function stringField(item: OpenAIResponsesItem, field: string): string | undefined {
  const v = item[field]
  return typeof v === 'string' && v.length > 0 ? v : undefined
}

function callIds(item: OpenAIResponsesItem): string[] {
  const kind = kindOf(item)
  if (!Object.hasOwn(CALLS, kind)) return []
  // a server-executed tool search carries its own result: it opens nothing
  if (kind === 'tool_search_call' && item['execution'] === 'server') return []
  const id = stringField(item, CALLS[kind]!.id)
  return id === undefined ? [] : [id]
}

function resultIds(item: OpenAIResponsesItem): string[] {
  const kind = kindOf(item)
  if (!Object.hasOwn(RESULTS, kind)) return []
  if (kind === 'tool_search_output' && item['execution'] === 'server') return []
  // a local_shell_call_output names the call by `call_id` or, in the SDK's type, by `id`
  const id = stringField(item, RESULTS[kind]!) ?? (kind === 'local_shell_call_output' ? stringField(item, 'id') : undefined)
  return id === undefined ? [] : [id]
}

/**
 * The wire copy of an item with the call id it opens or answers renamed by `renames`: the field pairing
 * reads, and the item's other id field (`id`, `call_id`) where it holds the same id (a
 * `local_shell_call_output` naming its call in both; a bridge that sets an item's `id` to its
 * `call_id`, which the API, wanting every item id once, would refuse twice). An item id holding
 * another value (`fc_…`) is kept: it is the item's own, and the API ties it to its reasoning item.
 */
function renameToolIds(item: OpenAIResponsesItem, renames: ReadonlyMap<string, string>): unknown {
  const copy = copyPayload(item) as { [key: string]: unknown }
  const kind = kindOf(item)
  // an item opens a call or answers one, never both
  const id = callIds(item)[0] ?? resultIds(item)[0]
  const to = id === undefined ? undefined : renames.get(id)
  if (to === undefined) return copy
  const pairingField = Object.hasOwn(CALLS, kind) ? CALLS[kind]!.id : RESULTS[kind]!
  for (const field of new Set([pairingField, 'call_id', 'id'])) if (copy[field] === id) copy[field] = to
  return copy
}

/** This format's "interrupted" result for call `id`, shaped by the kind of the call that opened it. */
function interrupted(id: string, content: string, callKind: string): OpenAIResponsesItem {
  switch (callKind) {
    case 'custom_tool_call':
      return { type: 'custom_tool_call_output', call_id: id, output: content }
    case 'computer_call':
      // a computer call is answered by a screenshot: there is none, so the item says incomplete
      return { type: 'computer_call_output', call_id: id, output: { type: 'computer_screenshot' }, status: 'incomplete' }
    case 'local_shell_call':
      return { type: 'local_shell_call_output', id, output: content, status: 'incomplete' }
    case 'shell_call':
      return {
        type: 'shell_call_output',
        call_id: id,
        output: [{ stdout: '', stderr: content, outcome: { type: 'timeout' } }],
        status: 'incomplete',
      }
    case 'apply_patch_call':
      return { type: 'apply_patch_call_output', call_id: id, status: 'failed', output: content }
    case 'mcp_approval_request':
      return { type: 'mcp_approval_response', approval_request_id: id, approve: false, reason: content }
    case 'tool_search_call':
      return { type: 'tool_search_output', call_id: id, execution: 'client', tools: [], status: 'incomplete' }
    default:
      return { type: 'function_call_output', call_id: id, output: content }
  }
}

/** Whether `parts` (a reasoning item's `summary` or `content`) holds a part whose text is the redacted marker. */
function showsRedacted(parts: unknown): boolean {
  return (
    Array.isArray(parts) && parts.some((p) => typeof p === 'object' && p !== null && (p as { text?: unknown }).text === REDACTED_CONTENT)
  )
}

/**
 * A `reasoning` or `compaction` item as a redaction leaves it (its encrypted content, its summary or
 * reasoning text the redacted marker). OpenAI decrypts an item's encrypted content and refuses one it
 * cannot (`invalid_encrypted_content`); a reasoning item without it is read by its id (store: true),
 * which would bring the redacted reasoning back.
 */
function isEncryptedPlaceholder(item: Readonly<Record<string, unknown>>): boolean {
  const kind = kindOf(item)
  if (kind === 'compaction') return item['encrypted_content'] === REDACTED_CONTENT
  return (
    kind === 'reasoning' &&
    (item['encrypted_content'] === REDACTED_CONTENT || showsRedacted(item['summary']) || showsRedacted(item['content']))
  )
}

/** The output items of a response whose own `id` is optional in `input` (an assistant message, a function or custom tool call). */
function hasOptionalId(item: Readonly<Record<string, unknown>>): boolean {
  const kind = kindOf(item)
  return (kind === 'message' && item['role'] === 'assistant') || kind === 'function_call' || kind === 'custom_tool_call'
}

/**
 * Items a response outputs (after its reasoning, before the next input): assistant messages, the
 * model's calls and the hosted tools' calls. An input (a user, system or developer message, a call's
 * output, an item reference, a compaction) ends the response.
 */
function isResponseOutput(item: Readonly<Record<string, unknown>>): boolean {
  const kind = kindOf(item)
  if (kind === 'message') return item['role'] === 'assistant'
  return kind !== 'item_reference' && kind !== 'compaction' && !Object.hasOwn(RESULTS, kind)
}

/**
 * The item kinds whose `id` is optional in the API's input (the `openai` SDK's `ResponseInputItem`):
 * a later item under an id already sent goes without it. A message's `id` is optional whatever its
 * role (an input message has none; an assistant message goes without it as an easy input message).
 */
const ID_OPTIONAL = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'computer_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_approval_response',
  'tool_search_call',
  'tool_search_output',
  'compaction',
  'compaction_trigger',
  'additional_tools',
  'configuration_update',
])

/** The item kinds whose `id` the API requires and that open or answer nothing: a byte-for-byte repeat is left out. */
const ID_REQUIRED_PAIRING_NOTHING = new Set([
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
  'mcp_list_tools',
  'program',
  'program_output',
])

/**
 * What becomes of an item (not a reasoning item: a repeat is left out) under an id an earlier item
 * (`first`) sent: an item reference names an item already in the request (left out); a kind whose
 * `id` is optional goes without it; a hosted call (its `id` required) is left out when it
 * repeats the first one byte for byte or the first is a reference to it; a call or result whose `id` is
 * required, and an unknown kind, go as they are.
 */
function repeatedItemId(item: Readonly<Record<string, unknown>>, first: Readonly<Record<string, unknown>>): RepeatedItemId {
  const kind = kindOf(item)
  if (kind === 'item_reference') return 'left-out'
  if (ID_OPTIONAL.has(kind)) return 'without-id'
  if (!ID_REQUIRED_PAIRING_NOTHING.has(kind)) return 'as-is'
  return kindOf(first) === 'item_reference' ? 'left-out' : 'left-out-if-same'
}

const ITEM_ID_RULES: ItemIdRules = {
  placeholder: isEncryptedPlaceholder,
  reasoning: (item) => kindOf(item) === 'reasoning',
  tiedToReasoning: hasOptionalId,
  endsResponse: (item) => !isResponseOutput(item),
  repeated: repeatedItemId,
}

/**
 * What is sent of wire copies of Responses items: a redacted reasoning or compaction item
 * ({@link isEncryptedPlaceholder}) is left out, and each item id is sent once
 * ({@link sendEachItemIdOnce}, {@link repeatedItemId}): the API refuses an input with one item id
 * twice ("Duplicate item found with id …"). The items that followed a left-out reasoning item (a
 * placeholder, or a repeat) in its response (up to the next reasoning item or input) are
 * sent without their own `id` where the API lets an input item go without one: the API ties an output
 * item to its response's reasoning item by id and refuses it without that item ("provided without its
 * required 'reasoning' item"). Their `call_id` stays, so their outputs still pair.
 */
function sendableItems(copies: unknown[]): unknown[] {
  return sendEachItemIdOnce(copies, ITEM_ID_RULES)
}

function preview(item: OpenAIResponsesItem): MessagePreview {
  const kind = kindOf(item)
  if (kind === 'message') return { role: String(item.role), kind: 'text', text: partsText(item['content']) }
  // a call that opens nothing (a server tool search) shows as its own item type
  if (Object.hasOwn(CALLS, kind)) {
    const args = item['arguments'] ?? item['input'] ?? item['action'] ?? item['operation']
    return callPreview(kind, callIds(item).length > 0, stringField(item, 'name') ?? kind, args)
  }
  if (Object.hasOwn(RESULTS, kind)) {
    const out = item['output'] ?? item['reason'] ?? item['approve'] ?? item['tools']
    return resultPreview(kind, resultIds(item).length > 0, out)
  }
  if (kind === 'reasoning') return { role: 'assistant', kind, text: partsText(item['summary']) }
  if (kind === 'item_reference') return { role: 'reference', kind, text: String(item.id) }
  const label = stringField(item, 'name') ?? stringField(item, 'status') ?? ''
  return { role: typeof item.role === 'string' ? item.role : 'assistant', kind, text: label }
}

/**
 * `openai-responses`: OpenAI Responses API items, one per message (what `response.output` holds and
 * what `input` takes). Messages need a role and content; each known item kind needs what the SDK's
 * type requires; an item of a kind this version does not know is kept verbatim.
 *
 * Pairing: `function_call`, `custom_tool_call`, `computer_call`, `local_shell_call`, `shell_call`,
 * `apply_patch_call` and a client `tool_search_call` open their `call_id`, answered by the matching
 * `…_output` item's `call_id` (a `local_shell_call_output` may name it `id`); an
 * `mcp_approval_request` opens its `id`, answered by an `mcp_approval_response`'s
 * `approval_request_id`. Hosted calls that carry their own result (web and file search, code
 * interpreter, image generation, `mcp_call`, server tool search) open nothing. The "interrupted"
 * result is the answering kind's own item (`function_call_output` with the text as `output`, …).
 * A redacted reasoning or compaction item is never sent; each item id is sent once (a later item
 * under an id already sent goes without it, or is left out when it is a reasoning item, a reference or
 * a byte-for-byte repeat of a hosted call); the items of its response that follow a left-out
 * reasoning item go without their own `id` (docs/formats.md).
 */
export const openAIResponsesFormat: MessageFormat<OpenAIResponsesItem> = {
  name: OPENAI_RESPONSES_FORMAT,
  redactedPayload: structuralRedaction,
  schema,
  toolCalls: callIds,
  toolResults: resultIds,
  interruptedResults: (ids, content, call) =>
    ids.map((id) => interrupted(id, content, call === undefined ? 'function_call' : kindOf(call))),
  renameToolIds,
  toWire: copyPayload,
  wireRun: sendableItems,
  preview,
}
