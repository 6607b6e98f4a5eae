/**
 * fast-check arbitraries for `openai-agents` payloads (one Agents SDK `AgentInputItem` each).
 * @packageDocumentation
 */
import fc from 'fast-check'
import type { OpenAIAgentsItem } from '@turnlog/core'
import { toolCallIdArb, weirdStringArb } from '../arbitraries.js'
import { argumentsArb, extraValueArb, futureTypeArb, itemArb, RESERVED_ITEM_KEYS, toolNameArb } from './item-arbitrary-kit.js'

type Fields = [string, unknown][]
const item = (known: fc.Arbitrary<Fields>): fc.Arbitrary<OpenAIAgentsItem> =>
  itemArb(known, RESERVED_ITEM_KEYS) as fc.Arbitrary<OpenAIAgentsItem>
const providerDataArb = fc.option(fc.dictionary(fc.stringMatching(/^[a-zA-Z]{1,8}$/), extraValueArb, { maxKeys: 2 }), { nil: undefined })

const userPartArb = fc.oneof(
  weirdStringArb.map((text) => ({ type: 'input_text', text })),
  fc.webUrl().map((image) => ({ type: 'input_image', image })),
  weirdStringArb.map((transcript) => ({ type: 'audio', audio: 'UklGRg==', transcript })),
  weirdStringArb.map((v) => ({ type: 'input_future_part', v })),
)
const assistantPartArb = fc.oneof(
  weirdStringArb.map((text) => ({ type: 'output_text', text })),
  weirdStringArb.map((refusal) => ({ type: 'refusal', refusal })),
)

/** The item kinds that open a call by `callId`: function, computer, shell and apply-patch calls. */
export const openAIAgentsCallArb: fc.Arbitrary<OpenAIAgentsItem> = fc.oneof(
  item(
    fc.tuple(toolCallIdArb, toolNameArb, argumentsArb, providerDataArb).map(([callId, name, args, pd]): Fields => [
      ['type', 'function_call'],
      ['callId', callId],
      ['name', name],
      ['arguments', args],
      ['providerData', pd],
    ]),
  ),
  item(
    toolCallIdArb.map((callId): Fields => [
      ['type', 'computer_call'],
      ['callId', callId],
      ['status', 'completed'],
      ['action', { type: 'screenshot' }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, fc.array(weirdStringArb, { maxLength: 3 })).map(([callId, commands]): Fields => [
      ['type', 'shell_call'],
      ['callId', callId],
      ['action', { commands }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([callId, path]): Fields => [
      ['type', 'apply_patch_call'],
      ['callId', callId],
      ['status', 'completed'],
      ['operation', { type: 'delete_file', path }],
    ]),
  ),
)

const resultArb: fc.Arbitrary<OpenAIAgentsItem> = fc.oneof(
  item(
    fc
      .tuple(
        toolCallIdArb,
        toolNameArb,
        fc.oneof(
          weirdStringArb,
          weirdStringArb.map((text) => ({ type: 'text', text })),
        ),
      )
      .map(([callId, name, output]): Fields => [
        ['type', 'function_call_result'],
        ['callId', callId],
        ['name', name],
        ['status', 'completed'],
        ['output', output],
      ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([callId, data]): Fields => [
      ['type', 'computer_call_result'],
      ['callId', callId],
      ['output', { type: 'computer_screenshot', data }],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb, weirdStringArb).map(([callId, stdout, stderr]): Fields => [
      ['type', 'shell_call_output'],
      ['callId', callId],
      ['output', [{ stdout, stderr, outcome: { type: 'exit', exitCode: 1 } }]],
    ]),
  ),
  item(
    fc.tuple(toolCallIdArb, weirdStringArb).map(([callId, output]): Fields => [
      ['type', 'apply_patch_call_output'],
      ['callId', callId],
      ['status', 'failed'],
      ['output', output],
    ]),
  ),
)

/**
 * Valid `openai-agents` payloads: system, user (string or parts, unknown part kinds among them) and
 * assistant messages, every call kind and its result ({@link openAIAgentsCallArb}), hosted tool
 * calls, reasoning, compaction, `unknown` items and future item kinds. Texts, arguments, outputs and
 * call ids are weird strings (NUL, lone surrogates, astral characters); items carry unknown fields
 * and `providerData` in random key order; no number is `-0`.
 */
export const openAIAgentsItemArb: fc.Arbitrary<OpenAIAgentsItem> = fc.oneof(
  item(
    weirdStringArb.map((content): Fields => [
      ['role', 'system'],
      ['content', content],
    ]),
  ),
  item(
    fc.tuple(fc.oneof(weirdStringArb, fc.array(userPartArb, { maxLength: 3 })), fc.boolean()).map(([content, typed]): Fields => [
      ['type', typed ? 'message' : undefined],
      ['role', 'user'],
      ['content', content],
    ]),
  ),
  item(
    fc
      .tuple(fc.array(assistantPartArb, { maxLength: 3 }), fc.constantFrom('completed', 'incomplete', 'in_progress'))
      .map(([content, status]): Fields => [
        ['type', 'message'],
        ['role', 'assistant'],
        ['status', status],
        ['content', content],
      ]),
  ),
  openAIAgentsCallArb,
  resultArb,
  item(
    fc.tuple(toolNameArb, fc.option(weirdStringArb, { nil: undefined })).map(([name, output]): Fields => [
      ['type', 'hosted_tool_call'],
      ['name', name],
      ['status', 'completed'],
      ['output', output],
    ]),
  ),
  item(
    fc.array(weirdStringArb, { maxLength: 2 }).map((texts): Fields => [
      ['type', 'reasoning'],
      ['content', texts.map((text) => ({ type: 'input_text', text }))],
    ]),
  ),
  item(
    weirdStringArb.map((encrypted): Fields => [
      ['type', 'compaction'],
      ['encrypted_content', encrypted],
    ]),
  ),
  item(
    providerDataArb.map((pd): Fields => [
      ['type', 'unknown'],
      ['providerData', pd],
    ]),
  ),
  item(
    fc.tuple(futureTypeArb, weirdStringArb).map(([type, v]): Fields => [
      ['type', type],
      ['callId', v],
    ]),
  ),
)
