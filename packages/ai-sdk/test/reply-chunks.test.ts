import { describe, expect, it } from '@jest/globals'
import { createUIMessageStream, createUIMessageStreamResponse, type UIMessage, type UIMessageChunk } from 'ai'
import { replyChunks } from '@turnlog/ai-sdk'
import { readReplyStream } from './chat-fixture.js'

/**
 * What a client builds from `chunks`, sent the way a route sends them: written through
 * `createUIMessageStream`'s writer, served by `createUIMessageStreamResponse` (SSE) and read back by the
 * AI SDK's client-side reader (`readReplyStream`), optionally continuing `message`.
 */
async function clientReads(chunks: readonly UIMessageChunk[], message?: UIMessage): Promise<UIMessage | undefined> {
  const response = createUIMessageStreamResponse({
    stream: createUIMessageStream({
      execute: ({ writer }) => {
        for (const chunk of chunks) writer.write(chunk)
      },
    }),
  })
  return readReplyStream(response, message)
}

/** A reply as the AI SDK streams one (streamText's `toUIMessageStream`): every kind of part. */
const streamed: UIMessageChunk[] = [
  { type: 'start', messageId: 'reply-1', messageMetadata: { model: 'm1' } },
  { type: 'start-step' },
  { type: 'reasoning-start', id: 'r1', providerMetadata: { openai: { itemId: 'rs_1' } } },
  { type: 'reasoning-delta', id: 'r1', delta: 'The user wants ' },
  { type: 'reasoning-delta', id: 'r1', delta: 'the weather.' },
  { type: 'reasoning-end', id: 'r1' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Let me ' },
  { type: 'text-delta', id: 't1', delta: 'check. ' },
  { type: 'text-end', id: 't1', providerMetadata: { openai: { itemId: 'msg_1' } } },
  { type: 'tool-input-start', toolCallId: 'c1', toolName: 'weather' },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '{"city":' },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '"Kyoto"}' },
  { type: 'tool-input-available', toolCallId: 'c1', toolName: 'weather', input: { city: 'Kyoto' }, title: 'Weather' },
  { type: 'tool-input-available', toolCallId: 'c2', toolName: 'search', input: { q: 'Kyoto' }, dynamic: true, providerExecuted: true },
  { type: 'tool-input-error', toolCallId: 'c3', toolName: 'weather', input: '{"city":', errorText: 'invalid JSON' },
  { type: 'tool-output-available', toolCallId: 'c1', output: { city: 'Kyoto', celsius: 15 } },
  { type: 'tool-output-error', toolCallId: 'c2', errorText: 'search failed', dynamic: true, providerExecuted: true },
  { type: 'tool-input-available', toolCallId: 'c4', toolName: 'pay', input: { amount: 5 } },
  { type: 'tool-approval-request', approvalId: 'a4', toolCallId: 'c4' },
  { type: 'tool-input-available', toolCallId: 'c5', toolName: 'locate', input: {} },
  { type: 'finish-step' },
  { type: 'start-step' },
  { type: 'source-url', sourceId: 's1', url: 'https://example.com/kyoto', title: 'Kyoto' },
  { type: 'source-document', sourceId: 's2', mediaType: 'application/pdf', title: 'Climate', filename: 'climate.pdf' },
  { type: 'file', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
  { type: 'data-weather', id: 'w1', data: { city: 'Kyoto', celsius: 14 } },
  { type: 'data-weather', id: 'w1', data: { city: 'Kyoto', celsius: 15 } },
  { type: 'tool-input-available', toolCallId: 'c6', toolName: 'forecast', input: { days: 3 } },
  { type: 'tool-output-available', toolCallId: 'c6', output: { days: [1] }, preliminary: true },
  { type: 'text-start', id: 't2' },
  { type: 'text-delta', id: 't2', delta: 'Kyoto: 15 °C, 雨' },
  { type: 'text-end', id: 't2' },
  { type: 'finish-step' },
  { type: 'finish', finishReason: 'stop' },
]

describe('replyChunks', () => {
  it('rebuilds a streamed reply on the client: same id, metadata and parts, every kind of part', async () => {
    // given the reply the client built from the stream (and the route stored)
    const reply = (await clientReads(streamed)) as UIMessage
    expect(
      reply.parts.map((p) =>
        p.type.startsWith('tool-') || p.type === 'dynamic-tool' ? `${p.type}:${(p as { state: string }).state}` : p.type,
      ),
    ).toEqual([
      'step-start',
      'reasoning',
      'text',
      'tool-weather:output-available',
      'dynamic-tool:output-error',
      'tool-weather:output-error',
      'tool-pay:approval-requested',
      'tool-locate:input-available',
      'step-start',
      'source-url',
      'source-document',
      'file',
      'data-weather',
      'tool-forecast:output-available',
      'text',
    ])
    // when its chunks are sent again
    const chunks = replyChunks(reply)
    // then a client that does not hold it builds the same message
    expect(await clientReads(chunks)).toEqual(reply)
    expect(chunks.at(0)).toEqual({ type: 'start', messageId: 'reply-1', messageMetadata: { model: 'm1' } })
    expect(chunks.at(-1)).toEqual({ type: 'finish' })
  })

  it('a reply the stream did not finish comes back as it was left: the open text and the streamed tool input', async () => {
    // given a reply cut off mid-text and mid-call (a client that went away: stored partial)
    const cut: UIMessageChunk[] = [
      { type: 'start', messageId: 'reply-2' },
      { type: 'start-step' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Bern is' },
      { type: 'tool-input-start', toolCallId: 'c1', toolName: 'weather' },
      { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '{"city":"Be' },
    ]
    const reply = (await clientReads(cut)) as UIMessage
    expect(reply.parts[1]).toMatchObject({ type: 'text', state: 'streaming' })
    // then
    expect(await clientReads(replyChunks(reply))).toEqual(reply)
  })

  it("a tool approval's answer is the client's edit, which no chunk carries: the part keeps its state and loses approved/reason", async () => {
    // given a reply whose payment the user denied: the client's edit, then the continuation's stream
    const asked = (await clientReads([
      { type: 'start', messageId: 'reply-3' },
      { type: 'tool-input-available', toolCallId: 'c1', toolName: 'pay', input: { amount: 5 } },
      { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
    ])) as UIMessage
    const answered = {
      ...asked,
      parts: asked.parts.map((p) => ({ ...p, state: 'approval-responded', approval: { id: 'a1', approved: false, reason: 'no' } })),
    } as UIMessage
    const reply = (await clientReads(
      [
        { type: 'start', messageId: 'reply-3' },
        { type: 'tool-output-denied', toolCallId: 'c1' },
      ],
      answered,
    )) as UIMessage
    expect(reply.parts[0]).toMatchObject({ state: 'output-denied', approval: { id: 'a1', approved: false, reason: 'no' } })
    // when
    const again = (await clientReads(replyChunks(reply))) as UIMessage
    // then
    expect(again.parts[0]).toEqual({ ...reply.parts[0], approval: { id: 'a1' } })
  })
})
