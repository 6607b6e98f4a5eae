import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, messageFormat } from '@turnlog/core'
import {
  aiSdkModelPayloadArb,
  aiSdkUiPayloadArb,
  anthropicAnsweringArb,
  anthropicCallingArb,
  anthropicPayloadArb,
  chatPayloadArb,
  openAIAgentsCallArb,
  openAIAgentsItemArb,
  openAIResponsesCallArb,
  openAIResponsesItemArb,
} from '@turnlog/testing'

const RUNS = { numRuns: 300 }

/**
 * `renameToolIds` of every built-in format (what `toWire(…, { repairPairing: true })` uses for a
 * call id called again after its result): it renames exactly the ids pairing reads, in calls and
 * results, keeps the payload valid, changes nothing else, and never touches the stored payload.
 */
const TOOL_USE_IDS = fc.uniqueArray(fc.constantFrom('toolu_a', 'toolu_b', 'toolu_c'), { minLength: 1, maxLength: 3 })
/** Each format's payloads, mixed with ones that open or answer calls where the general arbitrary seldom does. */
const FORMATS: readonly (readonly [string, fc.Arbitrary<unknown>])[] = [
  ['openai-chat', chatPayloadArb],
  ['openai-responses', fc.oneof(openAIResponsesItemArb, openAIResponsesCallArb)],
  ['openai-agents', fc.oneof(openAIAgentsItemArb, openAIAgentsCallArb)],
  ['anthropic', fc.oneof(anthropicPayloadArb, TOOL_USE_IDS.chain(anthropicCallingArb), TOOL_USE_IDS.chain(anthropicAnsweringArb))],
  ['ai-sdk-model', aiSdkModelPayloadArb],
  ['ai-sdk-ui', aiSdkUiPayloadArb],
]

describe.each(FORMATS)('renameToolIds (%s)', (name, payloadArb) => {
  const format = messageFormat(name)

  it('renames the ids it opens and answers, keeps the payload valid, and renaming back gives the payload again', () => {
    let withIds = 0
    fc.assert(
      fc.property(payloadArb, (raw) => {
        // given: a stored (validated, frozen) payload and a new name for each id it opens or answers
        const payload = createMessage(raw as never, { format: name }).payload
        const calls = format.toolCalls(payload)
        const results = format.toolResults(payload)
        const forward = new Map([...calls, ...results].map((id) => [id, `${id}_r`]))
        if (forward.size > 0) withIds++
        const back = new Map([...forward].map(([from, to]) => [to, from]))
        const rename = format.renameToolIds
        if (rename === undefined) throw new Error(`${name} has no renameToolIds`)

        // when
        const renamed = rename(payload, forward)
        const untouched = rename(payload, new Map())

        // then: pairing reads the new ids, in the same order
        expect(format.toolCalls(renamed)).toEqual(calls.map((id) => forward.get(id)))
        expect(format.toolResults(renamed)).toEqual(results.map((id) => forward.get(id)))
        expect(format.schema.safeParse(renamed).success).toBe(true)
        // then: nothing else changed, and the copy is fresh (the stored payload is frozen and equal)
        expect(rename(renamed, back)).toEqual(payload)
        expect(untouched).toEqual(payload)
        expect(untouched).not.toBe(payload)
        expect(Object.isFrozen(untouched)).toBe(false)
      }),
      RUNS,
    )
    // the generated payloads open or answer calls often enough for the property to say something (each
    // format's share was 15–75 % over several runs; the bound stays far below it, so it never flakes)
    expect(withIds).toBeGreaterThan(RUNS.numRuns / 20)
  })
})
