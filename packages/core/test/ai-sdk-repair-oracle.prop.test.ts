/**
 * Attacks the AI SDK formats' repair with the AI SDK itself as the oracle.
 *
 * `ai-sdk-ui` (docs/formats.md, `ai-sdk-ui`:
 * "the application calls `convertToModelMessages(toWire(messages))`"; "The repaired messages pass
 * `validateUIMessages`, and `convertToModelMessages` turns the part into an `error-text` tool result").
 * For random lists of UI messages over three call ids, in every tool-part state (streaming, available,
 * approval asked or answered, output, error, denied), static and dynamic parts, calls repeated in one
 * message and across messages: the repaired list passes the SDK's `validateUIMessages`, and the model
 * messages `convertToModelMessages` makes of it pair (turnlog's `ai-sdk-model` pairing: every tool call
 * answered once, no orphan, no call twice), which is what the provider checks.
 *
 * `ai-sdk-model` (docs/formats.md: the repair inserts a `tool` message of `error-text` results and
 * removes orphan and second results and repeated calls): every repaired message passes the SDK's own
 * `modelMessageSchema`.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { convertToModelMessages, modelMessageSchema, validateUIMessages, type UIMessage } from 'ai'
import { createMessage, toolPairing, toWire } from '@turnlog/core'

const RUNS = { numRuns: 150 }
const idArb = fc.constantFrom('call_a', 'call_b', 'call_c')

const partArb = fc.tuple(idArb, fc.nat(6), fc.boolean()).map(([id, state, dynamic]) => {
  const head = dynamic ? { type: 'dynamic-tool', toolName: 'f', toolCallId: id } : { type: 'tool-f', toolCallId: id }
  return [
    { ...head, state: 'input-streaming', input: {} },
    { ...head, state: 'input-available', input: { q: id } },
    { ...head, state: 'approval-requested', input: {}, approval: { id: `ap-${id}` } },
    { ...head, state: 'approval-responded', input: {}, approval: { id: `ap-${id}`, approved: dynamic } },
    { ...head, state: 'output-available', input: {}, output: `r ${id}` },
    { ...head, state: 'output-error', input: {}, errorText: 'boom' },
    { ...head, state: 'output-denied', input: {}, approval: { id: `ap-${id}`, approved: false } },
  ][state] as object
})

const messageArb = fc.oneof(
  fc
    .tuple(
      fc.array(fc.oneof(partArb, fc.constant({ type: 'text', text: 'working' }), fc.constant({ type: 'step-start' })), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.nat(99),
    )
    .map(([parts, n]) => ({ id: `a${n}`, role: 'assistant', parts })),
  fc.nat(99).map((n) => ({ id: `u${n}`, role: 'user', parts: [{ type: 'text', text: 'go on' }] })),
)

describe('ai-sdk-ui repair, checked by the AI SDK (property)', () => {
  it('ai-sdk-ui: the repaired list validates, and its model messages pair', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(messageArb, { minLength: 1, maxLength: 6 }), async (payloads) => {
        // given
        const messages = payloads.map((p) => createMessage<object>(p, { format: 'ai-sdk-ui' }))

        // when
        const wire = toWire(messages, { repairPairing: true }) as UIMessage[]
        if (wire.length === 0) return
        const validated = await validateUIMessages({ messages: wire })
        const model = await convertToModelMessages(validated)

        // then
        const pairing = toolPairing(model.map((m) => createMessage<object>(m as object, { format: 'ai-sdk-model' })))
        expect(pairing).toMatchObject({ unanswered: [], orphans: [], duplicates: [], duplicateCalls: [] })
      }),
      RUNS,
    )
  }, 60_000)

  it('ai-sdk-model: every repaired message passes the SDK schema, and the list pairs', () => {
    const callPart = idArb.map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'f', input: { q: id } }))
    const resultPart = idArb.map((id) => ({
      type: 'tool-result',
      toolCallId: id,
      toolName: 'f',
      output: { type: 'text', value: `r ${id}` },
    }))
    const modelArb = fc.oneof(
      fc
        .array(
          fc.oneof(
            callPart,
            fc.constant({ type: 'text', text: 'calling' }),
            resultPart.map((r) => ({ ...r, providerExecuted: true })),
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        )
        .map((content) => ({ role: 'assistant', content })),
      fc
        .array(fc.oneof(resultPart, fc.constant({ type: 'tool-approval-response', approvalId: 'ap1', approved: true })), {
          minLength: 1,
          maxLength: 3,
        })
        .map((content) => ({ role: 'tool', content })),
      fc.constant({ role: 'user', content: 'go on' }),
    )
    fc.assert(
      fc.property(fc.array(modelArb, { maxLength: 8 }), (payloads) => {
        // given
        const messages = payloads.map((p) => createMessage<object>(p, { format: 'ai-sdk-model' }))

        // when
        const wire = toWire(messages, { repairPairing: true })

        // then
        for (const w of wire) expect(modelMessageSchema.safeParse(w)).toMatchObject({ success: true })
        const again = wire.map((w) => createMessage<object>(w as object, { format: 'ai-sdk-model' }))
        expect(toolPairing(again)).toMatchObject({ ok: true })
      }),
      RUNS,
    )
  })
})
