import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionStore } from '@turnlog/core'
import fc from 'fast-check'
import { assistant, eventsOf, expectTurnlogError, nudge, user, type ContractContext } from './contract-helpers.js'

/** The message with `id` and `createdAt` of `m` and new text content (a revision of it). */
function edited(m: Message, content: string): Message {
  return createMessage({ role: 'user', content }, { id: m.id, createdAt: m.createdAt })
}

/** The session's live list as (id, payload) pairs, to compare with the caller's list. */
async function loaded(store: SessionStore, sid: string): Promise<{ id: string; payload: unknown }[]> {
  return (await store.load(sid)).messages.map((m) => ({ id: m.id, payload: m.payload }))
}

const shape = (list: readonly Message[]): { id: string; payload: unknown }[] => list.map((m) => ({ id: m.id, payload: m.payload }))

/**
 * The `sync` contract: the caller's list becomes the live list in one transaction (appends,
 * retractions marked as sync's, revisions), a repeat is a no-op, a reorder or a stale version is
 * refused with nothing written.
 */
export function describeSyncContract(ctx: ContractContext): void {
  describe('sync', () => {
    it('appends new messages, retracts missing ones, revises changed ones, then load equals the list', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      await store.append(sid, [a, b, c, d])
      const e = user('e')
      const list = [a, edited(c, 'c, edited'), nudge(), e]

      // when
      const result = await store.sync(sid, list, { expectedVersion: 4 })

      // then
      expect(result).toEqual({ version: 7, appended: [e.id], retracted: [b.id, d.id], revised: [c.id], finalized: [] })
      expect(await loaded(store, sid)).toEqual(shape([a, edited(c, 'c, edited'), e]))
      const events = await eventsOf(store, sid)
      const retraction = events.find((ev) => ev.type === 'messages_retracted')
      expect(retraction?.data).toMatchObject({ ids: [b.id, d.id], sync: true })
      expect(events.map((ev) => ev.type)).toEqual([
        'message_appended',
        'message_appended',
        'message_appended',
        'message_appended',
        'messages_retracted',
        'message_revised',
        'message_appended',
      ])
    })

    it('a second sync of the same list writes nothing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const list = [user('q'), assistant('a')]
      const first = await store.sync(sid, list)

      // when
      const again = await store.sync(sid, list, { expectedVersion: first.version })
      const elsewhere = await (await ctx.reopen()).sync(sid, list)

      // then
      expect(first).toEqual({ version: 2, appended: list.map((m) => m.id), retracted: [], revised: [], finalized: [] })
      expect(again).toEqual({ version: 2, appended: [], retracted: [], revised: [], finalized: [] })
      expect(elsewhere).toEqual(again)
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('a stale expectedVersion is VERSION_CONFLICT and writes nothing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(sid, [a, b])

      // when
      const error = await expectTurnlogError(store.sync(sid, [a, user('new')], { expectedVersion: 1 }), 'VERSION_CONFLICT')

      // then
      expect(error.details['actualVersion']).toBe(2)
      expect(await loaded(store, sid)).toEqual(shape([a, b]))
    })

    it('refuses a reorder, or a kept message after a new one, with INVALID_INPUT and writes nothing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(sid, [a, b])

      // when
      const swapped = await expectTurnlogError(store.sync(sid, [b, a]), 'INVALID_INPUT')
      const interleaved = await expectTurnlogError(store.sync(sid, [a, user('new'), b]), 'INVALID_INPUT')

      // then
      expect(swapped.details['reason']).toBe('reorder')
      expect(interleaved.details['reason']).toBe('reorder')
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('refuses to bring back a retracted message, and the whole call rolls back', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      await store.sync(sid, [a, c])

      // when
      const error = await expectTurnlogError(store.sync(sid, [c, a]), 'INVALID_INPUT')
      const back = await expectTurnlogError(store.sync(sid, [a, c, user('d'), b]), 'INVALID_INPUT')

      // then
      expect(error.details['reason']).toBe('reorder')
      expect(back.details['reason']).toBe('not_live')
      expect(await loaded(store, sid)).toEqual(shape([a, c]))
      expect((await store.getSession(sid)).version).toBe(4)
    })

    it('any sequence of list edits followed by sync leaves load equal to the list (property)', async () => {
      const store = ctx.store()
      const edit = fc.oneof(
        fc.record({ kind: fc.constant('append' as const), text: fc.string({ maxLength: 8 }) }),
        fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
        fc.record({ kind: fc.constant('revise' as const), at: fc.nat(), text: fc.string({ maxLength: 8 }) }),
        fc.record({ kind: fc.constant('sync' as const) }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(edit, { maxLength: 12 }), async (edits) => {
          const sid = await store.createSession()
          let list: Message[] = []
          let version = 0
          const check = async (): Promise<void> => {
            const result = await store.sync(sid, list, { expectedVersion: version })
            version = result.version
            expect(await loaded(store, sid)).toEqual(shape(list))
            // idempotent: the same list again is a no-op
            expect(await store.sync(sid, list, { expectedVersion: version })).toEqual({
              version,
              appended: [],
              retracted: [],
              revised: [],
              finalized: [],
            })
            // stale: VERSION_CONFLICT, nothing written
            if (version > 0)
              await expectTurnlogError(store.sync(sid, [...list, user('stale')], { expectedVersion: version - 1 }), 'VERSION_CONFLICT')
            expect((await store.getSession(sid)).version).toBe(version)
          }
          for (const e of edits) {
            if (e.kind === 'append') list = [...list, user(`new ${e.text}`)]
            else if (e.kind === 'drop' && list.length > 0) list = list.filter((_, i) => i !== e.at % list.length)
            else if (e.kind === 'revise' && list.length > 0)
              list = list.map((m, i) => (i === e.at % list.length ? edited(m, `revised ${e.text} ${String(i)}`) : m))
            else if (e.kind === 'sync') await check()
          }
          await check()
        }),
        { numRuns: 25 },
      )
    }, 60_000)
  })
}
