import { aiSdkModelPayloadArb } from '@turnlog/testing'
import { describeFormatRoundTrip } from '../support/format-round-trip.js'

const result = (toolCallId: string): object => ({
  type: 'tool-result',
  toolCallId,
  toolName: 'getWeather',
  output: { type: 'text', value: '15 °C\ud800' },
})

describeFormatRoundTrip({
  format: 'ai-sdk-model',
  payloadArb: aiSdkModelPayloadArb,
  runs: Number(process.env['TURNLOG_FORMAT_PROP_RUNS'] ?? 100),
  unanswered: {
    payloads: [
      { role: 'user', content: 'weather in Lyon?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'getWeather', input: { city: 'Lyon' } }] },
      { role: 'user', content: 'still there?' },
    ],
    toolCallId: 'call_1',
    at: 1,
  },
  orphan: {
    payloads: [
      { role: 'user', content: 'hi' },
      { role: 'tool', content: [result('call_ghost')] },
    ],
    toolCallId: 'call_ghost',
    at: 1,
    kind: 'orphan_tool_result',
  },
})
