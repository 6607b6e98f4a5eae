// A complete useChat + streamText turn on embedded PGlite, with the AI SDK's mock model: the request is
// recorded, the streamed reply stored (partial after its step, final at the end), and the chat loads
// back as the client built it from the stream.
import { createUIMessageStream, readUIMessageStream, simulateReadableStream, streamText, validateUIMessages } from 'ai'
import type { UIMessage, UIMessageStreamWriter } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { loadChat, loadChatState, persistReply, receiveChat } from '@turnlog/ai-sdk'
import { openStore } from 'turnlog'

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
}
const model = new MockLanguageModelV3({
  doStream: async () => ({
    stream: simulateReadableStream({
      chunks: [
        { type: 'text-start' as const, id: 't' },
        { type: 'text-delta' as const, id: 't', delta: 'Hello ' },
        { type: 'text-delta' as const, id: 't', delta: 'there.' },
        { type: 'text-end' as const, id: 't' },
        { type: 'finish' as const, usage, finishReason: { unified: 'stop' as const, raw: 'stop' } },
      ],
    }),
  }),
})

const store = await openStore({ embedded: true })
try {
  const question: UIMessage = { id: 'client-1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }
  const turn = await receiveChat(store, 'sample-chat', { messages: [question] })
  const { generateId, onStepFinish, onFinish, done: stored } = persistReply(store, turn)
  const result = streamText({ model, messages: [{ role: 'user', content: 'Hi' }] })
  const execute = ({ writer }: { writer: UIMessageStreamWriter }): void => writer.merge(result.toUIMessageStream())
  const stream = createUIMessageStream({ originalMessages: turn.messages, generateId, onStepFinish, onFinish, execute })
  // the client's side: the SDK builds the reply from the stream
  let client: UIMessage | undefined
  for await (const message of readUIMessageStream({ stream })) client = message
  const done = await stored
  const chat = await loadChat(store, 'sample-chat')
  await validateUIMessages({ messages: chat })
  const state = await loadChatState(store, 'sample-chat')
  const ok =
    JSON.stringify(chat) === JSON.stringify([question, client]) &&
    done.status === 'final' &&
    state.interrupted.length === 0 &&
    chat.length === 2
  if (!ok) throw new Error(`unexpected: ${JSON.stringify({ chat, client, done })}`)
  console.log(JSON.stringify({ node: process.version, messages: chat.length, reply: done.status, writes: done.writes }))
} finally {
  await store.close()
}
