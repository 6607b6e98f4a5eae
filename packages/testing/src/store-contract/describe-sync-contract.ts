import { describe, expect, it } from '@jest/globals'
import { createMessage, foldSession, type Message, type SessionStore } from '@turnlog/core'
import fc from 'fast-check'
import { assistant, eventsOf, expectTurnlogError, nudge, system, user, type ContractContext } from './contract-helpers.js'

/** The message with `id` and `createdAt` of `m` and new text content (a revision of it). */
function edited(m: Message, content: string): Message {
  return createMessage({ role: 'user', content }, { id: m.id, createdAt: m.createdAt })
}

/** A compaction summary (a system message). */
function summaryOf(text: string): Message {
  return system(`summary: ${text}`)
}

/**
 * The live list three ways, as (id, payload) pairs: the inline projection (`load`), the pure fold of the
 * log (`foldSession` of `events`), and after `rebuild({ verify: true })` found no drift.
 */
async function threeWays(store: SessionStore, sid: string): Promise<{ id: string; payload: unknown }[]> {
  const inline = await loaded(store, sid)
  const fold = foldSession(await eventsOf(store, sid))
  const folded = fold.live.map((id) => ({ id: id as string, payload: fold.messages.get(id)?.message.payload }))
  expect(fold.anomalies).toEqual([])
  expect(folded).toEqual(inline)
  expect((await store.rebuild({ sessionId: sid, verify: true })).drift).toEqual([])
  return inline
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
      expect(result).toEqual({ version: 7, appended: [e.id], retracted: [b.id, d.id], revised: [c.id], finalized: [], compacted: [] })
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
      expect(first).toEqual({ version: 2, appended: list.map((m) => m.id), retracted: [], revised: [], finalized: [], compacted: [] })
      expect(again).toEqual({ version: 2, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
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

    it('records a summary named in compaction.summaryIds as the compaction compact writes, in the place of what it replaced', async () => {
      // given: a, b, c, d, e live; the runtime replaced b and c by a summary, dropped e and appended f
      const store = ctx.store()
      const [sid, other] = [await store.createSession(), await store.createSession()]
      const [a, b, c, d, e] = [user('a'), assistant('b'), user('c'), assistant('d'), user('e')]
      await store.append(sid, [a, b, c, d, e])
      const [summary, f] = [summaryOf('b and c'), user('f')]

      // when
      const result = await store.sync(sid, [a, summary, d, f], {
        expectedVersion: 5,
        compaction: { summaryIds: [summary.id], reason: 'context' },
      })
      const replay = await store.sync(sid, [a, summary, d, f], {
        expectedVersion: result.version,
        compaction: { summaryIds: [summary.id] },
      })

      // then: one compaction event like compact's, the summary in b's place, e a sync retraction, f appended
      expect(result).toEqual({
        version: 9,
        appended: [f.id],
        retracted: [e.id],
        revised: [],
        finalized: [],
        compacted: [{ summary: [summary.id], covered: [b.id, c.id] }],
      })
      expect(replay).toEqual({ version: 9, appended: [], retracted: [], revised: [], finalized: [], compacted: [] })
      expect(await threeWays(store, sid)).toEqual(shape([a, summary, d, f]))
      const events = await eventsOf(store, sid)
      expect(events.slice(5).map((ev) => [ev.type, ev.messageId])).toEqual([
        ['messages_retracted', null],
        ['message_appended', summary.id],
        ['messages_compacted', null],
        ['message_appended', f.id],
      ])
      const transcript = await store.transcript(sid)
      const status = new Map(transcript.entries.map((t) => [t.message.id as string, t.status]))
      expect([b, c, e].map((m) => status.get(m.id))).toEqual(['compacted', 'compacted', 'retracted'])
      // the same history written by compact: the same event data, but for sync's mark
      const [oa, ob, oc, od] = [user('a'), assistant('b'), user('c'), assistant('d')]
      await store.append(other, [oa, ob, oc, od])
      const otherSummary = summaryOf('b and c')
      await store.compact(other, { covered: [ob.id, oc.id], summary: otherSummary, reason: 'context' })
      const [byCompact, bySync] = [(await eventsOf(store, other)).slice(4), events.slice(6, 8)]
      expect(bySync.map((ev) => ev.type)).toEqual(byCompact.map((ev) => ev.type))
      expect(bySync[0]?.data).toEqual({ ...(byCompact[0]?.data as object), createdAt: summary.createdAt })
      const ids = new Map<string, string>([
        [ob.id, b.id],
        [oc.id, c.id],
        [otherSummary.id, summary.id],
      ])
      const compactData = byCompact[1]?.data as { covered: { id: string; contentHash: string }[]; summary: string[]; reason: string }
      expect(bySync[1]?.data).toEqual({
        covered: compactData.covered.map((x) => ({ ...x, id: ids.get(x.id) })),
        summary: compactData.summary.map((x) => ids.get(x)),
        reason: 'context',
        sync: true,
      })
    })

    it('places several runs of summaries, at the start and at the end of the list', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      await store.append(sid, [a, b, c, d])
      const [s1, s2, s3] = [summaryOf('a and b'), summaryOf('also a and b'), summaryOf('d')]

      // when
      const result = await store.sync(sid, [s1, s2, c, s3], { compaction: { summaryIds: [s3.id, s1.id, s2.id] } })

      // then
      expect(result.compacted).toEqual([
        { summary: [s1.id, s2.id], covered: [a.id, b.id] },
        { summary: [s3.id], covered: [d.id] },
      ])
      expect([result.appended, result.retracted]).toEqual([[], []])
      expect(await threeWays(store, sid)).toEqual(shape([s1, s2, c, s3]))
    })

    it('infers nothing from content or meta: a summary not named is appended at the end, the replaced messages retracted', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const summary = system('[CONTEXT COMPACTION] a and b', { meta: { summary: true, compaction: true } })

      // when
      const inPlace = await expectTurnlogError(store.sync(sid, [summary, c]), 'INVALID_INPUT')
      const result = await store.sync(sid, [c, summary])

      // then: in a's place it is a reorder; at the end, an append and a sync retraction
      expect(inPlace.details['reason']).toBe('reorder')
      expect(result).toEqual({ version: 5, appended: [summary.id], retracted: [a.id, b.id], revised: [], finalized: [], compacted: [] })
      expect((await eventsOf(store, sid)).some((ev) => ev.type === 'messages_compacted')).toBe(false)
    })

    it('refuses a summary that replaces nothing, one the list does not hold, one after a new message, or a compacted message back, and writes nothing', async () => {
      // given
      const store = ctx.store()
      const [sid, other] = [await store.createSession(), await store.createSession()]
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const [summary, fresh] = [summaryOf('b'), user('fresh')]
      const elsewhere = summaryOf('stored in another session')
      await store.append(other, [elsewhere])

      // when
      const nothing = await expectTurnlogError(
        store.sync(sid, [a, summary, b, c], { compaction: { summaryIds: [summary.id] } }),
        'INVALID_INPUT',
      )
      const atEnd = await expectTurnlogError(
        store.sync(sid, [a, b, c, summary], { compaction: { summaryIds: [summary.id] } }),
        'INVALID_INPUT',
      )
      const unlisted = await expectTurnlogError(store.sync(sid, [a, c], { compaction: { summaryIds: [summary.id] } }), 'INVALID_INPUT')
      const afterNew = await expectTurnlogError(
        store.sync(sid, [a, fresh, summary], { compaction: { summaryIds: [summary.id] } }),
        'INVALID_INPUT',
      )
      const foreign = await expectTurnlogError(
        store.sync(sid, [a, elsewhere, c], { compaction: { summaryIds: [elsewhere.id] } }),
        'MESSAGE_CONFLICT',
      )
      const malformed = await expectTurnlogError(store.sync(sid, [a, c], { compaction: { summaryIds: 'x' as never } }), 'INVALID_INPUT')
      await store.sync(sid, [a, summary, c], { compaction: { summaryIds: [summary.id] } })
      const again = summaryOf('b again')
      const back = await expectTurnlogError(store.sync(sid, [a, again, c, b], { compaction: { summaryIds: [again.id] } }), 'INVALID_INPUT')

      // then
      expect([nothing, atEnd, unlisted, afterNew].map((e) => e.details['reason'])).toEqual([
        'summary_covers_nothing',
        'summary_covers_nothing',
        'summary_not_listed',
        'reorder',
      ])
      expect(foreign.details).toMatchObject({ reason: 'foreign_session', messageId: elsewhere.id, otherSessionId: other })
      expect(malformed.details['field']).toBe('compaction.summaryIds')
      expect(back.details['reason']).toBe('not_live')
      expect(await threeWays(store, sid)).toEqual(shape([a, summary, c]))
      expect((await store.getSession(sid)).version).toBe(5)
    })

    it('any sequence of list edits followed by sync leaves load equal to the list, and inline = rebuild = fold (property)', async () => {
      const store = ctx.store()
      const edit = fc.oneof(
        fc.record({ kind: fc.constant('append' as const), text: fc.string({ maxLength: 8 }) }),
        fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
        fc.record({ kind: fc.constant('revise' as const), at: fc.nat(), text: fc.string({ maxLength: 8 }) }),
        fc.record({ kind: fc.constant('compact' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 3 }) }),
        fc.record({ kind: fc.constant('sync' as const) }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(edit, { maxLength: 12 }), async (edits) => {
          const sid = await store.createSession()
          let list: Message[] = []
          let version = 0
          // ids live after the last sync, and every summary the edits made
          let synced = new Set<string>()
          const summaries = new Set<string>()
          const check = async (): Promise<void> => {
            const summaryIds = list.filter((m) => summaries.has(m.id)).map((m) => m.id)
            const result = await store.sync(sid, list, { expectedVersion: version, compaction: { summaryIds } })
            version = result.version
            expect(await threeWays(store, sid)).toEqual(shape(list))
            // what it did: new summaries placed, every other new message appended, the rest covered or retracted
            const fresh = list.filter((m) => !synced.has(m.id))
            expect(result.compacted.flatMap((c) => c.summary)).toEqual(fresh.filter((m) => summaries.has(m.id)).map((m) => m.id))
            expect(result.appended).toEqual(fresh.filter((m) => !summaries.has(m.id)).map((m) => m.id))
            const gone = [...synced].filter((id) => !list.some((m) => m.id === id))
            expect([...result.retracted, ...result.compacted.flatMap((c) => c.covered)].sort()).toEqual(gone.sort())
            synced = new Set(list.map((m) => m.id))
            // idempotent: the same list again is a no-op
            expect(await store.sync(sid, list, { expectedVersion: version, compaction: { summaryIds } })).toEqual({
              version,
              appended: [],
              retracted: [],
              revised: [],
              finalized: [],
              compacted: [],
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
            else if (e.kind === 'compact' && list.length > 0) {
              // a summary replaces a run of live messages (a runtime compacts what it has written)
              const from = e.at % list.length
              const run = list.slice(from, from + e.length)
              if (run.every((m) => synced.has(m.id))) {
                const summary = summaryOf(run.map((m) => m.id).join(' '))
                summaries.add(summary.id)
                list = [...list.slice(0, from), summary, ...list.slice(from + run.length)]
              }
            } else if (e.kind === 'sync') await check()
          }
          await check()
        }),
        { numRuns: 25 },
      )
    }, 120_000)
  })
}
