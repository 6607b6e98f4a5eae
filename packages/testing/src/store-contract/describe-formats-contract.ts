import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, toWire, type Message } from '@turnlog/core'
import { createdAtArb, formatPayloadArb, metaArb } from '../arbitraries.js'
import { eventsOf, expectTurnlogError, freshHash, toolCall, user, type ContractContext } from './contract-helpers.js'

/**
 * The message-format contract: a message's `format` and `meta` are stored with it and come back from
 * load, revise and fork; payloads of every format round-trip exactly (toWire included); `meta` never
 * reaches the wire and is not content; a chat message's stored envelope is what it was before formats
 * existed; pairing reads each message by its format.
 */
export function describeFormatsContract(ctx: ContractContext, options: { readonly roundTripRuns: number }): void {
  describe('message formats and meta', () => {
    it('append → load → toWire round-trips every format exactly (NUL, lone surrogates, unknown fields), with format and meta', async () => {
      const store = ctx.store()
      const batchArb = fc.array(
        fc.record({ spec: formatPayloadArb, meta: fc.option(metaArb, { nil: undefined }), createdAt: createdAtArb }),
        { minLength: 1, maxLength: 5 },
      )
      await fc.assert(
        fc.asyncProperty(batchArb, async (specs) => {
          // given
          const messages: Message<unknown>[] = specs.map((s) =>
            createMessage(s.spec.payload, {
              format: s.spec.format,
              createdAt: s.createdAt,
              ...(s.meta === undefined ? {} : { meta: s.meta }),
            }),
          )
          const sid = await store.createSession()

          // when
          await store.append(sid, messages)
          const loaded = (await store.load(sid)).messages as Message<unknown>[]
          const events = await eventsOf(store, sid)

          // then
          expect(loaded.map((m) => m.id)).toEqual(messages.map((m) => m.id))
          for (const [i, original] of messages.entries()) {
            const copy = loaded[i]
            expect(copy?.format).toBe(original.format)
            expect(copy?.meta).toEqual(original.meta)
            expect(JSON.stringify(copy?.payload)).toBe(JSON.stringify(original.payload))
            expect(events[i]?.contentHash).toBe(freshHash(original.payload))
          }
          expect(JSON.stringify(toWire(loaded))).toBe(JSON.stringify(toWire(messages)))
          expect(JSON.stringify(toWire(loaded, { repairPairing: true }))).toBe(JSON.stringify(toWire(messages, { repairPairing: true })))
          // and the loaded messages are the same messages
          expect((await store.append(sid, loaded)).appended).toEqual([])
        }),
        { numRuns: options.roundTripRuns },
      )
    })

    it('a chat message is stored as before formats existed (no format in its envelope); another format names itself', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const chat = user('hello')
      const opaque = createMessage({ kind: 'note', body: 'x' }, { format: 'json' })

      // when
      await store.append(sid, [chat, opaque])
      const events = await eventsOf(store, sid)

      // then
      expect(events.map((e) => e.type === 'message_appended' && e.data)).toEqual([
        { createdAt: chat.createdAt },
        { createdAt: opaque.createdAt, format: 'json' },
      ])
    })

    it('meta is stored and loaded, never sent, and not content: a retry that differs only in meta is a duplicate (the first meta stays)', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const id = newMessageIdFor()
      const first = createMessage(
        { role: 'assistant', content: 'hi' },
        { id, meta: { model: 'gpt-4.1', usage: { prompt_tokens: 3 }, latencyMs: 120 } },
      )
      const retry = createMessage({ role: 'assistant', content: 'hi' }, { id, meta: { model: 'gpt-4.1', latencyMs: 480 } })

      // when
      await store.append(sid, [first])
      const again = await store.append(sid, [retry])
      const { messages } = await store.load(sid)

      // then
      expect(again.duplicates).toEqual([id])
      expect(messages[0]?.meta).toEqual({ model: 'gpt-4.1', usage: { prompt_tokens: 3 }, latencyMs: 120 })
      expect(toWire(messages)).toEqual([{ role: 'assistant', content: 'hi' }])
      const events = await eventsOf(store, sid)
      expect(events).toHaveLength(1)
      expect(events[0]?.type === 'message_appended' && events[0].data.meta).toEqual({
        model: 'gpt-4.1',
        usage: { prompt_tokens: 3 },
        latencyMs: 120,
      })
    })

    it('meta with NUL or a lone surrogate is refused (INVALID_INPUT), as every envelope field', async () => {
      const store = ctx.store()
      const sid = await store.createSession()
      await expectTurnlogError(
        store.append(sid, [createMessage({ role: 'user', content: 'a' }, { meta: { trace: 'a\u0000b' } })]),
        'INVALID_INPUT',
      )
      await expectTurnlogError(
        store.append(sid, [createMessage({ role: 'user', content: 'a' }, { meta: { trace: '\ud800' } })]),
        'INVALID_INPUT',
      )
      expect((await store.getSession(sid)).version).toBe(0)
    })

    it('revise validates with the message format and keeps format and meta; fork copies them', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const note = createMessage({ kind: 'note', text: 'v1' }, { format: 'json', meta: { app: 'x' } })
      const chat = user('question', { meta: { channel: 'web' } })
      await store.append(sid, [note, chat])

      // when
      const revised = await store.revise(sid, note.id, { kind: 'note', text: 'v2' })
      const refused = await expectTurnlogError(store.revise(sid, chat.id, { kind: 'note' }), 'INVALID_MESSAGE')
      const child = await store.fork(sid, { at: chat.id })
      const forked = (await store.load(child)).messages

      // then
      expect(refused.code).toBe('INVALID_MESSAGE')
      expect(revised.message).toMatchObject({ id: note.id, format: 'json', meta: { app: 'x' }, payload: { kind: 'note', text: 'v2' } })
      const reloaded = (await store.load(sid)).messages
      expect(reloaded.map((m) => [m.format, m.meta])).toEqual([
        ['json', { app: 'x' }],
        ['openai-chat', { channel: 'web' }],
      ])
      expect(forked.map((m) => [m.id, m.format, m.meta, m.payload])).toEqual(reloaded.map((m) => [m.id, m.format, m.meta, m.payload]))
    })

    it('a payload without a chat role is refused under the default format and accepted as json', async () => {
      const store = ctx.store()
      const sid = await store.createSession()
      await expectTurnlogError(
        store.append(sid, [{ id: newMessageIdFor(), payload: { kind: 'x' }, createdAt: new Date().toISOString() } as never]),
        'INVALID_MESSAGE',
      )
      const ok = await store.append(sid, [
        { id: newMessageIdFor(), payload: { kind: 'x' }, format: 'json', createdAt: new Date().toISOString() } as never,
      ])
      expect(ok.appended).toHaveLength(1)
      await expectTurnlogError(
        store.append(sid, [
          { id: newMessageIdFor(), payload: { kind: 'x' }, format: 'no-such-format', createdAt: new Date().toISOString() } as never,
        ]),
        'INVALID_MESSAGE',
      )
    })

    it('pairing reads each message by its format: a json message answers no call, so the chat call stays unanswered', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const call = toolCall(['call_f1'])
      const lookalike = createMessage({ role: 'tool', tool_call_id: 'call_f1', content: 'not a chat result' }, { format: 'json' })

      // when
      await store.append(sid, [user('go'), call, lookalike])
      const { pairing, messages } = await store.load(sid)

      // then
      expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_f1' }])
      const wire = toWire(messages, { repairPairing: true })
      // the synthetic result closes the call's block, before the json message (which is sent as it is)
      expect(wire.slice(-2)).toEqual([
        { role: 'tool', tool_call_id: 'call_f1', content: 'Tool call interrupted: no result was recorded.' },
        { role: 'tool', tool_call_id: 'call_f1', content: 'not a chat result' },
      ])
    })
  })
}

/** A fresh message id (UUIDv7), for tests that build envelopes by hand. */
function newMessageIdFor(): string {
  return user('id source').id
}
