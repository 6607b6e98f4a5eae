import type { AiSdkModelMessage } from '@turnlog/core'
import fc from 'fast-check'
import { jsonValueArb, toolCallIdArb, weirdStringArb } from '../arbitraries.js'

type Part = { readonly [key: string]: unknown }

const toolNameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/)
const providerOptionsArb = fc.record({ anthropic: fc.record({ signature: weirdStringArb }) })

const textArb = fc.record(
  { type: fc.constant('text'), text: weirdStringArb, providerOptions: providerOptionsArb },
  { requiredKeys: ['type', 'text'] },
)
const imageArb = fc.record(
  { type: fc.constant('image'), image: weirdStringArb, mediaType: weirdStringArb },
  { requiredKeys: ['type', 'image'] },
)
const fileArb = fc.record(
  { type: fc.constant('file'), data: weirdStringArb, mediaType: weirdStringArb, filename: weirdStringArb },
  { requiredKeys: ['type', 'data', 'mediaType'] },
)
const reasoningArb = fc.record(
  { type: fc.constant('reasoning'), text: weirdStringArb, providerOptions: providerOptionsArb },
  { requiredKeys: ['type', 'text'] },
)
const futureArb = fc.record({ type: fc.constantFrom('future-kind', 'citation'), body: jsonValueArb })

/** Every `ToolResultOutput` type, plus one a later SDK may add. */
const outputArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ type: fc.constantFrom('text', 'error-text'), value: weirdStringArb }),
  fc.record({ type: fc.constantFrom('json', 'error-json'), value: jsonValueArb }),
  fc.record({ type: fc.constant('execution-denied'), reason: weirdStringArb }, { requiredKeys: ['type'] }),
  fc.record({
    type: fc.constant('content'),
    value: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text: weirdStringArb }),
        fc.record({ type: fc.constant('image-url'), url: weirdStringArb }),
      ),
      { maxLength: 2 },
    ),
  }),
  fc.record({ type: fc.constant('future-output'), blob: jsonValueArb }),
)

function toolCallArb(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<Part> {
  return fc.record(
    { type: fc.constant('tool-call'), toolCallId, toolName: toolNameArb, input: jsonValueArb, providerExecuted: fc.boolean() },
    { requiredKeys: ['type', 'toolCallId', 'toolName', 'input'] },
  )
}
function toolResultArb(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<Part> {
  return fc.record({ type: fc.constant('tool-result'), toolCallId, toolName: toolNameArb, output: outputArb })
}

/**
 * Valid `ai-sdk-model` payloads (the AI SDK's `ModelMessage`, v6) for every role, whose tool calls and
 * results take their ids from `toolCallId` (a small pool makes calls and results meet). Every part
 * kind, every tool output type, approvals, unknown part kinds; strings from {@link weirdStringArb}
 * (NUL, lone surrogates).
 */
export function aiSdkModelPayloadArbWith(toolCallId: fc.Arbitrary<string>): fc.Arbitrary<AiSdkModelMessage> {
  const content = (parts: fc.Arbitrary<Part>): fc.Arbitrary<string | Part[]> => fc.oneof(weirdStringArb, fc.array(parts, { maxLength: 4 }))
  const message = fc.oneof(
    fc.record({ role: fc.constant('system'), content: weirdStringArb }),
    fc.record(
      { role: fc.constant('user'), content: content(fc.oneof(textArb, imageArb, fileArb, futureArb)), providerOptions: providerOptionsArb },
      { requiredKeys: ['role', 'content'] },
    ),
    fc.record({
      role: fc.constant('assistant'),
      content: content(
        fc.oneof(
          { weight: 2, arbitrary: textArb },
          { weight: 1, arbitrary: reasoningArb },
          { weight: 1, arbitrary: fileArb },
          { weight: 3, arbitrary: toolCallArb(toolCallId) },
          { weight: 1, arbitrary: toolResultArb(toolCallId) },
          { weight: 1, arbitrary: fc.record({ type: fc.constant('tool-approval-request'), approvalId: weirdStringArb, toolCallId }) },
          { weight: 1, arbitrary: futureArb },
        ),
      ),
    }),
    fc.record({
      role: fc.constant('tool'),
      content: fc.array(
        fc.oneof(
          { weight: 4, arbitrary: toolResultArb(toolCallId) },
          {
            weight: 1,
            arbitrary: fc.record(
              { type: fc.constant('tool-approval-response'), approvalId: weirdStringArb, approved: fc.boolean(), reason: weirdStringArb },
              { requiredKeys: ['type', 'approvalId', 'approved'] },
            ),
          },
          { weight: 1, arbitrary: futureArb },
        ),
        { maxLength: 3 },
      ),
    }),
  )
  return message.map((m) => m as unknown as AiSdkModelMessage)
}

/** Valid `ai-sdk-model` payloads with call ids from {@link toolCallIdArb} (see {@link aiSdkModelPayloadArbWith}). */
export const aiSdkModelPayloadArb: fc.Arbitrary<AiSdkModelMessage> = aiSdkModelPayloadArbWith(toolCallIdArb)
