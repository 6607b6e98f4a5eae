/**
 * The rule `compact` refuses by: a compaction must not split a tool call from its result(s)
 * (`compactionPairingSplits`, `checkCompactionPairing`; docs/guarantees.md, "History"). Faults the list
 * already had never count; every built-in format's pairs are read by their format.
 */
import { describe, expect, it } from '@jest/globals'
import {
  AI_SDK_MODEL_FORMAT,
  AI_SDK_UI_FORMAT,
  ANTHROPIC_FORMAT,
  OPENAI_AGENTS_FORMAT,
  OPENAI_RESPONSES_FORMAT,
  createMessage,
  isTurnlogError,
  redactedPayload,
  type Message,
} from '@turnlog/core'
import { checkCompactionPairing, compactionPairingSplits } from '@turnlog/core/internal'
import * as sdkModel from './formats/ai-sdk-model-fixtures.js'
import * as sdkUi from './formats/ai-sdk-ui-fixtures.js'
import * as anthropic from './formats/anthropic-fixtures.js'
import * as agents from './formats/openai-agents-fixtures.js'
import * as responses from './formats/openai-responses-fixtures.js'
import { assistant, assistantCalling, toolResult, user } from './support/messages.js'

const summary = (): Message => createMessage({ role: 'user', content: '[CONTEXT COMPACTION] earlier turns' })
const splits = (live: readonly Message<unknown>[], covered: readonly Message<unknown>[], s: readonly Message<unknown>[] = [summary()]) =>
  compactionPairingSplits(live, { covered: covered.map((m) => m.id), summary: s })

