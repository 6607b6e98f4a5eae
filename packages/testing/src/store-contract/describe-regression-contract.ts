import { describe, expect, it } from '@jest/globals'
import { createMessage, parseMessage, serializeMessage, toMessage, toWire, type Message } from '@turnlog/core'
import { assistant, eventsOf, expectTurnlogError, liveIds, nudge, system, toolCall, toolResult, user } from './contract-helpers.js'
import type { ContractContext } from './contract-helpers.js'

/**
 * One regression test per incident class of the domain brief (§1), each reproducing the incident's
 * sequence of runtime actions against the store API and asserting that no turn is lost or duplicated.
 */
export function describeRegressionContract(ctx: ContractContext): void {
  describe('regressions (domain brief §1)', () => {
    it('no dedupe key, several writers (3–4 copies of every message): two processes flushing the same list store each message once', async () => {
      // given
      const a = ctx.store()
      const b = await ctx.reopen()
      const sid = await a.createSession()
      const live = [system('s'), user('u'), assistant('r')]

      // when
      const results = await Promise.all([a.flush(sid, live), b.flush(sid, live), a.flush(sid, live), b.flush(sid, live)])

      // then
      expect(results.flatMap((r) => r.appended).sort()).toEqual(live.map((m) => m.id).sort())
      expect((await eventsOf(a, sid)).map((e) => e.messageId)).toEqual(live.map((m) => m.id))
    })

    it('position cursor after the list shrank (#46053, #31507): a reply after a failed attempt and its scaffolding were dropped is still written', async () => {
      // given: a cursor would say "4 flushed" (or "3 durable")
      const store = ctx.store()
      const sid = await store.createSession()
      const firstTry = assistant('first try, failed')
      const live: Message[] = [system('s'), user('q'), nudge('please continue'), firstTry]
      await store.flush(sid, live)

      // when: the runtime drops the failed attempt and the scaffolding (the list shrinks to 2) and the model replies
      await store.rewind(sid, { from: firstTry.id })
      live.splice(2, 2)
      const reply = assistant('the reply the user saw')
      live.push(reply)
      const result = await store.flush(sid, live)

      // then: messages[lastFlushed:] would be empty; the store writes the reply
      expect(result.appended).toEqual([reply.id])
      expect(await liveIds(store, sid)).toEqual(live.map((m) => m.id))
    })

    it('position cursor after compaction shrank the list: the next reply is written once', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const old = [user('1'), assistant('2'), user('3'), assistant('4'), user('5')]
      await store.flush(sid, old)
      const summary = user('[CONTEXT COMPACTION] 1-4')
      await store.compact(sid, { covered: old.slice(0, 4).map((m) => m.id), summary })

      // when
      const live = [summary, old[4] as Message, assistant('after compaction')]
      const result = await store.flush(sid, live)

      // then
      expect(result.appended).toEqual([live[2]?.id])
      expect(await liveIds(store, sid)).toEqual(live.map((m) => m.id))
    })

    it('freed-object identity reuse (#50372): a new message is new even when an old one was dropped and looks the same', async () => {
      // given: a flushed message is dropped from the list (its object may be collected)
      const store = ctx.store()
      const sid = await store.createSession()
      let live: Message[] = [user('ok'), assistant('noted')]
      await store.flush(sid, live)
      live = [live[1] as Message]

      // when: a new message with identical content takes its place
      const again = user('ok')
      live.push(again)
      const result = await store.flush(sid, live)

      // then: identity is the id, never an object address or content
      expect(result.appended).toEqual([again.id])
      expect((await store.load(sid)).messages.map((m) => m.payload.content)).toEqual(['ok', 'noted', 'ok'])
    })

    it('marker flag copied by a shallow copy (#57491): a spread copy made into a new message is refused loudly, never skipped', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const flushed = assistant('tool plan')
      await store.flush(sid, [user('q'), flushed])

      // when: the runtime builds "a new message" by shallow-copying a flushed one (the id comes along)
      const copied = toMessage({ ...flushed, flushed: true, payload: { role: 'assistant', content: 'a different reply' } })
      const error = await expectTurnlogError(store.flush(sid, [copied]), 'MESSAGE_CONFLICT')
      // and done right, the new message gets its own id
      const proper = createMessage({ role: 'assistant', content: 'a different reply' })
      const result = await store.flush(sid, [proper])

      // then
      expect(error.details['messageId']).toBe(flushed.id)
      expect(await store.conflicts(sid)).toHaveLength(1)
      expect(result.appended).toEqual([proper.id])
      expect('flushed' in copied).toBe(false)
    })

    it('flag missing on reloaded messages (#92231, #98450: 97 % duplicates): a resumed process re-flushing the transcript writes nothing again', async () => {
      // given: a long session written by one process
      const store = ctx.store()
      const sid = await store.createSession()
      const history = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? user(`u${i}`) : assistant(`a${i}`)))
      await store.flush(sid, history)

      // when: a new process reloads (and JSON round-trips) the list, compacts, and flushes everything it holds
      const resumed = await ctx.reopen()
      const reloaded = (await resumed.load(sid)).messages.map((m) => parseMessage(serializeMessage(m)))
      const summary = user('[CONTEXT COMPACTION] first 50')
      await resumed.compact(sid, { covered: reloaded.slice(0, 50).map((m) => m.id), summary })
      const tail = [summary, ...reloaded.slice(50), assistant('new reply')]
      const flushCompacted = await resumed.flush(sid, tail)
      const flushAll = await (await ctx.reopen()).flush(sid, [...reloaded, assistant('another')])

      // then: only the genuinely new messages were written
      expect(flushCompacted.appended).toEqual([tail[tail.length - 1]?.id])
      expect(flushAll.appended).toHaveLength(1)
      const appended = (await eventsOf(store, sid)).filter((e) => e.type === 'message_appended')
      expect(appended).toHaveLength(60 + 1 + 1 + 1)
      expect(new Set(appended.map((e) => e.messageId)).size).toBe(appended.length)
    })

    it('in-place edit leaves stale bytes (#92881): a message cannot be edited in place; revise() stores the new bytes', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const result = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'output' })
      await store.flush(sid, [toolCall(['call_1']), result])

      // when
      const edit = (): void => {
        ;(result.payload as { content: string }).content = 'output + note'
      }
      await store.revise(sid, result.id, { ...result.payload, content: 'output + note' })
      const reloaded = (await (await ctx.reopen()).load(sid)).messages[1]

      // then
      expect(edit).toThrow(TypeError)
      expect(result.payload.content).toBe('output')
      expect(reloaded?.payload.content).toBe('output + note')
      expect(reloaded?.id).toBe(result.id)
    })

    it('metadata leaking to the provider (#104359): the wire view of loaded messages carries no turnlog field', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const inbound = createMessage({ role: 'user', content: 'hi' }, { externalId: '1700000000.000100', scope: 'slack:C1' })
      const streaming = createMessage({ role: 'assistant', content: 'typing', reasoning_content: 'r' }, { status: 'partial' })
      await store.flush(sid, [system('s'), inbound, streaming, nudge()])

      // when
      const { messages } = await store.load(sid)
      const wire = toWire([...messages, nudge('(empty)')])

      // then
      const envelopeKeys = ['id', 'createdAt', 'status', 'ephemeral', 'externalId', 'payload']
      for (const m of wire) for (const k of envelopeKeys) expect(Object.keys(m)).not.toContain(k)
      expect(wire).toEqual([
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'typing', reasoning_content: 'r' },
        { role: 'user', content: '(empty)' },
      ])
    })

    it('late flush (crash before the end-of-turn flush): the reply flushed before tool execution survives the crash', async () => {
      // given: the agent flushes before running the tool, then crashes mid-tool
      const store = ctx.store()
      const sid = await store.createSession()
      const q = user('summarise README')
      const call = toolCall(['call_7'])
      await store.flush(sid, [q, call])
      const reply = createMessage({ role: 'assistant', content: 'Reading it now' }, { status: 'partial' })
      await store.append(sid, [reply])

      // when: a restarted process resumes
      const resumed = await (await ctx.reopen()).load(sid)

      // then: nothing the user saw is gone; the unfinished parts are visible as such
      expect(resumed.messages.map((m) => m.id)).toEqual([q.id, call.id, reply.id])
      expect(resumed.messages[2]?.status).toBe('partial')
      expect(resumed.pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_7' }])
    })

    it('partial batch + retry (row-by-row writes failed half-way, the retry duplicated the written half): a retried batch is written exactly once', async () => {
      // given: the batch fails on its 4th message
      const store = ctx.store()
      const sid = await store.createSession()
      const stored = user('stored earlier')
      await store.append(sid, [stored])
      const batch = [
        assistant('1'),
        user('2'),
        assistant('3'),
        createMessage({ role: 'user', content: 'clash' }, { id: stored.id }),
        user('5'),
      ]
      await expectTurnlogError(store.append(sid, batch), 'MESSAGE_CONFLICT')
      const afterFailure = await eventsOf(store, sid)

      // when: the caller fixes the bad message and retries, twice
      const fixed = [...batch.slice(0, 3), user('4, fixed'), batch[4] as Message]
      const retry = await store.append(sid, fixed)
      const retryAgain = await store.append(sid, fixed)

      // then
      expect(afterFailure).toHaveLength(1)
      expect(retry.appended).toEqual(fixed.map((m) => m.id))
      expect(retryAgain).toEqual({ version: 6, appended: [], duplicates: fixed.map((m) => m.id) })
      expect(await eventsOf(store, sid)).toHaveLength(6)
    })

    it('redelivery (the platform re-sends after a 429): the same externalId is stored once', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const deliveries = [1, 2, 3].map(() =>
        createMessage({ role: 'user', content: 'hello bot' }, { externalId: '9001', scope: 'telegram:42' }),
      )

      // when
      const results = []
      for (const m of deliveries) results.push(await store.flush(sid, [m]))
      const elsewhere = await (await ctx.reopen()).append(sid, [deliveries[0] as Message])

      // then
      expect(new Set(deliveries.map((m) => m.id)).size).toBe(1)
      expect(results.map((r) => r.appended.length)).toEqual([1, 0, 0])
      expect(elsewhere.duplicates).toEqual([deliveries[0]?.id])
      expect((await eventsOf(store, sid)).filter((e) => e.type === 'message_appended')).toHaveLength(1)
    })

    it('wall-clock regression (NTP step back put a tool result before its call): order is the log sequence, createdAt is data', async () => {
      // given: the clock jumps back between the call and its result
      const store = ctx.store()
      const sid = await store.createSession()
      const call = toolCall(['call_1'], 'id', { createdAt: '2030-01-01T00:00:10.000Z' })
      const result = toolResult('call_1', 'r', 'tool_call_id', { createdAt: '2030-01-01T00:00:05.000Z' })
      const reply = assistant('done', { createdAt: '1970-01-01T00:00:00.000Z' })

      // when
      await store.flush(sid, [user('q', { createdAt: '2030-01-01T00:00:00.000Z' }), call])
      await store.flush(sid, [call, result, reply])
      const loaded = await store.load(sid)

      // then
      expect(loaded.messages.map((m) => m.id).slice(1)).toEqual([call.id, result.id, reply.id])
      expect(loaded.messages.map((m) => m.createdAt)).toEqual([
        '2030-01-01T00:00:00.000Z',
        '2030-01-01T00:00:10.000Z',
        '2030-01-01T00:00:05.000Z',
        '1970-01-01T00:00:00.000Z',
      ])
      expect(loaded.pairing.ok).toBe(true)
    })

    it('unpaired tool calls (interrupt/crash): the projection reports it, the wire view repairs a copy, a rewind fixes the log', async () => {
      // given: an interrupted tool call followed by a new user turn
      const store = ctx.store()
      const sid = await store.createSession()
      const q = user('q')
      const call = toolCall(['call_1'])
      await store.flush(sid, [q, call, user('are you there?')])

      // when
      const { messages, pairing } = await store.load(sid)
      const wire = toWire(messages, { repairPairing: true })
      const versionBefore = (await store.getSession(sid)).version
      await store.rewind(sid, { from: call.id }, { reason: 'drop the unanswered call' })
      const after = await store.load(sid)

      // then
      expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_1' }])
      expect(wire[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: expect.any(String) })
      expect(versionBefore).toBe(3)
      expect(after.pairing.ok).toBe(true)
      expect(after.messages.map((m) => m.id)).toEqual([q.id])
      expect((await store.transcript(sid)).entries.map((e) => e.status)).toEqual(['live', 'retracted', 'retracted'])
    })

    it('a call id reused per turn (call_0 every turn): each call pairs with its own result; the wire view renames the later call, the log keeps it', async () => {
      // given: a provider that numbers its tool calls per turn, two turns, the second call left open
      const store = ctx.store()
      const sid = await store.createSession()
      const first = toolCall(['call_0'])
      const again = toolCall(['call_0'])
      const third = toolCall(['call_0'])
      await store.flush(sid, [
        user('a'),
        first,
        toolResult('call_0', 'one'),
        assistant('ok'),
        user('b'),
        again,
        toolResult('call_0', 'two'),
      ])

      // when: loaded as appended (the appends-only path), then after a rewind (the folded path) and a third open call
      const appended = await store.load(sid)
      await store.rewind(sid, { from: appended.messages[6]?.id as string }, { reason: 'drop the second result' })
      await store.append(sid, [toolResult('call_0', 'two again'), user('c'), third])
      const folded = await store.load(sid)
      const wire = toWire(folded.messages, { repairPairing: true, interruptedContent: 'INTERRUPTED' })
      const { pairing: transcriptPairing } = await store.transcript(sid)

      // then: one reuse, nothing unanswered or doubled but the last call, on both paths and in the transcript's live view
      expect(appended.pairing).toEqual({
        ok: false,
        unanswered: [],
        orphans: [],
        duplicates: [],
        duplicateCalls: [],
        reusedCalls: [{ toolCallId: 'call_0', messageIds: [first.id, again.id] }],
      })
      expect(folded.pairing.reusedCalls).toEqual([{ toolCallId: 'call_0', messageIds: [first.id, again.id, third.id] }])
      expect(folded.pairing.unanswered).toEqual([{ messageId: third.id, toolCallId: 'call_0' }])
      expect(folded.pairing.duplicates).toEqual([])
      expect(transcriptPairing).toEqual(folded.pairing)
      // then: the wire copy sends every call once, each result with its own call, the open one answered
      const calls = wire.flatMap((w) => (w.role === 'assistant' ? (w.tool_calls ?? []).map((c) => c.id) : []))
      const results = wire.flatMap((w) => (w.role === 'tool' ? [[w.tool_call_id, w.content]] : []))
      expect(calls).toEqual(['call_0', 'call_0_2', 'call_0_3'])
      expect(results).toEqual([
        ['call_0', 'one'],
        ['call_0_2', 'two again'],
        ['call_0_3', 'INTERRUPTED'],
      ])
      // then: the log is untouched
      expect(folded.messages.filter((m) => m.payload.role === 'assistant').map((m) => m.payload.tool_calls?.[0]?.id)).toEqual([
        'call_0',
        undefined,
        'call_0',
        'call_0',
      ])
    })

    it('compaction race: appends during a slow summary stay live, and a failed compaction leaves no half state', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const early = [user('1'), assistant('2'), user('3')]
      await store.flush(sid, early)
      const picked = (await store.load(sid)).messages.map((m) => m.id)
      const during = assistant('arrived while summarising')
      await (await ctx.reopen()).flush(sid, [...early, during])
      await store.rewind(sid, { from: during.id })
      const lateReply = assistant('a later reply')
      await store.append(sid, [lateReply])
      const versionBefore = (await store.getSession(sid)).version

      // when: a compaction whose cover went stale fails whole; a correct one succeeds
      const summary = user('[CONTEXT COMPACTION] 1-3')
      await expectTurnlogError(store.compact(sid, { covered: [...picked, during.id], summary }), 'UNKNOWN_MESSAGE')
      const failedState = { version: (await store.getSession(sid)).version, live: await liveIds(store, sid) }
      await store.compact(sid, { covered: picked, summary })

      // then
      expect(failedState).toEqual({ version: versionBefore, live: [...picked, lateReply.id] })
      expect(await liveIds(store, sid)).toEqual([summary.id, lateReply.id])
    })
  })
}
