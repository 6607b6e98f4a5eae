import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  createMessage,
  isTurnlogError,
  toMessage,
  toWire,
  type ChatMessage,
  type WireMessage,
  type Message,
  type MessageId,
  type SessionStore,
} from '@turnlog/core'
import { withRetry } from '@turnlog/postgres'
import { assistant, eventsOf, expectTurnlogError, nudge, system, toolCall, toolResult, user } from './contract-helpers.js'
import type { ContractContext } from './contract-helpers.js'

/** How a test copies a message: the same object, a spread copy, a JSON round trip. */
type CopyKind = 'same' | 'spread' | 'json'

function copyOf(m: Message, how: CopyKind): Message {
  if (how === 'same') return m
  if (how === 'spread') return toMessage({ ...m })
  return toMessage(JSON.parse(JSON.stringify(m)))
}

/** The first occurrence of each id, scaffolding left out: what a list with copies stands for. */
function withoutCopies(list: readonly Message[]): Message[] {
  const seen = new Set<string>()
  return list.filter((m) => m.ephemeral !== true && !seen.has(m.id) && seen.add(m.id))
}

/** What a caller compares with `load`: ids, payloads and streaming status of the durable messages. */
function durableView(list: readonly Message[]): unknown[] {
  return list.filter((m) => m.ephemeral !== true).map((m) => ({ id: m.id, payload: m.payload, partial: m.status === 'partial' }))
}

async function storedView(store: SessionStore, sid: string): Promise<unknown[]> {
  return durableView((await store.load(sid)).messages)
}

/** A response message shaped as the `openai` SDK's `ChatCompletionMessage` (no index signature). */
interface FakeReply {
  role: 'assistant'
  content: string | null
  refusal: string | null
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
}

/**
 * A scripted stand-in for the OpenAI client of docs/integrating.md, typed like the SDK (requests take
 * `ChatCompletionMessageParam[]`, which `WireMessage[]` is; replies are `ChatCompletionMessage`s): the
 * first reply of a turn calls a tool, the reply after a tool result answers. Records every request's
 * messages.
 */
function fakeOpenAI(): {
  chat: { completions: { create(body: { model: string; messages: WireMessage[] }): Promise<{ choices: { message: FakeReply }[] }> } }
  requests: (readonly ChatMessage[])[]
} {
  const requests: (readonly ChatMessage[])[] = []
  let calls = 0
  return {
    requests,
    chat: {
      completions: {
        async create(body) {
          requests.push(body.messages)
          const last = body.messages[body.messages.length - 1]
          if (last?.role === 'tool')
            return { choices: [{ message: { role: 'assistant', content: 'It is the acme readme.', refusal: null } }] }
          calls++
          return {
            choices: [
              {
                message: {
                  role: 'assistant',
                  content: '',
                  refusal: null,
                  tool_calls: [
                    { id: `call_${calls}`, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } },
                  ],
                },
              },
            ],
          }
        },
      },
    },
  }
}

/**
 * The live-list contract (issue 13, items 2, 15, 16): identical copies of a message in one list or
 * batch are one message; the results of revise/finalize/rewind/compact bring the caller's list in step
 * with the store; ids derived from platform ids are scoped.
 */
