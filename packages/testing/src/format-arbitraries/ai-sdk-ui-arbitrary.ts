import type { AiSdkUiMessage } from '@turnlog/core'
import fc from 'fast-check'
import { jsonValueArb, nonEmptyWeirdStringArb, toolCallIdArb, weirdStringArb } from '../arbitraries.js'

type Part = { readonly [key: string]: unknown }

const toolNameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/)
const metadataArb = fc.record({ openai: fc.record({ itemId: weirdStringArb }) })
const opt = { requiredKeys: [] as never[] }

/** The state-specific fields of a tool part, for every state of `UIToolInvocation`. */
const toolStateArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record(
    {
      state: fc.constant('input-streaming'),
      input: jsonValueArb,
      rawInput: weirdStringArb,
      inputEncoding: fc.constantFrom('json', 'text'),
    },
    { requiredKeys: ['state'] },
  ),
  fc.record({ state: fc.constant('input-available'), input: jsonValueArb }),
  fc.record({ state: fc.constant('approval-requested'), input: jsonValueArb, approval: fc.record({ id: weirdStringArb }) }),
  fc.record({
    state: fc.constant('approval-responded'),
    input: jsonValueArb,
    approval: fc.record({ id: weirdStringArb, approved: fc.boolean(), reason: weirdStringArb }, { requiredKeys: ['id', 'approved'] }),
  }),
  fc.record(
    { state: fc.constant('output-available'), input: jsonValueArb, output: jsonValueArb, preliminary: fc.boolean() },
    { requiredKeys: ['state', 'input', 'output'] },
  ),
  fc.record(
    { state: fc.constant('output-error'), input: jsonValueArb, errorText: weirdStringArb },
    { requiredKeys: ['state', 'errorText'] },
  ),
  fc.record({
    state: fc.constant('output-denied'),
    input: jsonValueArb,
    approval: fc.record({ id: weirdStringArb, approved: fc.constant(false) }),
  }),
)

/** A tool part (`tool-<name>` or `dynamic-tool`) whose call id comes from `toolCallId`. */
function toolPartArb(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<Part> {
  return fc
    .tuple(toolNameArb, fc.boolean(), toolCallId, fc.record({ title: weirdStringArb, providerExecuted: fc.boolean() }, opt), toolStateArb)
    .map(([name, dynamic, id, extra, state]) =>
      dynamic
        ? { type: 'dynamic-tool', toolName: name, toolCallId: id, ...extra, ...state }
        : { type: `tool-${name}`, toolCallId: id, ...extra, ...state },
    )
}

/** Every part kind of `UIMessagePart`, plus a part kind a later SDK may add (kept verbatim). */
function partArb(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<Part> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record(
        { type: fc.constant('text'), text: weirdStringArb, state: fc.constantFrom('streaming', 'done'), providerMetadata: metadataArb },
        { requiredKeys: ['type', 'text'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record(
        { type: fc.constant('reasoning'), text: weirdStringArb, state: fc.constantFrom('streaming', 'done') },
        { requiredKeys: ['type', 'text'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record(
        { type: fc.constant('source-url'), sourceId: weirdStringArb, url: weirdStringArb, title: weirdStringArb },
        { requiredKeys: ['type', 'sourceId', 'url'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record(
        {
          type: fc.constant('source-document'),
          sourceId: weirdStringArb,
          mediaType: weirdStringArb,
          title: weirdStringArb,
          filename: weirdStringArb,
        },
        { requiredKeys: ['type', 'sourceId', 'mediaType', 'title'] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.record(
        { type: fc.constant('file'), mediaType: weirdStringArb, url: weirdStringArb, filename: weirdStringArb },
        { requiredKeys: ['type', 'mediaType', 'url'] },
      ),
    },
    { weight: 1, arbitrary: fc.constant({ type: 'step-start' }) },
    {
      weight: 1,
      arbitrary: fc.record(
        { type: toolNameArb.map((n) => `data-${n}`), id: weirdStringArb, data: jsonValueArb },
        { requiredKeys: ['type', 'data'] },
      ),
    },
    { weight: 3, arbitrary: toolPartArb(toolCallId) },
    {
      weight: 1,
      arbitrary: fc.record({ type: fc.constantFrom('future-kind', 'citation-card'), body: jsonValueArb, label: nonEmptyWeirdStringArb }),
    },
  )
}

/**
 * Valid `ai-sdk-ui` payloads (the AI SDK's `UIMessage`, v6) whose tool parts take their call ids from
 * `toolCallId` (a small pool makes calls of several messages meet). Every part kind, tool parts in
 * every state, unknown part kinds; strings from {@link weirdStringArb} (NUL, lone surrogates).
 */
export function aiSdkUiPayloadArbWith(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<AiSdkUiMessage> {
  return fc
    .record(
      {
        id: weirdStringArb,
        role: fc.constantFrom('system', 'user', 'assistant'),
        metadata: jsonValueArb,
        parts: fc.array(partArb(toolCallId), { maxLength: 5 }),
      },
      { requiredKeys: ['id', 'role', 'parts'] },
    )
    .map((m) => m as unknown as AiSdkUiMessage)
}

/** Valid `ai-sdk-ui` payloads with call ids from {@link toolCallIdArb} (see {@link aiSdkUiPayloadArbWith}). */
export const aiSdkUiPayloadArb: fc.Arbitrary<AiSdkUiMessage> = aiSdkUiPayloadArbWith(toolCallIdArb)
