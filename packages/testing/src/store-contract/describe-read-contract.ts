import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, newSessionId, type Message, type SessionId } from '@turnlog/core'
import { chatPayloadArb, createdAtArb, nonEmptyWeirdStringArb } from '../arbitraries.js'
import { assistant, eventsOf, expectTurnlogError, freshHash, user, type ContractContext } from './contract-helpers.js'

/** NUL or any surrogate: what the store refuses in engine-visible strings such as externalId. */
// eslint-disable-next-line no-control-regex
const UNSAFE_TEXT = /[\u0000\ud800-\udfff]/

/** Options of {@link describeReadContract}. */
export interface ReadContractOptions {
  /** fast-check runs of the lossless round-trip property. */
  readonly roundTripRuns: number
}

/**
 * The read side: `load`, `events` (paging by seq), `sessions` (keyset paging), `getSession`,
 * `createSession`, and the lossless round trip of hostile payloads (NUL, lone surrogates, astral
 * characters, unknown fields, key order).
 */
export function describeReadContract(ctx: ContractContext, options: ReadContractOptions): void {
  describe('load, events, sessions, getSession', () => {
    it('createSession with an id is idempotent; another tenant for that id is SESSION_EXISTS', async () => {
      // given
      const store = ctx.store()
      const id = newSessionId()

      // when
      const first = await store.createSession({ id, tenantId: 'acme', metadata: { agent: 'hermes', n: 1 } })
      const again = await store.createSession({ id: id.toUpperCase(), tenantId: 'acme' })

      // then
      expect([first, again]).toEqual([id, id])
      await expectTurnlogError(store.createSession({ id, tenantId: 'other' }), 'SESSION_EXISTS')
      const info = await store.getSession(id)
      expect(info).toMatchObject({
        sessionId: id,
        tenantId: 'acme',
        version: 0,
        liveCount: 0,
        metadata: { agent: 'hermes', n: 1 },
        parent: null,
      })
    })

    it('getSession reports version, live count and timestamps', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const a = user('a')

      // when
      await store.append(sid, [a, assistant('b'), user('c')])
      await store.rewind(sid, { after: a.id })
      const info = await store.getSession(sid)

      // then
      expect(info).toMatchObject({ sessionId: sid, tenantId: null, version: 4, liveCount: 1, metadata: null, parent: null })
      expect(Date.parse(info.updatedAt)).toBeGreaterThanOrEqual(Date.parse(info.createdAt))
    })

    it('load returns the live list in log order with the session version and pairing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const batch = [user('a'), assistant('b')]
      await store.append(sid, batch)

      // when
      const loaded = await store.load(sid)
      const empty = await store.load(await store.createSession())

      // then
      expect(loaded.sessionId).toBe(sid)
      expect(loaded.version).toBe(2)
      expect(loaded.messages).toEqual(batch)
      expect(loaded.pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
      expect(empty.messages).toEqual([])
      expect(empty.version).toBe(0)
    })

    it('events pages by seq (fromSeq/toSeq, inclusive) and chains every event to the previous one', async () => {
      // given: more events than one internal page would hold is not needed; ranges are the contract
      const store = ctx.store()
      const sid = await store.createSession()
      const batch = Array.from({ length: 12 }, (_, i) => user(`m${i}`))
      await store.append(sid, batch)

      // when
      const all = await eventsOf(store, sid)
      const middle: number[] = []
      for await (const e of store.events(sid, { fromSeq: 4, toSeq: 7 })) middle.push(e.seq)
      const tail: number[] = []
      for await (const e of store.events(sid, { fromSeq: 11 })) tail.push(e.seq)
      const none: number[] = []
      for await (const e of store.events(sid, { fromSeq: 13 })) none.push(e.seq)

      // then
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
      expect(middle).toEqual([4, 5, 6, 7])
      expect(tail).toEqual([11, 12])
      expect(none).toEqual([])
      expect(all.every((e) => /^[0-9a-f]{64}$/.test(e.hash))).toBe(true)
      expect(new Set(all.map((e) => e.hash)).size).toBe(12)
      expect(all.every((e) => !Number.isNaN(Date.parse(e.recordedAt)))).toBe(true)
    })

    it('sessions pages with a keyset cursor: every session exactly once, filtered by tenant', async () => {
      // given
      const store = ctx.store()
      const tenant = `tenant-${newSessionId()}`
      const created: SessionId[] = []
      for (let i = 0; i < 7; i++) created.push(await store.createSession({ tenantId: tenant }))
      await store.createSession({ tenantId: `${tenant}-other` })

      // when
      const seen: SessionId[] = []
      const pageSizes: number[] = []
      let after: string | undefined
      for (let guard = 0; guard < 10; guard++) {
        const page = await store.sessions({ tenantId: tenant, limit: 3, ...(after === undefined ? {} : { after }) })
        pageSizes.push(page.sessions.length)
        seen.push(...page.sessions.map((s) => s.sessionId))
        if (page.next === null) break
        after = page.next
      }

      // then
      expect(pageSizes).toEqual([3, 3, 1])
      expect(seen).toEqual([...created].sort())
      await expectTurnlogError(store.sessions({ limit: 0 }), 'INVALID_INPUT')
      await expectTurnlogError(store.sessions({ limit: 1001 }), 'INVALID_INPUT')
    })

    it('load({ at }) beyond the version is INVALID_INPUT; at 0 is the empty list', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      await store.append(sid, [user('a')])

      // when
      const atZero = await store.load(sid, { at: 0 })

      // then
      expect(atZero.messages).toEqual([])
      expect(atZero.version).toBe(0)
      await expectTurnlogError(store.load(sid, { at: 2 }), 'INVALID_INPUT')
      await expectTurnlogError(store.load(sid, { at: -1 }), 'INVALID_INPUT')
    })
  })

  describe('lossless payload round trip', () => {
    const batchArb = fc.array(
      fc.record({
        payload: chatPayloadArb,
        createdAt: createdAtArb,
        externalId: fc.option(nonEmptyWeirdStringArb, { nil: undefined, freq: 4 }),
      }),
      { minLength: 1, maxLength: 4 },
    )

    it('hostile strings, unknown fields and key order come back byte-identical, with equal hashes', async () => {
      const store = ctx.store()
      await fc.assert(
        fc.asyncProperty(batchArb, async (specs) => {
          // given: externalIds that Postgres JSON operators cannot read are refused (INVALID_INPUT), not mangled:
          // keep safe ones, made unique (the same externalId is the same message, which another run's
          // session already owns)
          const nonce = newSessionId()
          const messages: Message[] = specs.map((s, i) =>
            createMessage(s.payload, {
              createdAt: s.createdAt,
              ...(s.externalId !== undefined && s.externalId.length <= 4000 && !UNSAFE_TEXT.test(s.externalId)
                ? { externalId: `${nonce}:${i}:${s.externalId}`, scope: null }
                : {}),
            }),
          )
          const sid = await store.createSession()

          // when
          await store.append(sid, messages)
          const loaded = (await store.load(sid)).messages
          const travelled = (await store.load(sid, { at: messages.length })).messages
          const events = await eventsOf(store, sid)

          // then
          for (const [i, original] of messages.entries()) {
            for (const copy of [loaded[i], travelled[i]]) {
              expect(copy?.id).toBe(original.id)
              expect(copy?.payload).toEqual(original.payload)
              expect(JSON.stringify(copy?.payload)).toBe(JSON.stringify(original.payload))
              expect(freshHash(copy?.payload)).toBe(freshHash(original.payload))
              expect(copy?.createdAt).toBe(original.createdAt)
              expect(copy?.externalId).toBe(original.externalId)
            }
            const e = events[i]
            expect(e?.type === 'message_appended' && JSON.stringify(e.payload)).toBe(JSON.stringify(original.payload))
            expect(e?.contentHash).toBe(freshHash(original.payload))
          }
          // and the loaded messages are recognised as the same messages
          expect((await store.append(sid, loaded)).appended).toEqual([])
        }),
        { numRuns: options.roundTripRuns },
      )
    })

    it('payloads with NUL, lone surrogates and astral characters in every position', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const hostile = ['\u0000', '\ud800', '\udfff', 'a\ud83d', '\ude00b', '😀', '𝄞\u0000\ud800', '\u2028\u2029', '\\u0000', '"\'`']
      const messages = hostile.map((s) =>
        createMessage({
          role: 'assistant',
          content: s,
          [s]: s,
          reasoning_details: [{ text: s }],
          tool_calls: [{ id: `call_${s}`, type: 'function', function: { name: 'f', arguments: s } }],
        }),
      )

      // when
      await store.append(sid, messages)
      const loaded = (await (await ctx.reopen()).load(sid)).messages

      // then
      expect(loaded.map((m) => JSON.stringify(m.payload))).toEqual(messages.map((m) => JSON.stringify(m.payload)))
      expect(loaded.map((m) => freshHash(m.payload))).toEqual(messages.map((m) => freshHash(m.payload)))
    })
  })
}
