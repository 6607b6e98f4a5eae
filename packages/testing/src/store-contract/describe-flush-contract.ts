import { describe, expect, it } from '@jest/globals'
import { createMessage, newMessageId, parseMessage, serializeMessage, toMessage, type Message } from '@turnlog/core'
import { assistant, eventsOf, expectTurnlogError, nudge, system, toolCall, toolResult, user } from './contract-helpers.js'
import type { ContractContext } from './contract-helpers.js'

/**
 * The `flush` contract: the agent loop's call on every exit path. Skips scaffolding, appends exactly
 * what the log lacks, in list order, and treats loaded messages (and copies of them) as durable.
 */
export function describeFlushContract(ctx: ContractContext): void {
  describe('flush', () => {
    it('skips ephemeral messages and appends the rest in list order (not id order)', async () => {
      // given: ids minted in a different order from the list order
      const store = ctx.store()
      const sid = await store.createSession()
      const later = assistant('minted first, listed second')
      const earlier = user('minted second, listed first')
      const live = [system('you are terse'), earlier, nudge(), later, nudge('(empty)')]

      // when
      const result = await store.flush(sid, live)

      // then
      const expected = [live[0]?.id, earlier.id, later.id]
      expect(result).toEqual({ version: 3, appended: expected, duplicates: [] })
      expect((await eventsOf(store, sid)).map((e) => e.messageId)).toEqual(expected)
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(expected)
    })

    it('calling it again writes nothing and reports every non-ephemeral message as a duplicate', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const live = [user('q'), nudge(), assistant('a')]
      await store.flush(sid, live)

      // when
      const again = await store.flush(sid, live)
      const elsewhere = await (await ctx.reopen()).flush(sid, live)

      // then
      expect(again).toEqual({ version: 2, appended: [], duplicates: [live[0]?.id, live[2]?.id] })
      expect(elsewhere).toEqual({ version: 2, appended: [], duplicates: [live[0]?.id, live[2]?.id] })
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('appends only what is new as the live list grows across a turn', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const live = [user('read README')]
      await store.flush(sid, live)

      // when: before tool execution, after the tool result, at the end of the turn
      live.push(toolCall(['call_1']))
      const beforeTool = await store.flush(sid, live)
      live.push(toolResult('call_1', '# acme'))
      const afterTool = await store.flush(sid, live)
      live.push(assistant('It is the acme readme.'))
      const end = await store.flush(sid, live)

      // then
      expect([beforeTool.appended, afterTool.appended, end.appended]).toEqual([[live[1]?.id], [live[2]?.id], [live[3]?.id]])
      expect(end.version).toBe(4)
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(live.map((m) => m.id))
    })

    it('messages returned by load, and copies of them (same id, same content, new object), count as durable', async () => {
      // given: a session written by one process
      const writer = ctx.store()
      const sid = await writer.createSession()
      await writer.flush(sid, [system('s'), user('u'), assistant('a')])

      // when: a restarted process resumes: loads, copies, continues and flushes
      const resumed = await ctx.reopen()
      const loaded = (await resumed.load(sid)).messages
      const copies = loaded.map((m) => toMessage(JSON.parse(serializeMessage(m))))
      const spreadCopies = loaded.map((m) => toMessage({ ...m }))
      const next = user('continue')
      const viaLoaded = await resumed.flush(sid, [...loaded, next])
      const viaCopies = await resumed.flush(sid, [...copies, next])
      const viaFresh = await (await ctx.reopen()).flush(sid, [...spreadCopies, next])

      // then
      expect(copies.every((c, i) => c !== loaded[i] && c.id === loaded[i]?.id)).toBe(true)
      expect(viaLoaded).toEqual({ version: 4, appended: [next.id], duplicates: loaded.map((m) => m.id) })
      expect(viaCopies).toEqual({ version: 4, appended: [], duplicates: [...loaded.map((m) => m.id), next.id] })
      expect(viaFresh).toEqual({ version: 4, appended: [], duplicates: [...loaded.map((m) => m.id), next.id] })
      expect(await eventsOf(writer, sid)).toHaveLength(4)
    })

    it('a message parsed back with parseMessage is the same message', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = createMessage({ role: 'user', content: 'nul \u0000 and lone \ud800 and 😀' })
      await store.flush(sid, [m])

      // when
      const result = await (await ctx.reopen()).flush(sid, [parseMessage(serializeMessage(m))])

      // then
      expect(result).toEqual({ version: 1, appended: [], duplicates: [m.id] })
    })

    it('a changed message under a flushed id is MESSAGE_CONFLICT, never silently skipped', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = assistant('v1')
      await store.flush(sid, [m])
      const edited = toMessage({ ...m, payload: { role: 'assistant', content: 'v2' } })

      // when
      const error = await expectTurnlogError(store.flush(sid, [edited]), 'MESSAGE_CONFLICT')

      // then
      expect(error.details['messageId']).toBe(m.id)
      expect((await store.conflicts(sid)).map((c) => c.messageId)).toEqual([m.id])
    })

    it('an id listed twice with the same content is one message (issue 13.2); an all-ephemeral list writes nothing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = user('x')

      // when
      const twice = await store.flush(sid, [m, toMessage({ ...m })])
      const scaffoldingOnly = await store.flush(await store.createSession(), [nudge(), nudge('(empty)')])

      // then
      expect(twice).toEqual({ version: 1, appended: [m.id], duplicates: [m.id] })
      expect(scaffoldingOnly).toEqual({ version: 0, appended: [], duplicates: [] })
      expect(await eventsOf(store, sid)).toHaveLength(1)
    })

    it('expectedVersion guards a flush that has something to write', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const live = [user('a')]
      await store.flush(sid, live)
      await (await ctx.reopen()).append(sid, [assistant('written by another process')])

      // when
      live.push(assistant('mine'))
      const error = await expectTurnlogError(store.flush(sid, live, { expectedVersion: 1 }), 'VERSION_CONFLICT')

      // then
      expect(error.details['actualVersion']).toBe(2)
      expect(await eventsOf(store, sid)).toHaveLength(2)
      expect((await store.flush(sid, live, { expectedVersion: 2 })).appended).toEqual([live[1]?.id])
    })

    it("a flush that writes nothing reports the current version after this store's own rewind, revise, finalize and compact", async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      const streaming = createMessage({ role: 'assistant', content: 'str' }, { status: 'partial' })
      await store.flush(sid, [a, b, c, streaming])
      const versions: [string, number, number][] = []
      const check = async (step: string, live: readonly Message[]): Promise<void> => {
        const { version } = await store.flush(sid, live)
        versions.push([step, version, (await store.getSession(sid)).version])
      }

      // when: each write is followed by a flush of the (unchanged or shrunk) live list
      await store.revise(sid, b.id, { role: 'assistant', content: 'b2' })
      await check('revise', [a, b, c, streaming])
      await store.finalize(sid, streaming.id)
      await check('finalize', [a, b, c, streaming])
      await store.rewind(sid, { from: streaming.id })
      await check('rewind', [a, b, c])
      const summary = user('summary')
      await store.compact(sid, { covered: [a.id], summary })
      await check('compact', [summary, b, c])

      // then: the reported version is the session's, usable as the next expectedVersion
      expect(versions).toEqual([
        ['revise', 5, 5],
        ['finalize', 6, 6],
        ['rewind', 7, 7],
        ['compact', 9, 9],
      ])
      await store.append(sid, [user('next')], { expectedVersion: versions[3]?.[1] ?? -1 })
    })

    it('a flush that writes nothing, after another process wrote: the version this store last saw, or with expectedVersion the current one', async () => {
      // given: this process flushed (and saw version 2); another one then revised and appended
      const store = ctx.store()
      const sid = await store.createSession()
      const live = [user('q'), assistant('a')]
      await store.flush(sid, live)
      const other = await ctx.reopen()
      await other.revise(sid, live[1]?.id ?? '', { role: 'assistant', content: 'a2' })
      await other.append(sid, [user('from elsewhere')])

      // when: this process flushes its (unchanged) list again, without and with expectedVersion
      const plain = await store.flush(sid, live)
      const checked = await store.flush(sid, live, { expectedVersion: 2 })

      // then: documented (docs/guarantees.md): a flush of messages this store knows durable may skip the
      // database and report the last version it saw; passing expectedVersion makes it ask (no conflict:
      // nothing is written, as for a retried append)
      expect(plain.appended).toEqual([])
      expect(plain.duplicates).toEqual(live.map((m) => m.id))
      expect([2, 4]).toContain(plain.version)
      expect(checked).toEqual({ version: 4, appended: [], duplicates: live.map((m) => m.id) })
    })

    it('a message with a fresh id but content equal to a stored one is a new message', async () => {
      // given: the user says "ok" twice
      const store = ctx.store()
      const sid = await store.createSession()
      const first = user('ok')
      await store.flush(sid, [first])

      // when
      const second = createMessage({ role: 'user', content: 'ok' }, { id: newMessageId() })
      const result = await store.flush(sid, [first, second])

      // then
      expect(result.appended).toEqual([second.id])
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([first.id, second.id])
    })
  })
}