describe('compactionPairingSplits', () => {
  it('a call covered without its result, or a result without its call, is a split naming both sides', () => {
    // given a complete pair between two plain messages
    const [u, call, result, a] = [user('read it'), assistantCalling(['call_1']), toolResult('call_1'), assistant('done')]
    const live = [u, call, result, a]

    // when / then
    expect(splits(live, [u, call])).toEqual([{ toolCallId: 'call_1', messageIds: [result.id], coveredMessageIds: [call.id] }])
    expect(splits(live, [result])).toEqual([{ toolCallId: 'call_1', messageIds: [call.id], coveredMessageIds: [result.id] }])
    expect(splits(live, [call, result])).toEqual([])
    expect(splits(live, [u, call, result, a])).toEqual([])
    expect(splits(live, [u])).toEqual([])
    expect(splits(live, [a])).toEqual([])
  })

  it('parallel calls: each call id is its own pair (covering one result of two splits that one)', () => {
    // given one message calling two tools, both answered
    const [call, r1, r2] = [assistantCalling(['c1', 'c2']), toolResult('c1'), toolResult('c2')]

    // when / then
    expect(splits([call, r1, r2], [call, r1])).toEqual([{ toolCallId: 'c2', messageIds: [r2.id], coveredMessageIds: [call.id] }])
    expect(splits([call, r1, r2], [r1])).toEqual([{ toolCallId: 'c1', messageIds: [call.id], coveredMessageIds: [r1.id] }])
    expect(splits([call, r1, r2], [call, r1, r2])).toEqual([])
  })

  it('faults already there never make a compaction impossible: an orphan, an unanswered call, duplicate results', () => {
    // given an orphan result, an unanswered call and a call answered twice, all live
    const orphan = toolResult('gone')
    const unanswered = assistantCalling(['open'])
    const [twice, first, second] = [assistantCalling(['dup']), toolResult('dup', 'one'), toolResult('dup', 'two')]
    const live = [orphan, unanswered, user('meanwhile'), twice, first, second]

    // when / then: covering either side of a broken group, or around it, splits nothing new
    for (const covered of [[orphan], [unanswered], [twice], [first], [second], [twice, first], [orphan, unanswered, live[2] as Message]]) {
      expect(splits(live, covered)).toEqual([])
    }
  })

  it('a reused call id pairs each call with the results after it: covering across them splits', () => {
    // given id X called, answered, called again, answered again
    const [a1, r1, a2, r2] = [assistantCalling(['X']), toolResult('X', 'one'), assistantCalling(['X']), toolResult('X', 'two')]
    const live = [a1, r1, a2, r2]

    // when / then
    expect(splits(live, [a1, r1])).toEqual([])
    expect(splits(live, [r1])).toEqual([{ toolCallId: 'X', messageIds: [a1.id, a2.id], coveredMessageIds: [r1.id] }])
    expect(splits(live, [a2])).toEqual([{ toolCallId: 'X', messageIds: [r1.id, r2.id], coveredMessageIds: [a2.id] }])
    // every covered message of the id is named, the earlier pair's too
    expect(splits(live, [a1, r1, a2])).toEqual([{ toolCallId: 'X', messageIds: [r2.id], coveredMessageIds: [a1.id, r1.id, a2.id] }])
  })

  it("a summary that carries the covered call again (a runtime's compaction keeping its content under a new id) splits nothing", () => {
    // given a pair whose call is covered and re-added in the summary, as openai-agents' replaceHistoryWithCompaction does
    const [call, result] = [assistantCalling(['c1']), toolResult('c1')]
    const again = createMessage(call.payload)

    // when / then
    expect(splits([call, result], [call], [summary(), again])).toEqual([])
  })

  it('a summary that answers or opens a call without its partner is a split of its own (no covered partner)', () => {
    // given a summary that is a tool result for no live call, and one that calls a tool
    const [u, a] = [user('hi'), assistant('hello')]
    const orphanSummary = toolResult('nowhere')
    const callingSummary = assistantCalling(['later'])

    // when / then
    expect(splits([u, a], [u], [orphanSummary])).toEqual([{ toolCallId: 'nowhere', messageIds: [orphanSummary.id], coveredMessageIds: [] }])
    expect(splits([u, a], [u], [callingSummary])).toEqual([{ toolCallId: 'later', messageIds: [callingSummary.id], coveredMessageIds: [] }])
  })

  it('reads every built-in format by its own pairing fields (anthropic, openai-responses, openai-agents, ai-sdk-model)', () => {
    const pairs = [
      [ANTHROPIC_FORMAT, anthropic.assistantToolUse, anthropic.userToolResults],
      [OPENAI_RESPONSES_FORMAT, responses.functionCall, responses.functionCallOutput],
      [OPENAI_AGENTS_FORMAT, agents.functionCall, agents.functionCallResult],
      [AI_SDK_MODEL_FORMAT, sdkModel.assistantCalls, sdkModel.toolResults],
    ] as const
    for (const [format, callPayload, resultPayload] of pairs) {
      // given a call and its result(s) in that format, after a plain message
      const u = user('weather?')
      const call = createMessage<object>(callPayload, { format })
      const result = createMessage<object>(resultPayload, { format })
      const live = [u, call, result]

      // when / then
      const callOnly = splits(live, [u, call])
      expect(callOnly.length).toBeGreaterThan(0)
      expect(callOnly.every((s) => s.messageIds.join() === result.id && s.coveredMessageIds.join() === call.id)).toBe(true)
      const resultOnly = splits(live, [result])
      expect(resultOnly.length).toBeGreaterThan(0)
      expect(resultOnly.every((s) => s.messageIds.join() === call.id && s.coveredMessageIds.join() === result.id)).toBe(true)
      expect(splits(live, [call, result])).toEqual([])
      expect(splits(live, [u])).toEqual([])
    }
  })

  it('ai-sdk-ui: an answered tool part carries call and result in one message, which leaves whole', () => {
    // given a UI message with answered tool parts between two others
    const u = createMessage<object>(sdkUi.userText, { format: AI_SDK_UI_FORMAT })
    const answered = createMessage<object>(sdkUi.assistantAnswered, { format: AI_SDK_UI_FORMAT })

    // when / then
    expect(splits([u, answered], [answered])).toEqual([])
    expect(splits([u, answered], [u])).toEqual([])
  })

  it('a redacted message keeps its pairing ids: covering its partner still splits', () => {
    // given a pair whose result was redacted (the placeholder keeps tool_call_id)
    const call = assistantCalling(['c1'])
    const result = toolResult('c1', 'secret')
    const redacted = createMessage(redactedPayload(result.payload, 'openai-chat') as never, { id: result.id, createdAt: result.createdAt })

    // when / then
    expect(splits([call, redacted], [call])).toEqual([{ toolCallId: 'c1', messageIds: [result.id], coveredMessageIds: [call.id] }])
  })
})

describe('checkCompactionPairing', () => {
  it("throws INVALID_INPUT with details.reason 'splits_tool_pair', the call id and both sides", () => {
    // given
    const [call, result] = [assistantCalling(['call_1']), toolResult('call_1')]

    // when
    let caught: unknown
    try {
      checkCompactionPairing([call, result], { covered: [call.id], summary: [summary()] }, 'sid')
    } catch (error) {
      caught = error
    }

    // then
    expect(isTurnlogError(caught, 'INVALID_INPUT')).toBe(true)
    expect((caught as { details: unknown }).details).toEqual({
      sessionId: 'sid',
      field: 'covered',
      reason: 'splits_tool_pair',
      toolCallId: 'call_1',
      messageIds: [result.id],
      coveredMessageIds: [call.id],
      splits: [{ toolCallId: 'call_1', messageIds: [result.id], coveredMessageIds: [call.id] }],
    })
    expect(String((caught as Error).message)).toContain('"call_1"')
    expect(() => checkCompactionPairing([call, result], { covered: [call.id, result.id], summary: [summary()] })).not.toThrow()
  })
})
