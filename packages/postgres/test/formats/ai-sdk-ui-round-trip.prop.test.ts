import { aiSdkUiPayloadArb } from '@turnlog/testing'
import { describeFormatRoundTrip } from '../support/format-round-trip.js'

const call = (state: 'input-available' | 'output-available', id: string): object =>
  state === 'input-available'
    ? { type: 'tool-getWeather', toolCallId: id, state, input: { city: 'Lyon' } }
    : { type: 'tool-getWeather', toolCallId: id, state, input: { city: 'Lyon' }, output: { tempC: 15 } }

// A UI tool part opens its call and carries its result: a result never precedes its call, so the
// pairing fault after an unanswered call is a second result for one call (the same part in two messages).
describeFormatRoundTrip({
  format: 'ai-sdk-ui',
  payloadArb: aiSdkUiPayloadArb,
  runs: Number(process.env['TURNLOG_FORMAT_PROP_RUNS'] ?? 100),
  unanswered: {
    payloads: [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'weather?\u0000' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, call('input-available', 'call-1')] },
    ],
    toolCallId: 'call-1',
    at: 1,
  },
  orphan: {
    payloads: [
      { id: 'a1', role: 'assistant', parts: [call('output-available', 'call-2')] },
      { id: 'a2', role: 'assistant', parts: [call('output-available', 'call-2'), { type: 'text', text: 'again' }] },
    ],
    toolCallId: 'call-2',
    at: 1,
    kind: 'duplicate_tool_result',
  },
})
