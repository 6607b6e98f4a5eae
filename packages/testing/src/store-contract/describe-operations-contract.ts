import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, newMessageId, newSessionId, type MessageId } from '@turnlog/core'
import { assistant, eventsOf, expectTurnlogError, liveIds, toolCall, toolResult, user, type ContractContext } from './contract-helpers.js'

/**
 * The step-3 operations: rewind, compact, revise, streaming (partial → final), fork and time travel.
 * Each is an appended event naming the ids it affects; nothing is deleted.
 */
export function describeOperationsContract(ctx: ContractContext): void {
  describe('rewind', () => {
    it('{ after } retracts what follows the target, { from } retracts the target too; both are events', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d, e] = [user('a'), assistant('b'), user('c'), assistant('d'), user('e')]
      await store.append(sid, [a, b, c, d, e])

      // when
      const afterB = await store.rewind(sid, { after: b.id }, { reason: '/undo' })
      const liveAfterFirst = await liveIds(store, sid)
      const fromB = await store.rewind(sid, { from: b.id })

      // then
      expect(afterB).toEqual({ version: 6, retracted: [c.id, d.id, e.id] })
      expect(liveAfterFirst).toEqual([a.id, b.id])
      expect(fromB).toEqual({ version: 7, retracted: [b.id] })
      expect(await liveIds(store, sid)).toEqual([a.id])
      const events = await eventsOf(store, sid)
      expect(events[5]).toMatchObject({
        type: 'messages_retracted',
        data: { ids: [c.id, d.id, e.id], target: { after: b.id }, reason: '/undo' },
      })
      expect(events[6]).toMatchObject({ type: 'messages_retracted', data: { ids: [b.id], target: { from: b.id } } })
      // nothing was deleted: the retracted messages are still in the log
      expect(events.filter((x) => x.type === 'message_appended')).toHaveLength(5)
    })

    it('an unknown or non-live target is UNKNOWN_MESSAGE and writes nothing', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(sid, [a, b])
      await store.rewind(sid, { from: b.id })

      // when
      const unknown = await expectTurnlogError(store.rewind(sid, { after: newMessageId() }), 'UNKNOWN_MESSAGE')
      const retracted = await expectTurnlogError(store.rewind(sid, { from: b.id }), 'UNKNOWN_MESSAGE')

      // then
      expect(unknown.details['messageId']).toEqual(expect.any(String))
      expect(retracted.details['messageId']).toBe(b.id)
      expect((await store.getSession(sid)).version).toBe(3)
    })

    it('rewinding after the last live message retracts nothing and writes no event', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const last = assistant('last')
      await store.append(sid, [user('q'), last])

      // when
      const result = await store.rewind(sid, { after: last.id })

      // then
      expect(result).toEqual({ version: 2, retracted: [] })
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('expectedVersion mismatch is VERSION_CONFLICT', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const a = user('a')
      await store.append(sid, [a, assistant('b')])

      // when
      const error = await expectTurnlogError(store.rewind(sid, { after: a.id }, { expectedVersion: 1 }), 'VERSION_CONFLICT')

      // then
      expect(error.details['actualVersion']).toBe(2)
      expect(await liveIds(store, sid)).toHaveLength(2)
    })
  })

  describe('compact', () => {
    it('places the summary where the first covered message was and keeps the rest in order', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d, e] = [user('a'), assistant('b'), user('c'), assistant('d'), user('e')]
      await store.append(sid, [a, b, c, d, e])
      const summary = user('[CONTEXT COMPACTION] b and d')

      // when: covered need not be contiguous
      const result = await store.compact(sid, { covered: [d.id, b.id], summary, reason: 'context full', metadata: { tokens: 1234 } })

      // then
      expect(result).toEqual({ version: 7, summary: [summary.id] })
      expect(await liveIds(store, sid)).toEqual([a.id, summary.id, c.id, e.id])
      const events = await eventsOf(store, sid)
      expect(events.slice(5).map((x) => x.type)).toEqual(['message_appended', 'messages_compacted'])
      expect(events[6]).toMatchObject({
        data: {
          covered: [
            { id: d.id, contentHash: contentHash(d) },
            { id: b.id, contentHash: contentHash(b) },
          ],
          summary: [summary.id],
          reason: 'context full',
          metadata: { tokens: 1234 },
        },
      })
    })

    it('several summary messages take the place of the first covered one, in order', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      await store.append(sid, [a, b, c, d])
      const s1 = user('summary part 1')
      const s2 = assistant('summary part 2')

      // when
      const result = await store.compact(sid, { covered: [b.id, c.id], summary: [s1, s2] })
      await store.append(sid, [user('after')])

      // then
      expect(result).toEqual({ version: 7, summary: [s1.id, s2.id] })
      const live = await liveIds(store, sid)
      expect(live.slice(0, 4)).toEqual([a.id, s1.id, s2.id, d.id])
      expect(live).toHaveLength(5)
    })

    it('messages appended after the caller picked `covered` stay live, after the summary', async () => {
      // given: the caller snapshots the list and starts a slow summary
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const covered = (await store.load(sid)).messages.slice(0, 2).map((m) => m.id)
      const x = assistant('x arrived during the summary')
      const y = user('y arrived during the summary')
      await (await ctx.reopen()).append(sid, [x, y])
      const summary = user('[CONTEXT COMPACTION] a, b')

      // when
      await store.compact(sid, { covered, summary })

      // then
      expect(await liveIds(store, sid)).toEqual([summary.id, c.id, x.id, y.id])
    })

    it('a covered id that is not live is UNKNOWN_MESSAGE and nothing is written (summary included)', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      await store.rewind(sid, { from: c.id })
      const summary = user('summary')

      // when
      const retracted = await expectTurnlogError(store.compact(sid, { covered: [a.id, c.id], summary }), 'UNKNOWN_MESSAGE')
      await expectTurnlogError(store.compact(sid, { covered: [a.id, newMessageId()], summary }), 'UNKNOWN_MESSAGE')

      // then
      expect(retracted.details['missing']).toEqual([c.id])
      expect((await store.getSession(sid)).version).toBe(4)
      expect(await liveIds(store, sid)).toEqual([a.id, b.id])
      // the summary was not stored: appending it now is a new message
      expect((await store.append(sid, [summary])).appended).toEqual([summary.id])
    })

    it('retrying a committed compaction with the same summary ids is a no-op', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(sid, [a, b, c])
      const summary = user('summary of a, b')
      const first = await store.compact(sid, { covered: [a.id, b.id], summary, expectedVersion: 3 })

      // when: the acknowledgement was lost; retry the same call, here and from a restarted process
      const retry = await store.compact(sid, { covered: [a.id, b.id], summary, expectedVersion: 3 })
      const elsewhere = await (await ctx.reopen()).compact(sid, { covered: [a.id, b.id], summary })

      // then
      expect(first).toEqual({ version: 5, summary: [summary.id] })
      expect(retry).toEqual(first)
      expect(elsewhere).toEqual(first)
      expect(await eventsOf(store, sid)).toHaveLength(5)
      expect(await liveIds(store, sid)).toEqual([summary.id, c.id])
    })

    it('retrying a committed compaction is a no-op even after its summary was revised', async () => {
      // given: the compaction committed but its acknowledgement was lost; meanwhile the summary was revised
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(sid, [a, b])
      const s1 = user('[CONTEXT COMPACTION] part 1')
      const s2 = assistant('[CONTEXT COMPACTION] part 2')
      await store.compact(sid, { covered: [a.id], summary: [s1, s2] })
      await store.revise(sid, s1.id, { role: 'user', content: '[CONTEXT COMPACTION] part 1, corrected' })
      await store.revise(sid, s2.id, { role: 'assistant', content: '[CONTEXT COMPACTION] part 2, corrected' })

      // when
      const retry = await store.compact(sid, { covered: [a.id], summary: [s1, s2] })

      // then
      expect(retry).toEqual({ version: 7, summary: [s1.id, s2.id] })
      expect((await store.load(sid)).messages.map((m) => m.payload.content)).toEqual([
        '[CONTEXT COMPACTION] part 1, corrected',
        '[CONTEXT COMPACTION] part 2, corrected',
        'b',
      ])
    })

    it('refuses an ephemeral summary, an empty cover and a stale expectedVersion', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const a = user('a')
      await store.append(sid, [a, assistant('b')])

      // when / then
      await expectTurnlogError(
        store.compact(sid, { covered: [a.id], summary: createMessage({ role: 'user', content: 's' }, { ephemeral: true }) }),
        'INVALID_MESSAGE',
      )
      await expectTurnlogError(store.compact(sid, { covered: [], summary: user('s') }), 'INVALID_INPUT')
      const stale = await expectTurnlogError(
        store.compact(sid, { covered: [a.id], summary: user('s'), expectedVersion: 1 }),
        'VERSION_CONFLICT',
      )
      expect(stale.details['actualVersion']).toBe(2)
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })
  })

  describe('compact and tool-call pairs', () => {
    it("refuses a compaction that splits a call from its result (INVALID_INPUT 'splits_tool_pair'), writing nothing; the whole pair compacts", async () => {
      // given a conversation with a complete tool-call pair
      const store = ctx.store()
      const sid = await store.createSession()
      const [u, call, result, a] = [user('read README'), toolCall(['call_01']), toolResult('call_01', '# acme'), assistant('it is acme')]
      await store.append(sid, [u, call, result, a])
      const summary = user('[CONTEXT COMPACTION] the user asked about README')

      // when: the call covered without its result, then the result without its call
      const callOnly = await expectTurnlogError(store.compact(sid, { covered: [u.id, call.id], summary }), 'INVALID_INPUT')
      const resultOnly = await expectTurnlogError(
        store.compact(sid, { covered: [result.id], summary, expectedVersion: 4 }),
        'INVALID_INPUT',
      )

      // then: each names the call id and both sides; nothing was written, the summary not stored
      expect(callOnly.details).toMatchObject({
        reason: 'splits_tool_pair',
        sessionId: sid,
        toolCallId: 'call_01',
        messageIds: [result.id],
        coveredMessageIds: [call.id],
      })
      expect(resultOnly.details).toMatchObject({ reason: 'splits_tool_pair', messageIds: [call.id], coveredMessageIds: [result.id] })
      expect(await eventsOf(store, sid)).toHaveLength(4)
      expect((await store.load(sid)).pairing.ok).toBe(true)

      // and the whole pair (or neither side of it) compacts
      const done = await store.compact(sid, { covered: [u.id, call.id, result.id], summary })
      expect(done.version).toBe(6)
      const loaded = await store.load(sid)
      expect(loaded.messages.map((m) => m.id)).toEqual([summary.id, a.id])
      expect(loaded.pairing.ok).toBe(true)
    })

    it('faults the live list already had (an orphan result, an unanswered call) never block a compaction', async () => {
      // given an orphan result and an unanswered call (an interrupted turn), then a complete pair
      const store = ctx.store()
      const sid = await store.createSession()
      const orphan = toolResult('call_gone', 'late result')
      const interrupted = toolCall(['call_open'])
      const [u, call, result] = [user('again'), toolCall(['call_02']), toolResult('call_02', 'ok')]
      await store.append(sid, [orphan, interrupted, u, call, result])

      // when: compactions covering the broken ones alone, then around the pair
      await store.compact(sid, { covered: [orphan.id], summary: user('[CONTEXT COMPACTION] 1') })
      await store.compact(sid, { covered: [interrupted.id, u.id], summary: user('[CONTEXT COMPACTION] 2') })

      // then
      const loaded = await store.load(sid)
      expect(loaded.messages.map((m) => m.id).slice(2)).toEqual([call.id, result.id])
      expect(loaded.pairing.ok).toBe(true)
    })

    it('allowSplitToolPairs records the split (an importer, a mirror); a retry without it is the no-op replay it was', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [call, result] = [toolCall(['call_03']), toolResult('call_03', 'ok')]
      await store.append(sid, [call, result])
      const summary = user('[CONTEXT COMPACTION] a tool was called')

      // when
      const first = await store.compact(sid, { covered: [call.id], summary, allowSplitToolPairs: true })
      const retry = await store.compact(sid, { covered: [call.id], summary })
      const elsewhere = await (await ctx.reopen()).compact(sid, { covered: [call.id], summary })

      // then: recorded once, the orphan result live (what the audit reports), the retries write nothing
      expect(first).toEqual({ version: 4, summary: [summary.id] })
      expect(retry).toEqual(first)
      expect(elsewhere).toEqual(first)
      const loaded = await store.load(sid)
      expect(loaded.messages.map((m) => m.id)).toEqual([summary.id, result.id])
      expect(loaded.pairing.orphans).toEqual([{ messageId: result.id, toolCallId: 'call_03' }])
      await expectTurnlogError(
        store.compact(sid, { covered: [result.id], summary: user('s'), allowSplitToolPairs: 'yes' as never }),
        'INVALID_INPUT',
      )
    })

    it('inside a caller transaction the refusal writes nothing and the transaction goes on', async () => {
      // given
      const store = ctx.store()
      if (store.atomically === undefined) return
      const sid = await store.createSession()
      const [call, result] = [toolCall(['call_04']), toolResult('call_04', 'ok')]
      await store.append(sid, [call, result])
      const late = assistant('after the tool')

      // when: the refused compaction is caught inside the transaction, which then appends and commits
      const caught = await store.atomically(async (tx) => {
        const error = await expectTurnlogError(tx.compact(sid, { covered: [result.id], summary: user('s') }), 'INVALID_INPUT')
        await tx.append(sid, [late])
        return error
      })

      // then
      expect(caught.details['reason']).toBe('splits_tool_pair')
      expect(await liveIds(store, sid)).toEqual([call.id, result.id, late.id])
      expect(await eventsOf(store, sid)).toHaveLength(3)
    })
  })

  describe('revise and streaming', () => {
    it('revise writes a new revision under the same id; load shows the latest; re-sending it is a no-op', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const result = createMessage({ role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' })
      await store.append(sid, [result])
      const noted = { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}\n[note: output truncated]' }

      // when
      const first = await store.revise(sid, result.id, noted)
      const again = await store.revise(sid, result.id, noted)

      // then
      expect(first).toMatchObject({ version: 2, revision: 1, unchanged: false })
      expect(again).toMatchObject({ version: 2, revision: 1, unchanged: true })
      const loaded = (await store.load(sid)).messages
      expect(loaded.map((m) => m.id)).toEqual([result.id])
      expect(loaded[0]?.payload).toEqual(noted)
      expect(loaded[0]?.createdAt).toBe(result.createdAt)
      const events = await eventsOf(store, sid)
      expect(events[1]).toMatchObject({ type: 'message_revised', messageId: result.id, contentHash: contentHash(noted as never) })
    })

    it('revise hashes the payload as it is: a json payload with a `payload` field of its own is revised by its whole content', async () => {
      // given: a payload that also has the shape of a message ({ payload } without a role)
      const store = ctx.store()
      const sid = await store.createSession()
      const m = createMessage({ payload: { step: 1 }, state: 'A' }, { format: 'json' })
      await store.append(sid, [m])

      // when: two revisions that differ outside the inner `payload` only
      const toB = await store.revise(sid, m.id, { payload: { step: 1 }, state: 'B' })
      const toC = await store.revise(sid, m.id, { payload: { step: 1 }, state: 'C' })
      const again = await store.revise(sid, m.id, { payload: { step: 1 }, state: 'C' })

      // then: each is written, the repeat is the no-op, and the stored hash is the whole payload's
      expect([toB.unchanged, toC.unchanged, again.unchanged]).toEqual([false, false, true])
      const loaded = (await store.load(sid)).messages
      expect(loaded[0]?.payload).toEqual({ payload: { step: 1 }, state: 'C' })
      const events = await eventsOf(store, sid)
      expect(events.map((e) => e.contentHash)).toEqual([
        contentHash(m),
        contentHash({ payload: { payload: { step: 1 }, state: 'B' } }),
        contentHash({ payload: { payload: { step: 1 }, state: 'C' } }),
      ])
    })

    it('revise of an unknown or non-live message is UNKNOWN_MESSAGE; an invalid payload is INVALID_MESSAGE', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b] = [user('a'), assistant('b')]
      await store.append(sid, [a, b])
      await store.rewind(sid, { from: b.id })

      // when / then
      await expectTurnlogError(store.revise(sid, newMessageId(), { role: 'user', content: 'x' }), 'UNKNOWN_MESSAGE')
      await expectTurnlogError(store.revise(sid, b.id, { role: 'assistant', content: 'x' }), 'UNKNOWN_MESSAGE')
      await expectTurnlogError(store.revise(sid, a.id, { role: 'wizard', content: 'x' }), 'INVALID_MESSAGE')
      expect((await store.getSession(sid)).version).toBe(3)
    })

    it('streams: partial append, partial revisions, finalize; the final content is the last revision', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const q = user('tell me a story')
      const reply = createMessage({ role: 'assistant', content: 'Once' }, { status: 'partial' })
      await store.append(sid, [q, reply])

      // when
      const partialLoad = (await store.load(sid)).messages[1]
      const grown = await store.revise(sid, reply.id, { role: 'assistant', content: 'Once upon' }, { status: 'partial' })
      const midLoad = (await store.load(sid)).messages[1]
      const done = await store.finalize(sid, reply.id)
      const finalLoad = (await store.load(sid)).messages[1]
      const doneAgain = await store.finalize(sid, reply.id)

      // then
      expect(partialLoad).toMatchObject({ id: reply.id, status: 'partial', payload: { content: 'Once' } })
      expect(grown).toMatchObject({ version: 3, revision: 1, unchanged: false })
      expect(midLoad).toMatchObject({ id: reply.id, status: 'partial', payload: { content: 'Once upon' } })
      expect(done).toMatchObject({ version: 4, revision: 1, unchanged: false })
      expect(finalLoad?.status).toBeUndefined()
      expect(finalLoad?.payload).toEqual({ role: 'assistant', content: 'Once upon' })
      expect(doneAgain).toMatchObject({ version: 4, revision: 1, unchanged: true })
      expect((await eventsOf(store, sid)).map((e) => e.type)).toEqual([
        'message_appended',
        'message_appended',
        'message_revised',
        'message_finalized',
      ])
    })

    it('finalize with a payload writes the final content in one revision', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const reply = createMessage({ role: 'assistant', content: 'Hel' }, { status: 'partial' })
      await store.append(sid, [reply])

      // when
      const done = await store.finalize(sid, reply.id, { role: 'assistant', content: 'Hello!' })

      // then
      expect(done).toMatchObject({ version: 2, revision: 1, unchanged: false })
      const loaded = (await store.load(sid)).messages[0]
      expect(loaded?.status).toBeUndefined()
      expect(loaded?.payload.content).toBe('Hello!')
    })

    it('a reply whose stream crashed loads with status partial in a restarted process', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const reply = createMessage({ role: 'assistant', content: 'I was about to' }, { status: 'partial' })
      await store.flush(sid, [user('q'), reply])
      await store.revise(sid, reply.id, { role: 'assistant', content: 'I was about to say' }, { status: 'partial' })

      // when: the process dies; another one resumes
      const loaded = (await (await ctx.reopen()).load(sid)).messages

      // then
      expect(loaded[1]).toMatchObject({ id: reply.id, status: 'partial', payload: { content: 'I was about to say' } })
    })

    it('a final message cannot become partial again with the same content (INVALID_INPUT)', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = assistant('done')
      await store.append(sid, [m])

      // when / then
      await expectTurnlogError(store.revise(sid, m.id, m.payload, { status: 'partial' }), 'INVALID_INPUT')
      expect((await store.getSession(sid)).version).toBe(1)
    })
  })

  describe('fork', () => {
    it('continues from `at` in a new session with the same message ids and records the lineage', async () => {
      // given
      const store = ctx.store()
      const parent = await store.createSession({ tenantId: 'acme' })
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(parent, [a, b, c])

      // when
      const child = await store.fork(parent, { at: b.id, metadata: { branch: 'retry' } })

      // then
      const loaded = await store.load(child)
      expect(loaded.messages.map((m) => m.id)).toEqual([a.id, b.id])
      expect(loaded.messages.map((m) => m.payload)).toEqual([a.payload, b.payload])
      expect(loaded.messages.map((m) => m.createdAt)).toEqual([a.createdAt, b.createdAt])
      expect(loaded.version).toBe(3)
      const info = await store.getSession(child)
      expect(info).toMatchObject({
        tenantId: 'acme',
        parent: { sessionId: parent, version: 3, at: b.id },
        metadata: { branch: 'retry' },
        liveCount: 2,
      })
      const events = await eventsOf(store, child)
      expect(events[0]).toMatchObject({
        type: 'session_forked',
        data: { parentSessionId: parent, parentVersion: 3, at: b.id, inherited: 2 },
      })
    })

    it('the child is independent of later parent writes, and the parent of the child', async () => {
      // given
      const store = ctx.store()
      const parent = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await store.append(parent, [a, b, c])
      const child = await store.fork(parent, { at: c.id })

      // when
      const d = assistant('d, parent only')
      await store.append(parent, [d])
      await store.revise(parent, b.id, { role: 'assistant', content: 'b revised in the parent' })
      await store.rewind(parent, { after: a.id })
      const e = assistant('e, child only')
      await store.append(child, [e])
      await store.rewind(child, { from: c.id })
      await store.revise(child, a.id, { role: 'user', content: 'a revised in the child' })

      // then
      const childLive = (await store.load(child)).messages
      expect(childLive.map((m) => m.id)).toEqual([a.id, b.id])
      expect(childLive.map((m) => m.payload.content)).toEqual(['a revised in the child', 'b'])
      const parentLive = (await store.load(parent)).messages
      expect(parentLive.map((m) => m.id)).toEqual([a.id])
      expect(parentLive[0]?.payload.content).toBe('a')
      // an id of the parent that the child never inherited is foreign to the child
      const foreign = await expectTurnlogError(store.append(child, [d]), 'MESSAGE_CONFLICT')
      expect(foreign.details).toMatchObject({ messageId: d.id, reason: 'foreign_session', otherSessionId: parent })
      // an inherited message is the child's own: re-sending it is a duplicate
      expect((await store.append(child, [b])).duplicates).toEqual([b.id])
    })

    it('inherits the current revision and streaming status; fork at a non-live message is UNKNOWN_MESSAGE; a retried fork is a no-op', async () => {
      // given
      const store = ctx.store()
      const parent = await store.createSession()
      const a = user('a')
      const streaming = createMessage({ role: 'assistant', content: 'partial' }, { status: 'partial' })
      const gone = user('gone')
      await store.append(parent, [a, streaming, gone])
      await store.revise(parent, a.id, { role: 'user', content: 'a v2' })
      await store.rewind(parent, { from: gone.id })
      const childId = newSessionId()

      // when
      await expectTurnlogError(store.fork(parent, { at: gone.id }), 'UNKNOWN_MESSAGE')
      const child = await store.fork(parent, { at: streaming.id, id: childId })
      const retried = await store.fork(parent, { at: streaming.id, id: childId })

      // then
      expect(child).toBe(childId)
      expect(retried).toBe(childId)
      const loaded = (await store.load(child)).messages
      expect(loaded.map((m) => [m.payload.content, m.status])).toEqual([
        ['a v2', undefined],
        ['partial', 'partial'],
      ])
      expect((await store.getSession(child)).version).toBe(3)
      await store.finalize(child, streaming.id)
      expect((await store.load(parent)).messages[1]?.status).toBe('partial')
    })
  })

  describe('time travel', () => {
    it('load({ at: v }) returns the live list as of every version v', async () => {
      // given: a history touching every operation, with the live list recorded after each step
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      const summary = user('summary')
      const expected = new Map<number, { ids: MessageId[]; contents: unknown[] }>()
      const record = async (): Promise<void> => {
        const { version, messages } = await store.load(sid)
        expected.set(version, { ids: messages.map((m) => m.id), contents: messages.map((m) => m.payload.content) })
      }
      await record()
      await store.append(sid, [a])
      await record()
      await store.append(sid, [b])
      await record()
      await store.append(sid, [c])
      await record()
      await store.revise(sid, b.id, { role: 'assistant', content: 'b2' })
      await record()
      await store.rewind(sid, { from: c.id })
      await record()
      await store.compact(sid, { covered: [a.id], summary })
      await record()

      // when
      const travelled = new Map<number, { ids: MessageId[]; contents: unknown[] }>()
      for (const v of expected.keys()) {
        const { version, messages } = await store.load(sid, { at: v })
        expect(version).toBe(v)
        travelled.set(v, { ids: messages.map((m) => m.id), contents: messages.map((m) => m.payload.content) })
      }
      // the deferred summary (version 6) is not yet live: the list is still that of version 5
      const mid = await store.load(sid, { at: 6 })

      // then
      expect([...expected.keys()]).toEqual([0, 1, 2, 3, 4, 5, 7])
      expect(travelled).toEqual(expected)
      expect(travelled.get(4)?.contents).toEqual(['a', 'b2', 'c'])
      expect(travelled.get(3)?.contents).toEqual(['a', 'b', 'c'])
      expect(mid.messages.map((m) => m.id)).toEqual(expected.get(5)?.ids)
    })
  })
}
