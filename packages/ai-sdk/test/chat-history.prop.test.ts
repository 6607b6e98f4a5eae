import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import type { PostgresStore } from '@turnlog/postgres'
import { isToolUIPart, validateUIMessages } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { loadChat, receiveChat } from '@turnlog/ai-sdk'
import { TestChat, textStep, toolStep, tools, type LanguageModelV3StreamPart, type ChatMessage } from './chat-fixture.js'
import { chatRoute } from './chat-route.js'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'
import { simulateReadableStream } from 'ai'

type Reply = 'text' | 'weather' | 'pay'
type Action =
  | { readonly kind: 'send'; readonly text: string }
  | { readonly kind: 'edit'; readonly which: number; readonly text: string }
  | { readonly kind: 'regenerate' }
  | { readonly kind: 'repost' }
  | { readonly kind: 'answer'; readonly approved: boolean }

const textArb = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' })
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: textArb.map((text) => ({ kind: 'send' as const, text })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('edit' as const), which: fc.nat(), text: textArb }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'regenerate' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'repost' as const }) },
)

/**
 * A model that answers a tool result with text, and anything else with the next reply of `replies`
 * (cycled): text, a weather lookup (runs at once, then text) or a payment (stops for approval).
 */
function reactiveModel(replies: readonly Reply[]): MockLanguageModelV3 {
  let n = 0
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      n++
      const afterTool = prompt.at(-1)?.role === 'tool'
      const reply = afterTool ? 'text' : (replies[n % replies.length] ?? 'text')
      const chunks: LanguageModelV3StreamPart[] =
        reply === 'text'
          ? textStep(`answer ${n}`)
          : reply === 'weather'
            ? toolStep(`w${n}`, 'weather', { city: `c${n}` })
            : toolStep(`p${n}`, 'pay', { amount: n })
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: null, initialDelayInMs: null }) }
    },
  })
}

describe.each(STORE_KINDS)('any sequence of client posts on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('loadChat equals what the client holds, and passes validateUIMessages, after every request', async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Reply>('text', 'weather', 'pay'), { minLength: 1, maxLength: 4 }),
        fc.array(actionArb, { minLength: 1, maxLength: 7 }),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
        async (replies, actions, lastOnly, approvals) => {
          // given
          const chat = new TestChat({ id: `prop-${kind}-${run++}`, api: chatRoute(store, reactiveModel(replies)), lastOnly })
          let step = 0
          for (const planned of actions) {
            // a pending approval is answered first (the SDK cannot send on with an open call)
            const pending = chat.list.at(-1)?.parts.find((p) => isToolUIPart(p) && p.state === 'approval-requested')
            const action: Action = pending !== undefined ? { kind: 'answer', approved: approvals[step] ?? true } : planned
            step++
            // when
            const users = chat.list.filter((m) => m.role === 'user')
            if (action.kind === 'send') await chat.sendMessage({ text: action.text })
            else if (action.kind === 'edit' && users.length > 0) {
              await chat.sendMessage({ text: action.text, messageId: (users[action.which % users.length] as { id: string }).id })
            } else if (action.kind === 'regenerate' && chat.list.length > 0) await chat.regenerate()
            else if (action.kind === 'repost' && chat.list.length > 0) {
              const turn = await receiveChat(store, chat.id, { messages: chat.list })
              expect(turn.duplicate).toBe(true)
            } else if (action.kind === 'answer') {
              const approval = (pending as { approval: { id: string } }).approval
              await chat.addToolApprovalResponse({ id: approval.id, approved: action.approved })
              await chat.sendMessage()
            }
            expect(chat.error).toBeUndefined()
            // then
            if (chat.list.length === 0) continue
            const stored = await loadChat(store, chat.id)
            expect(stored).toEqual(chat.list)
            await validateUIMessages<ChatMessage>({ messages: stored, tools })
          }
        },
      ),
      { numRuns: kind === 'pglite' ? 20 : 12 },
    )
  }, 240_000)
})
