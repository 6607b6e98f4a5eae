/**
 * Compile-time contract with the real `openai` SDK types (checked by `pnpm typecheck`; issue 15):
 * `toWire(live)` is a `ChatCompletionMessageParam[]` without a cast, the SDK's `ChatCompletionMessage`
 * (a response's `choices[0].message`) is accepted by `createMessage`, non-payloads do not compile,
 * `Message<P>` carries a caller's own payload type, and `load()` returns a list the caller can push to.
 * The runtime test below runs the same values.
 */
import { describe, expect, it } from '@jest/globals'
import type OpenAI from 'openai'
import { createMessage, toWire, type LoadResult, type Message, type WireMessage } from '@turnlog/core'

type Param = OpenAI.Chat.Completions.ChatCompletionMessageParam
type Reply = OpenAI.Chat.Completions.ChatCompletionMessage
type CreateBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming

/** A response message as the SDK types it. */
const reply: Reply = {
  role: 'assistant',
  content: null,
  refusal: null,
  tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
}

/** Request messages as the SDK types them (every role but the deprecated `function`). */
const params: Exclude<Param, OpenAI.Chat.Completions.ChatCompletionFunctionMessageParam>[] = [
  { role: 'developer', content: 'be brief' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'hi' },
      { type: 'image_url', image_url: { url: 'https://x/y.png' } },
    ],
  },
]

function compileTimeChecks(load: LoadResult): void {
  // the SDK's response message and request messages are payloads
  const m: Message = createMessage(reply)
  const fromParams: Message[] = params.map((p) => createMessage(p))
  // toWire is the SDK's request type, without a cast, repaired or not
  const body: CreateBody = { model: 'gpt-4.1', messages: toWire([m, ...fromParams], { repairPairing: true }) }
  const wire: Param[] = toWire(load.messages)
  const typed: WireMessage[] = wire as WireMessage[]
  // a loaded list is the caller's to push to
  load.messages.push(m)
  // a caller's own payload type, in another format
  const note: Message<{ kind: 'note'; text: string }> = createMessage({ kind: 'note' as const, text: 'x' }, { format: 'json' })
  const noteText: string = note.payload.text
  const notes: { kind: 'note'; text: string }[] = toWire([note])
  // @ts-expect-error a string is not a payload
  createMessage('hello')
  // @ts-expect-error an unknown role is not a chat payload
  createMessage({ role: 'usr' })
  // @ts-expect-error a payload of another format needs its format named
  createMessage({ kind: 'note' })
  void [body, typed, noteText, notes]
}

describe('the openai SDK types (compile time; this is the runtime half)', () => {
  it('a response message is stored as given and its wire copy equals it; the request messages too', () => {
    // given
    const m = createMessage(reply, { meta: { model: 'gpt-4.1', usage: { prompt_tokens: 12 } } })
    const fromParams = params.map((p) => createMessage(p))

    // when
    const wire = toWire([m, ...fromParams])

    // then
    expect(wire).toEqual([reply, ...params])
    expect(typeof compileTimeChecks).toBe('function')
  })
})