export function describeLiveListContract(ctx: ContractContext): void {
  describe('identical copies in one call (a redelivered message in the live list)', () => {
    it('regression (issue 13.2): the loop of docs/integrating.md survives a platform redelivery; every message of both turns is stored once', async () => {
      // given: the loop of docs/integrating.md, copied as it stands (OpenAI and the tool are scripted)
      const store = ctx.store()
      const openai = fakeOpenAI()
      const runTool = async (call: unknown): Promise<string> => `{"ok":true,"text":"# acme \u0000 ${JSON.stringify(call).length}"}`

      // docs/integrating.md shows this loop character for character (core/test/integrating-doc.test.ts)
      // prettier-ignore
      async function runTurn(session: string, live: Message[], chatId: string, platformMessageId: string, userText: string) {
        // inbound: derive the id from the platform's own id, scoped to the chat (a Telegram message id is
        // unique only per chat), so a redelivery (after a 429) gets the same id and is stored once
        const inbound = createMessage({ role: 'user', content: userText }, { externalId: platformMessageId, scope: `telegram:${chatId}` })
        if (live.some((m) => m.id === inbound.id)) return                // a redelivery: already received (below)
        live.push(inbound)
        try {
          for (;;) {
            await withRetry(() => store.flush(session, live))           // before the model call
            const res = await openai.chat.completions.create({ model: 'gpt-4.1', messages: toWire(live, { repairPairing: true }) })
            const reply = createMessage(res.choices[0]!.message)         // a new id, minted now
            live.push(reply)
            await withRetry(() => store.flush(session, live))           // after each model reply
            const calls = reply.payload.tool_calls ?? []
            if (calls.length === 0) return
            for (const call of calls) {
              const output = await runTool(call)                          // may contain NUL, lone surrogates: fine
              live.push(createMessage({ role: 'tool', tool_call_id: call.id, content: output }))
              await withRetry(() => store.flush(session, live))         // after each tool result
            }
          }
        } finally {
          await store.flush(session, live)                              // every exit path, including errors
        }
      }

      // and: the same loop as documented before (no redelivery check): it pushes the redelivered message again
      async function runTurnPushingCopies(session: string, live: Message[], chatId: string, platformMessageId: string, userText: string) {
        live.push(createMessage({ role: 'user', content: userText }, { externalId: platformMessageId, scope: `telegram:${chatId}` }))
        try {
          for (;;) {
            await withRetry(() => store.flush(session, live))
            const res = await openai.chat.completions.create({ model: 'gpt-4.1', messages: toWire(live, { repairPairing: true }) })
            const reply = createMessage(res.choices[0]!.message)
            live.push(reply)
            await withRetry(() => store.flush(session, live))
            const calls = reply.payload.tool_calls ?? []
            if (calls.length === 0) return
            for (const call of calls) {
              live.push(createMessage({ role: 'tool', tool_call_id: call.id, content: await runTool(call) }))
              await withRetry(() => store.flush(session, live))
            }
          }
        } finally {
          await store.flush(session, live)
        }
      }
      const chat = `chat-${Math.random().toString(36).slice(2)}`

      // when: a turn, the platform redelivers its message, a second turn; in both loops
      const documented = await store.createSession()
      const live: Message[] = []
      await runTurn(documented, live, chat, '9001', 'What is in README.md?')
      await runTurn(documented, live, chat, '9001', 'What is in README.md?')
      await runTurn(documented, live, chat, '9002', 'And in package.json?')
      const old = await store.createSession()
      const oldLive: Message[] = []
      await runTurnPushingCopies(old, oldLive, `${chat}-old`, '9001', 'What is in README.md?')
      await runTurnPushingCopies(old, oldLive, `${chat}-old`, '9001', 'What is in README.md?')
      await runTurnPushingCopies(old, oldLive, `${chat}-old`, '9002', 'And in package.json?')

      // then: each loop's whole live list is stored, every message once, in order
      expect(live).toHaveLength(8)
      expect(await storedView(store, documented)).toEqual(durableView(live))
      expect(await eventsOf(store, documented)).toHaveLength(8)
      expect(oldLive.filter((m) => m.id === oldLive[0]?.id)).toHaveLength(2)
      expect(await storedView(store, old)).toEqual(durableView(withoutCopies(oldLive)))
      expect(await eventsOf(store, old)).toHaveLength(withoutCopies(oldLive).length)
      expect(withoutCopies(oldLive)).toHaveLength(11)
    })

    it('append: copies (same object, spread, JSON round trip, interleaved) are stored once and reported in duplicates', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]

      // when
      const first = await store.append(sid, [a, b, a, copyOf(b, 'spread'), c, copyOf(a, 'json')])
      const again = await store.append(sid, [c, copyOf(c, 'json')])

      // then
      expect(first).toEqual({ version: 3, appended: [a.id, b.id, c.id], duplicates: [a.id, b.id] })
      expect(again).toEqual({ version: 3, appended: [], duplicates: [c.id] })
      expect(await storedView(store, sid)).toEqual(durableView([a, b, c]))
      expect(await eventsOf(store, sid)).toHaveLength(3)
    })

    it('flush: copies in the live list are one message; scaffolding copies are skipped', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [s, q, n] = [system('s'), user('q'), nudge()]
      await store.flush(sid, [s])
      const reply = assistant('r')

      // when
      const result = await store.flush(sid, [s, q, n, copyOf(q, 'spread'), n, reply, copyOf(s, 'json'), reply])

      // then: s was stored, q and reply were written once; the ids listed twice are duplicates too
      expect(result).toEqual({ version: 3, appended: [q.id, reply.id], duplicates: [s.id, q.id, reply.id] })
      expect(await storedView(store, sid)).toEqual(durableView([s, q, reply]))
    })

    it('concurrent appends and flushes with copies to many sessions (one group commit on Postgres) store each message once', async () => {
      // given: 12 sessions, each with a list holding copies of its messages
      const store = ctx.store()
      const sessions = await Promise.all(Array.from({ length: 12 }, () => store.createSession()))
      const lists = sessions.map((_, i) => {
        const [q, a] = [user(`q${i}`), assistant(`a${i}`)]
        return [q, copyOf(q, 'json'), a, q, copyOf(a, 'spread')]
      })

      // when: all at once, half by append and half by flush
      const results = await Promise.all(
        sessions.map((sid, i) => (i % 2 === 0 ? store.append(sid, lists[i] ?? []) : store.flush(sid, lists[i] ?? []))),
      )

      // then
      for (const [i, sid] of sessions.entries()) {
        const [q, , a] = lists[i] ?? []
        expect(results[i]).toEqual({ version: 2, appended: [q?.id, a?.id], duplicates: [q?.id, a?.id] })
        expect(await storedView(store, sid)).toEqual(durableView([q as Message, a as Message]))
      }
    })

    it('one id with two different contents in one call is MESSAGE_CONFLICT: nothing written, evidence recorded', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = user('original')
      const edited = toMessage({ ...m, payload: { role: 'user', content: 'edited' } })
      const other = assistant('other')

      // when
      const viaAppend = await expectTurnlogError(store.append(sid, [m, other, edited]), 'MESSAGE_CONFLICT')
      const viaFlush = await expectTurnlogError(store.flush(sid, [edited, other, m]), 'MESSAGE_CONFLICT')

      // then
      expect(viaAppend.details).toMatchObject({ messageId: m.id, reason: 'content_mismatch' })
      expect(viaFlush.details).toMatchObject({ messageId: m.id, reason: 'content_mismatch' })
      expect(await eventsOf(store, sid)).toHaveLength(0)
      expect((await store.conflicts(sid)).map((c) => [c.messageId, c.reason])).toEqual([
        [m.id, 'content_mismatch'],
        [m.id, 'content_mismatch'],
      ])
    })

    it('class: any live list with repeated copies (interleaved, before or after the original, flushed in steps) stores what the list without copies stores', async () => {
      const store = ctx.store()
      const itemArb = fc.record({
        text: fc.constantFrom('a', 'b', 'ok', 'nul \u0000', 'lone \ud800'),
        role: fc.constantFrom('user', 'assistant'),
        ephemeral: fc.boolean(),
      })
      const copyArb = fc.record({ pick: fc.nat(), at: fc.nat(), how: fc.constantFrom<CopyKind>('same', 'spread', 'json') })
      await fc.assert(
        fc.asyncProperty(
          fc.array(itemArb, { minLength: 1, maxLength: 6 }),
          fc.array(copyArb, { maxLength: 8 }),
          fc.array(fc.nat(), { maxLength: 3 }),
          async (items, copies, cuts) => {
            // given: a live list, and the same list with copies inserted anywhere
            const base = items.map((i) => createMessage({ role: i.role, content: i.text }, i.ephemeral ? { ephemeral: true } : {}))
            const list = [...base]
            for (const c of copies) list.splice(c.at % (list.length + 1), 0, copyOf(base[c.pick % base.length] as Message, c.how))
            const unique = withoutCopies(list)
            const twin = unique.map((m) => createMessage(m.payload))
            const [sid, twinSid] = [await store.createSession(), await store.createSession()]

            // when: the list with copies is flushed in steps (as a turn grows), then whole; the twin once
            for (const cut of [...cuts].sort((x, y) => x - y)) await store.flush(sid, list.slice(0, cut % (list.length + 1)))
            const last = await store.flush(sid, list)
            const twinResult = await store.flush(twinSid, twin)

            // then: the same stored state (payloads, order, versions, one event per message)
            const loaded = (await store.load(sid)).messages
            expect(loaded.map((m) => m.id)).toEqual(unique.map((m) => m.id))
            expect(loaded.map((m) => m.payload)).toEqual((await store.load(twinSid)).messages.map((m) => m.payload))
            expect(last.version).toBe(twinResult.version)
            expect((await eventsOf(store, sid)).map((e) => e.type)).toEqual((await eventsOf(store, twinSid)).map((e) => e.type))
            const listed = new Set(list.filter((m) => m.ephemeral !== true).map((m) => m.id))
            expect(new Set([...last.appended, ...last.duplicates])).toEqual(listed)
          },
        ),
        { numRuns: 20 },
      )
    })
  })

  describe('scoped external ids', () => {
    it('regression (issue 13.16): one platform message id in two chats gives two messages, both stored; a redelivery in one chat is a duplicate', async () => {
      // given: Telegram message ids are unique only per chat
      const store = ctx.store()
      const [chatA, chatB] = [await store.createSession(), await store.createSession()]
      const nonce = Math.random().toString(36).slice(2)
      const inbound = (chat: string): Message =>
        createMessage({ role: 'user', content: 'hi' }, { externalId: '17', scope: `telegram:${nonce}:${chat}` })

      // when
      const a = await store.flush(chatA, [inbound('A')])
      const b = await store.flush(chatB, [inbound('B')])
      const redelivered = await (await ctx.reopen()).flush(chatA, [inbound('A')])

      // then
      expect(inbound('A').id).not.toBe(inbound('B').id)
      expect(a.appended).toEqual([inbound('A').id])
      expect(b.appended).toEqual([inbound('B').id])
      expect(redelivered).toEqual({ version: 1, appended: [], duplicates: [inbound('A').id] })
    })

    it('the scope is kept in the envelope (externalScope) through load, revise, fork and a JSON round trip', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const scope = `telegram:${Math.random().toString(36).slice(2)}`
      const m = createMessage({ role: 'user', content: 'hi' }, { externalId: '17', scope })
      await store.flush(sid, [m, assistant('hello')])

      // when
      const loaded = (await store.load(sid)).messages[0]
      const revised = await store.revise(sid, m.id, { role: 'user', content: 'hi (edited)' })
      const reloaded = (await store.load(sid)).messages[0]
      const child = await store.fork(sid, { at: m.id })
      const forked = (await store.load(child)).messages[0]

      // then
      expect(m).toMatchObject({ externalId: '17', externalScope: scope })
      expect(loaded).toEqual(m)
      expect(toMessage(JSON.parse(JSON.stringify(loaded)))).toEqual(m)
      expect([revised.message.externalScope, reloaded?.externalScope, forked?.externalScope]).toEqual([scope, scope, scope])
    })
  })

  describe("keeping the caller's live list in step (applyTo, ReviseResult.message)", () => {
    it('regression (issue 13.15): after revise, finalize, rewind and compact, applyTo(live) holds what load returns; scaffolding stays', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const streaming = createMessage({ role: 'assistant', content: 'Once' }, { status: 'partial' })
      let live: Message[] = [system('s'), user('q'), nudge(), toolCall(['call_1']), toolResult('call_1', 'out'), streaming]
      await store.flush(sid, live)
      const check = async (): Promise<void> => expect(durableView(live)).toEqual(await storedView(store, sid))

      // when / then: revise
      const revisedTool = await store.revise(sid, live[4]?.id ?? '', { role: 'tool', tool_call_id: 'call_1', content: 'out [truncated]' })
      expect(revisedTool.message).toMatchObject({ id: live[4]?.id, payload: { content: 'out [truncated]' }, createdAt: live[4]?.createdAt })
      live = revisedTool.applyTo(live)
      await check()
      // a streaming revision, then finalize without and with content
      live = (await store.revise(sid, streaming.id, { role: 'assistant', content: 'Once upon' }, { status: 'partial' })).applyTo(live)
      await check()
      const finalized = await store.finalize(sid, streaming.id)
      expect(finalized.message).toMatchObject({ id: streaming.id, payload: { content: 'Once upon' } })
      expect(finalized.message.status).toBeUndefined()
      live = finalized.applyTo(live)
      await check()
      // rewind: the failed attempt (the scaffolding after it goes with it)
      live.push(user('retry this'), nudge('(empty)'))
      await store.flush(sid, live)
      live = (await store.rewind(sid, { from: (live[live.length - 2]?.id ?? '') as MessageId })).applyTo(live)
      await check()
      expect(live.filter((m) => m.ephemeral === true)).toHaveLength(1)
      // compact: the summary takes the first covered message's place
      const summary = system('summary of q and the tool call')
      live = (await store.compact(sid, { covered: [live[1]?.id ?? '', live[3]?.id ?? '', live[4]?.id ?? ''], summary })).applyTo(live)
      await check()
      expect(live.map((m) => m.id)).toContain(summary.id)
      // a flush of the updated list writes nothing
      expect((await store.flush(sid, live)).appended).toEqual([])
    })

    it('class: over random histories of appends, scaffolding, revisions, finalizations, rewinds and compactions, applyTo(live) always equals load', async () => {
      const store = ctx.store()
      type Op =
        | { kind: 'add'; role: 'user' | 'assistant'; partial: boolean }
        | { kind: 'nudge' }
        | { kind: 'revise'; pick: number; partial: boolean }
        | { kind: 'finalize'; pick: number; content: boolean }
        | { kind: 'rewind'; pick: number; from: boolean }
        | { kind: 'compact'; picks: number[] }
      const opArb: fc.Arbitrary<Op> = fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            kind: fc.constant('add' as const),
            role: fc.constantFrom('user' as const, 'assistant' as const),
            partial: fc.boolean(),
          }),
        },
        { weight: 1, arbitrary: fc.constant({ kind: 'nudge' as const }) },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant('revise' as const), pick: fc.nat(), partial: fc.boolean() }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('finalize' as const), pick: fc.nat(), content: fc.boolean() }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('rewind' as const), pick: fc.nat(), from: fc.boolean() }) },
        {
          weight: 1,
          arbitrary: fc.record({ kind: fc.constant('compact' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
        },
      )
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), async (ops) => {
          const sid = await store.createSession()
          let live: Message[] = []
          let n = 0
          const durable = (): Message[] => live.filter((m) => m.ephemeral !== true)
          const pick = (i: number): Message | undefined => durable()[i % Math.max(1, durable().length)]
          for (const op of ops) {
            try {
              if (op.kind === 'add') {
                live.push(
                  createMessage({ role: op.role, content: `m${n++}` }, op.role === 'assistant' && op.partial ? { status: 'partial' } : {}),
                )
                await store.flush(sid, live)
              } else if (op.kind === 'nudge') {
                live.push(nudge())
              } else if (op.kind === 'revise') {
                const m = pick(op.pick)
                if (!m) continue
                live = (
                  await store.revise(
                    sid,
                    m.id,
                    { ...m.payload, content: `r${n++}` },
                    { status: m.status === 'partial' && op.partial ? 'partial' : 'final' },
                  )
                ).applyTo(live)
              } else if (op.kind === 'finalize') {
                const m = pick(op.pick)
                if (!m) continue
                live = (await store.finalize(sid, m.id, op.content ? { ...m.payload, content: `f${n++}` } : undefined)).applyTo(live)
              } else if (op.kind === 'rewind') {
                const m = pick(op.pick)
                if (!m) continue
                live = (await store.rewind(sid, op.from ? { from: m.id } : { after: m.id })).applyTo(live)
              } else {
                const covered = [...new Set(op.picks.map((p) => pick(p)?.id).filter((id): id is MessageId => id !== undefined))]
                if (covered.length === 0) continue
                live = (await store.compact(sid, { covered, summary: system(`summary ${n++}`) })).applyTo(live)
              }
            } catch (error) {
              // a final message cannot become partial again: the store refuses, the list stays as it was
              if (!isTurnlogError(error, 'INVALID_INPUT')) throw error
            }
            expect(durableView(live)).toEqual(await storedView(store, sid))
          }
        }),
        { numRuns: 15 },
      )
    })
  })
}
