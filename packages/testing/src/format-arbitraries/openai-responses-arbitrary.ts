/**
 * fast-check arbitraries for `openai-responses` payloads (one Responses API item each).
 * @packageDocumentation
 */
import fc from 'fast-check'
import type { OpenAIResponsesItem } from '@turnlog/core'
import { toolCallIdArb, weirdStringArb } from '../arbitraries.js'
import { argumentsArb, futureTypeArb, itemArb, RESERVED_ITEM_KEYS, toolNameArb } from './item-arbitrary-kit.js'

type Fields = [string, unknown][]
const item = (known: fc.Arbitrary<Fields>): fc.Arbitrary<OpenAIResponsesItem> =>
  itemArb(known, RESERVED_ITEM_KEYS) as fc.Arbitrary<OpenAIResponsesItem>
const itemIdArb = fc.stringMatching(/^[a-z]{2,4}_[A-Za-z0-9]{1,12}$/)

const inputPartArb = fc.oneof(
  weirdStringArb.map((text) => ({ type: 'input_text', text })),
  fc.webUrl().map((image_url) => ({ type: 'input_image', detail: 'auto', image_url })),
  weirdStringArb.map((v) => ({ type: 'input_future_part', v })),
)
const outputPartArb = fc.oneof(
  weirdStringArb.map((text) => ({ type: 'output_text', text, annotations: [] })),
  weirdStringArb.map((refusal) => ({ type: 'refusal', refusal })),
)

/** The item kinds that open a call: function, custom, computer, local shell, shell, apply-patch calls and MCP approval requests. */
export const openAIResponsesCallArb: fc.Arbitrary<OpenAIResponsesItem> = fc.oneof(
  item(
    fc.tuple(toolCallIdArb, toolNameArb, argumentsArb).map(([id, name, args]): Fields => [
      ['type', 'function_call'],
      ['call_id', id],
      ['name', name],
      ['arguments', args],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, toolNameArb, weirdStringArb).map(([id, name, input]): Fields => [
      ['type', 'custom_tool_call'],
      ['call_id', id],
      ['name', name],
      ['input', input],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, itemIdArb).map(([id, itemId]): Fields => [
      ['type', 'computer_call'],
      ['id', itemId],
      ['call_id', id],
      ['status', 'completed'],
      ['pending_safety_checks', []],
      ['action', { type: 'screenshot' }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, itemIdArb, fc.array(weirdStringArb, { maxLength: 3 })).map(([id, itemId, command]): Fields => [
      ['type', 'local_shell_call'],
      ['id', itemId],
      ['call_id', id],
      ['status', 'completed'],
      ['action', { type: 'exec', command, env: {} }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, fc.array(weirdStringArb, { maxLength: 3 })).map(([id, commands]): Fields => [
      ['type', 'shell_call'],
      ['call_id', id],
      ['action', { commands }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb, weirdStringArb).map(([id, path, diff]): Fields => [
      ['type', 'apply_patch_call'],
      ['call_id', id],
      ['status', 'completed'],
      ['operation', { type: 'update_file', path, diff }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, toolNameArb, argumentsArb, weirdStringArb).map(([id, name, args, label]): Fields => [
      ['type', 'mcp_approval_request'],
      ['id', id],
      ['name', name],
      ['arguments', args],
      ['server_label', label],
    ]),
  ),
)

/** The item kinds that answer a call (each kind's result item). */
const resultArb: fc.Arbitrary<OpenAIResponsesItem> = fc.oneof(
  item(
    fc.tuple(toolCallIdArb, fc.oneof(weirdStringArb, fc.array(inputPartArb, { maxLength: 2 }))).map(([id, output]): Fields => [
      ['type', 'function_call_output'],
      ['call_id', id],
      ['output', output],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([id, output]): Fields => [
      ['type', 'custom_tool_call_output'],
      ['call_id', id],
      ['output', output],
    ]),
  ),
  item(
    toolCallIdArb.map((id): Fields => [
      ['type', 'computer_call_output'],
      ['call_id', id],
      ['output', { type: 'computer_screenshot', image_url: 'data:image/png;base64,AA==' }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([id, output]): Fields => [
      ['type', 'local_shell_call_output'],
      ['id', id],
      ['output', output],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb, weirdStringArb).map(([id, stdout, stderr]): Fields => [
      ['type', 'shell_call_output'],
      ['call_id', id],
      ['output', [{ stdout, stderr, outcome: { type: 'exit', exit_code: 0 } }]],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([id, output]): Fields => [
      ['type', 'apply_patch_call_output'],
      ['call_id', id],
      ['status', 'completed'],
      ['output', output],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, fc.boolean()).map(([id, approve]): Fields => [
      ['type', 'mcp_approval_response'],
      ['approval_request_id', id],
      ['approve', approve],
    ]),
  ),
)

/**
 * Valid `openai-responses` payloads: easy input messages (string or parts content, unknown part
 * kinds among them), output messages, every call kind and its result kind ({@link openAIResponsesCallArb}),
 * reasoning, hosted calls (web search, MCP call), compaction, item references and future item kinds.
 * Texts, arguments, outputs and call ids are weird strings (NUL, lone surrogates, astral
 * characters); items carry unknown fields in random key order; no number is `-0`.
 */
export const openAIResponsesItemArb: fc.Arbitrary<OpenAIResponsesItem> = fc.oneof(
  item(
    fc
      .tuple(
        fc.constantFrom('user', 'system', 'developer', 'assistant'),
        fc.oneof(weirdStringArb, fc.array(inputPartArb, { maxLength: 3 })),
        fc.boolean(),
      )
      .map(([role, content, typed]): Fields => [
        ['role', role],
        ['content', content],
        ['type', typed ? 'message' : undefined],
      ]),
  ),
  item(
    fc.tuple(itemIdArb, fc.array(outputPartArb, { maxLength: 3 })).map(([id, content]): Fields => [
      ['id', id],
      ['type', 'message'],
      ['role', 'assistant'],
      ['status', 'completed'],
      ['content', content],
    ]),
  ),
  openAIResponsesCallArb,
  resultArb,
  item(
    fc.tuple(itemIdArb, fc.array(weirdStringArb, { maxLength: 2 })).map(([id, texts]): Fields => [
      ['type', 'reasoning'],
      ['id', id],
      ['summary', texts.map((text) => ({ type: 'summary_text', text }))],
    ]),
  ),
  item(
    fc.tuple(itemIdArb, weirdStringArb).map(([id, query]): Fields => [
      ['type', 'web_search_call'],
      ['id', id],
      ['status', 'completed'],
      ['action', { type: 'search', query }],
    ]),
  ),
  item(
    fc.tuple(itemIdArb, toolNameArb, argumentsArb, weirdStringArb).map(([id, name, args, out]): Fields => [
      ['type', 'mcp_call'],
      ['id', id],
      ['name', name],
      ['arguments', args],
      ['server_label', 'srv'],
      ['output', out],
    ]),
  ),
  item(
    weirdStringArb.map((encrypted): Fields => [
      ['type', 'compaction'],
      ['encrypted_content', encrypted],
    ]),
  ),
  item(
    fc.tuple(itemIdArb, fc.boolean()).map(([id, typed]): Fields => [
      ['type', typed ? 'item_reference' : undefined],
      ['id', id],
    ]),
  ),
  item(
    fc.tuple(futureTypeArb, weirdStringArb).map(([type, v]): Fields => [
      ['type', type],
      ['call_id', v],
    ]),
  ),
)
