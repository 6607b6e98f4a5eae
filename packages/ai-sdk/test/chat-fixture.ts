import {
  AbstractChat,
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  simulateReadableStream,
  uiMessageChunkSchema,
  tool,
  type ChatState,
  type ChatStatus,
  type InferUITools,
  type UIDataTypes,
  type UIMessage,
  type UIMessageChunk,
} from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'

/** A part a v3 provider streams (the type of `@ai-sdk/provider`, read off the mock model). */
export type LanguageModelV3StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never

/** The usage a scripted step reports (the shape of a v3 provider's). */
const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

/** One model step that streams `text` in small deltas and stops. */
export function textStep(text: string, id = 't'): LanguageModelV3StreamPart[] {
  const deltas = text.match(/.{1,4}/gsu) ?? []
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id },
    ...deltas.map((delta) => ({ type: 'text-delta' as const, id, delta })),
    { type: 'text-end', id },
    { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } },
  ]
}

/** One model step that calls `toolName` with `input` (after a little text). */
export function toolStep(toolCallId: string, toolName: string, input: unknown, text = 'Let me check. '): LanguageModelV3StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: `${toolCallId}-text` },
    { type: 'text-delta', id: `${toolCallId}-text`, delta: text },
    { type: 'text-end', id: `${toolCallId}-text` },
    { type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) },
    { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
  ]
}

/**
 * A scripted model: its n-th `doStream` call streams `script[n]` through `simulateReadableStream`. A step
 * may end with `'hang'`: the stream then stays open after its parts until the call is aborted (the
 * abort tests stop a reply mid-step).
 */
export function scriptedModel(script: readonly (readonly (LanguageModelV3StreamPart | 'hang')[])[]): MockLanguageModelV3 {
  let call = 0
  return new MockLanguageModelV3({
    doStream: async ({ abortSignal }) => {
      const parts = script[call++]
      if (parts === undefined) throw new Error(`the scripted model has no step ${call}`)
      const hang = parts.at(-1) === 'hang'
      const chunks = parts.filter((p): p is LanguageModelV3StreamPart => p !== 'hang')
      if (!hang) return { stream: simulateReadableStream({ chunks, chunkDelayInMs: 1 }) }
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk)
          abortSignal?.addEventListener('abort', () => controller.error(abortSignal.reason), { once: true })
        },
      })
      return { stream }
    },
  })
}

/** The tools of the test app: a weather lookup (runs at once) and a payment that needs the user's approval. */
export const tools = {
  weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => ({ city, celsius: city.length * 3 }),
  }),
  pay: tool({
    description: 'Pays an amount',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }: { amount: number }) => ({ paid: amount }),
  }),
}

/** The app's message type: `UIMessage` typed by its tools (what `validateUIMessages` checks against). */
export type ChatMessage = UIMessage<unknown, UIDataTypes, InferUITools<typeof tools>>

/** The `ChatState` a UI framework gives `AbstractChat` (`@ai-sdk/react` keeps it in React state): plain arrays here. */
class MemoryChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready'
  error: Error | undefined = undefined
  messages: UIMessage[]
  constructor(messages: UIMessage[]) {
    this.messages = messages
  }
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message]
  }
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1)
  }
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)]
  }
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** Options of a {@link TestChat}. */
export interface TestChatOptions {
  readonly id: string
  /** The route: a URL (a real HTTP server) or a handler called in-process with a web `Request`. */
  readonly api: string | ((request: Request) => Promise<Response>)
  readonly messages?: UIMessage[]
  /** Send only the last message (`prepareSendMessagesRequest`), as the persistence guide recommends. */
  readonly lastOnly?: boolean
}

/**
 * The AI SDK's own client (`AbstractChat`, what `useChat` wraps) with an in-memory state: the tests drive
 * it as a user would (send, edit, regenerate, approve, stop) and compare what it holds with `loadChat`.
 */
export class TestChat extends AbstractChat<UIMessage> {
  constructor(options: TestChatOptions) {
    const api = options.api
    super({
      id: options.id,
      state: new MemoryChatState(options.messages ?? []),
      transport: new DefaultChatTransport({
        api: typeof api === 'string' ? api : 'http://in-process/api/chat',
        ...(typeof api === 'string' ? {} : { fetch: ((url: string, init: RequestInit) => api(new Request(url, init))) as typeof fetch }),
        ...(options.lastOnly === true
          ? {
              prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
                body: { id, message: messages.at(-1), trigger, messageId },
              }),
            }
          : {}),
      }),
    })
  }

  /** The client's list, as plain data (what `useChat` would render). */
  get list(): UIMessage[] {
    return structuredClone(this.messages)
  }

  /**
   * What a user pressing stop mid-reply does: sends `text`, stops once the client shows `shown` (within
   * 10 s, or throws), and waits for the aborted send to settle.
   */
  async sendAndStopAt(text: string, shown: string): Promise<void> {
    const sending = this.sendMessage({ text })
    const end = Date.now() + 10_000
    while (!JSON.stringify(this.list).includes(shown)) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${JSON.stringify(shown)}`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await this.stop()
    await sending
  }
}

/** One item `parseJsonEventStream` yields: a chunk that passed the schema, or the error. */
type ParsedChunk = ReturnType<typeof parseJsonEventStream<UIMessageChunk>> extends ReadableStream<infer R> ? R : never

/**
 * What the AI SDK's client builds from a route's response: the SSE body parsed with the SDK's chunk schema
 * (`uiMessageChunkSchema`, what `DefaultChatTransport` checks) and read by `readUIMessageStream`
 * (continuing `message` when given; a bad chunk fails). The message's last state, as plain JSON (as
 * stored), or `undefined` when the stream built none.
 */
export async function readReplyStream(response: Response, message?: UIMessage): Promise<UIMessage | undefined> {
  if (response.body === null) throw new Error(`the response has no body (status ${response.status})`)
  const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<ParsedChunk, UIMessageChunk>({
      transform(result, controller) {
        if (!result.success) throw result.error
        controller.enqueue(result.value)
      },
    }),
  )
  let last: UIMessage | undefined
  for await (const state of readUIMessageStream({ stream: chunks, terminateOnError: true, ...(message === undefined ? {} : { message }) }))
    last = state
  return last === undefined ? undefined : (JSON.parse(JSON.stringify(last)) as UIMessage)
}
