/**
 * Compile-time contract of the message API (checked by `pnpm typecheck`; issue 15): `createMessage`
 * picks the format overload whenever `format` is given and types a built-in format's payload
 * (`FormatPayloads`); ids are accepted as plain strings everywhere; `applyTo` and the `apply*`
 * functions keep the caller's message type. The runtime test below runs the same values.
 */
import { describe, expect, it } from '@jest/globals'
import {
  applyCompact,
  applyRevision,
  applyRewind,
  createMessage,
  type AiSdkModelMessage,
  type AnthropicMessageParam,
  type ChatMessage,
  type CompactResult,
  type FormatPayloads,
  type Message,
  type OpenAIResponsesItem,
  type ReviseResult,
  type RewindResult,
  type RewindTargetInput,
  type SessionStore,
} from '@turnlog/core'
import { assertType, type Equal } from '../support/type-equality.js'

const anthropicUser = { role: 'user' as const, content: 'hi' }

function formatOverloads(): void {
  // a chat-like payload with another format's name is that format's message, not a chat message
  const a = createMessage(anthropicUser, { format: 'anthropic' })
  assertType<Equal<typeof a, Message<AnthropicMessageParam>>>()
  const model = createMessage({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, { format: 'ai-sdk-model' })
  assertType<Equal<typeof model, Message<AiSdkModelMessage>>>()
  const item = createMessage({ type: 'message', role: 'user', content: 'hi' }, { format: 'openai-responses' })
  assertType<Equal<typeof item, Message<OpenAIResponsesItem>>>()
  // without a format, or with openai-chat: a chat message
  const chat = createMessage({ role: 'user', content: 'hi' })
  const chat2 = createMessage({ role: 'user', content: 'hi' }, { format: 'openai-chat' })
  assertType<Equal<typeof chat, Message<ChatMessage>>>()
  assertType<Equal<typeof chat2, Message<ChatMessage>>>()
  // the type argument still names the payload type of any format
  const explicit = createMessage<AnthropicMessageParam>(anthropicUser, { format: 'anthropic' })
  assertType<Equal<typeof explicit, Message<AnthropicMessageParam>>>()
  // json and formats registered at run time: the payload type is the caller's
  const note = createMessage({ kind: 'note' as const }, { format: 'json' })
  assertType<Equal<typeof note, Message<{ kind: 'note' }>>>()
  const custom = createMessage({ kind: 'x' }, { format: 'my-format' })
  assertType<Equal<typeof custom, Message<{ kind: string }>>>()
  assertType<Equal<FormatPayloads['anthropic'], AnthropicMessageParam>>()

  // @ts-expect-error a string is not a payload, in any format
  createMessage('hello', { format: 'anthropic' })
  // @ts-expect-error an unknown role is not a chat payload
  createMessage({ role: 'usr' })
  // @ts-expect-error an unknown role is not a chat payload with openai-chat named either
  createMessage({ role: 'usr' }, { format: 'openai-chat' })
  // @ts-expect-error a dynamic format needs the format overload: chat options take only 'openai-chat'
  createMessage({ role: 'user', content: 'hi' }, { format: 'anthropic' as string, id: 1 })
  void [a, model, item, chat, chat2, explicit, note, custom]
}

async function idsAndApplyTo(store: SessionStore, sid: string, live: Message<AnthropicMessageParam>[]): Promise<void> {
  const id: string = live[0]?.id ?? ''
  // plain string ids everywhere: rewind, revise, finalize, compact, fork, redact
  const target: RewindTargetInput = { after: id }
  const rewound: RewindResult = await store.rewind(sid, target)
  await store.rewind(sid, { from: 'an id read back from JSON' })
  await store.revise(sid, id, anthropicUser)
  await store.compact(sid, { covered: [id], summary: createMessage(anthropicUser, { format: 'anthropic' }) })
  await store.fork(sid, { at: id })
  await store.redact(sid, id)

  // applyTo keeps the caller's list type
  const afterRewind = rewound.applyTo(live)
  assertType<Equal<typeof afterRewind, Message<AnthropicMessageParam>[]>>()
  const revised: ReviseResult = await store.revise(sid, id, anthropicUser)
  const afterRevise = revised.applyTo(live)
  assertType<Equal<typeof afterRevise, Message<AnthropicMessageParam>[]>>()
  // a compaction adds its summary's type
  const summary = createMessage({ role: 'system', content: 'summary' })
  const compacted: CompactResult<Message<ChatMessage>> = await store.compact(sid, { covered: [id], summary })
  const afterCompact = compacted.applyTo(live)
  assertType<Equal<typeof afterCompact, (Message<AnthropicMessageParam> | Message<ChatMessage>)[]>>()
  // a chat list stays a chat list: pushable as Message[]
  const chatLive: Message[] = (await store.load(sid)).messages
  const next: Message[] = compacted.applyTo(chatLive)
  next.push(summary)

  // the pure functions too
  const r1 = applyRewind(live, { retracted: [id] })
  const r2 = applyRevision(live, { message: live[0] as Message<AnthropicMessageParam> })
  const r3 = applyCompact(live, { covered: [id], summary })
  assertType<Equal<typeof r1, Message<AnthropicMessageParam>[]>>()
  assertType<Equal<typeof r2, Message<AnthropicMessageParam>[]>>()
  assertType<Equal<typeof r3, (Message<AnthropicMessageParam> | Message<ChatMessage>)[]>>()
  // @ts-expect-error a rewind target names one message by after or from
  await store.rewind(sid, { to: id })
  void [afterRewind, afterRevise, afterCompact, r1, r2, r3]
}

describe('the message types (compile time; this is the runtime half)', () => {
  it('a chat-like payload with format anthropic is stored as an anthropic message; the pure functions keep the list', () => {
    // given
    const a = createMessage(anthropicUser, { format: 'anthropic' })
    const b = createMessage(anthropicUser, { format: 'anthropic' })
    const summary = createMessage({ role: 'system', content: 'summary' })

    // when
    const compacted = applyCompact([a, b], { covered: [a.id], summary })
    const rewound = applyRewind([a, b], { retracted: [b.id] })

    // then
    expect(a.format).toBe('anthropic')
    expect(a.payload).toEqual(anthropicUser)
    expect(compacted).toEqual([summary, b])
    expect(rewound).toEqual([a])
    expect([typeof formatOverloads, typeof idsAndApplyTo]).toEqual(['function', 'function'])
  })
})
