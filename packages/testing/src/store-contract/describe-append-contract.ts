import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, newSessionId, toMessage, serializeMessage, type Message } from '@turnlog/core'
import { assistant, eventsOf, expectTurnlogError, nudge, user, type ContractContext } from './contract-helpers.js'

/**
 * The `append` contract: versions and seqs, idempotency (including a retry whose acknowledgement was
 * lost), `MESSAGE_CONFLICT` with its evidence, atomicity, optimistic concurrency and input errors.
 */
export function describeAppendContract(ctx: ContractContext): void {
  describe('append', () => {
    it('writes a batch in order: version and seqs count from 1, appended lists the ids, no duplicates', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const batch = [user('hello'), assistant('hi'), user('how are you?')]

      // when
      const first = await store.append(sid, batch)
      const second = await store.append(sid, [assistant('fine')])

      // then
      expect(first).toEqual({ version: 3, appended: batch.map((m) => m.id), duplicates: [] })
      expect(second.version).toBe(4)
      const events = await eventsOf(store, sid)
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4])
      expect(events.map((e) => e.type)).toEqual(['message_appended', 'message_appended', 'message_appended', 'message_appended'])
      expect(events.slice(0, 3).map((e) => e.messageId)).toEqual(batch.map((m) => m.id))
      expect(events.slice(0, 3).map((e) => e.contentHash)).toEqual(batch.map((m) => contentHash(m)))
      expect(events.every((e) => e.sessionId === sid)).toBe(true)
      expect(new Set(events.map((e) => e.eventId)).size).toBe(4)
      expect((await store.getSession(sid)).version).toBe(4)
    })

    it('an empty batch writes nothing and reports the current version', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      await store.append(sid, [user('a')])

      // when
      const result = await store.append(sid, [])

      // then
      expect(result).toEqual({ version: 1, appended: [], duplicates: [] })
      expect(await eventsOf(store, sid)).toHaveLength(1)
    })

    it('keeps the envelope: createdAt, externalId and partial status survive the round trip', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = createMessage(
        { role: 'user', content: 'from telegram' },
        { externalId: 'telegram:chat1:msg7', scope: null, createdAt: '2001-02-03T04:05:06.789Z' },
      )
      const p = createMessage({ role: 'assistant', content: 'stream' }, { status: 'partial', createdAt: '1999-12-31T23:59:59.000Z' })

      // when
      await store.append(sid, [m, p])
      const { messages } = await store.load(sid)

      // then
      expect(messages[0]).toEqual({
        id: m.id,
        payload: m.payload,
        format: 'openai-chat',
        createdAt: '2001-02-03T04:05:06.789Z',
        externalId: 'telegram:chat1:msg7',
      })
      expect(messages[1]).toEqual({
        id: p.id,
        payload: p.payload,
        format: 'openai-chat',
        createdAt: '1999-12-31T23:59:59.000Z',
        status: 'partial',
      })
    })

    it('same id and same content is a duplicate: reported, nothing written, version unchanged', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const a = user('a')
      const b = assistant('b')
      await store.append(sid, [a, b])
      const copyOfA = toMessage(JSON.parse(serializeMessage(a)))

      // when
      const again = await store.append(sid, [copyOfA, b])

      // then
      expect(copyOfA).not.toBe(a)
      expect(again).toEqual({ version: 2, appended: [], duplicates: [a.id, b.id] })
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('a batch mixing known and new messages appends only the new ones, in batch order', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const a = user('a')
      const b = assistant('b')
      await store.append(sid, [a])
      const c = user('c')

      // when
      const result = await store.append(sid, [c, a, b])

      // then
      expect(result).toEqual({ version: 3, appended: [c.id, b.id], duplicates: [a.id] })
      expect((await eventsOf(store, sid)).map((e) => e.messageId)).toEqual([a.id, c.id, b.id])
    })

    it('a retry after a lost commit acknowledgement (same batch, same expectedVersion) succeeds and writes nothing', async () => {
      // given: the append committed, but the caller never heard (timeout, connection dropped after COMMIT)
      const store = ctx.store()
      const sid = await store.createSession()
      await store.append(sid, [user('q')])
      const batch = [assistant('answer'), user('next')]
      await store.append(sid, batch, { expectedVersion: 1 })

      // when: the caller retries exactly what it sent, from this process and from a restarted one
      const retry = await store.append(sid, batch, { expectedVersion: 1 })
      const other = await ctx.reopen()
      const retryElsewhere = await other.append(sid, batch, { expectedVersion: 1 })
      const flushElsewhere = await other.flush(sid, batch, { expectedVersion: 1 })

      // then
      expect(retry).toEqual({ version: 3, appended: [], duplicates: batch.map((m) => m.id) })
      expect(retryElsewhere).toEqual({ version: 3, appended: [], duplicates: batch.map((m) => m.id) })
      expect(flushElsewhere).toEqual({ version: 3, appended: [], duplicates: batch.map((m) => m.id) })
      expect((await eventsOf(store, sid)).map((e) => e.messageId)).toEqual([expect.any(String), ...batch.map((m) => m.id)])
    })

    it('same id with different content is MESSAGE_CONFLICT with both hashes, recorded as evidence, nothing written', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const original = assistant('the answer is 42')
      await store.append(sid, [original])
      const changed = createMessage({ role: 'assistant', content: 'the answer is 43' }, { id: original.id })

      // when
      const error = await expectTurnlogError(store.append(sid, [changed]), 'MESSAGE_CONFLICT')

      // then
      expect(error.details).toMatchObject({
        messageId: original.id,
        storedHash: contentHash(original),
        incomingHash: contentHash(changed),
        reason: 'content_mismatch',
      })
      const conflicts = await store.conflicts(sid)
      expect(conflicts).toHaveLength(1)
      expect(conflicts[0]).toMatchObject({
        sessionId: sid,
        messageId: original.id,
        reason: 'content_mismatch',
        storedHash: contentHash(original),
        incomingHash: contentHash(changed),
        otherSessionId: null,
        incomingPayload: { role: 'assistant', content: 'the answer is 43' },
      })
      expect(Number.isNaN(Date.parse(conflicts[0]?.detectedAt ?? ''))).toBe(false)
      expect(await eventsOf(store, sid)).toHaveLength(1)
      expect((await store.load(sid)).messages[0]?.payload).toEqual(original.payload)
    })

    it('a message id that belongs to another session is MESSAGE_CONFLICT (foreign_session), with evidence', async () => {
      // given
      const store = ctx.store()
      const owner = await store.createSession()
      const intruder = await store.createSession()
      const m = user('mine')
      await store.append(owner, [m])

      // when: the very same message, and the same id with other content
      const same = await expectTurnlogError(store.append(intruder, [m]), 'MESSAGE_CONFLICT')
      const other = await expectTurnlogError(
        store.append(intruder, [createMessage({ role: 'user', content: 'x' }, { id: m.id })]),
        'MESSAGE_CONFLICT',
      )

      // then
      expect(same.details).toMatchObject({
        messageId: m.id,
        reason: 'foreign_session',
        otherSessionId: owner,
        incomingHash: contentHash(m),
      })
      expect(other.details).toMatchObject({ messageId: m.id, reason: 'foreign_session', otherSessionId: owner })
      expect(await eventsOf(store, intruder)).toHaveLength(0)
      const evidence = await store.conflicts(intruder)
      expect(evidence.map((c) => [c.messageId, c.reason, c.otherSessionId])).toEqual([
        [m.id, 'foreign_session', owner],
        [m.id, 'foreign_session', owner],
      ])
      expect(await store.conflicts(owner)).toEqual([])
    })

    it('is atomic: a batch with one conflicting message writes nothing at all', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const stored = user('stored')
      await store.append(sid, [stored])
      const before = await store.getSession(sid)
      const fresh1 = assistant('fresh 1')
      const fresh2 = user('fresh 2')
      const clash = createMessage({ role: 'user', content: 'not what was stored' }, { id: stored.id })

      // when
      await expectTurnlogError(store.append(sid, [fresh1, clash, fresh2]), 'MESSAGE_CONFLICT')

      // then
      expect((await store.getSession(sid)).version).toBe(before.version)
      expect(await eventsOf(store, sid)).toHaveLength(1)
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([stored.id])
      // the fresh messages were not stored: appending them now writes them (not duplicates)
      expect(await store.append(sid, [fresh1, fresh2])).toEqual({ version: 3, appended: [fresh1.id, fresh2.id], duplicates: [] })
    })

    it('expectedVersion: a mismatch is VERSION_CONFLICT with details.actualVersion and writes nothing; a match writes', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      await store.append(sid, [user('a'), assistant('b')])
      const late = user('late')

      // when
      const stale = await expectTurnlogError(store.append(sid, [late], { expectedVersion: 1 }), 'VERSION_CONFLICT')
      const ahead = await expectTurnlogError(store.append(sid, [late], { expectedVersion: 7 }), 'VERSION_CONFLICT')
      const ok = await store.append(sid, [late], { expectedVersion: 2 })

      // then
      expect(stale.details['actualVersion']).toBe(2)
      expect(ahead.details['actualVersion']).toBe(2)
      expect(ok).toEqual({ version: 3, appended: [late.id], duplicates: [] })
      expect(await eventsOf(store, sid)).toHaveLength(3)
    })

    it('expectedVersion 0 guards the first write of a session', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const first = user('first')

      // when
      const result = await store.append(sid, [first], { expectedVersion: 0 })
      const second = await expectTurnlogError(store.append(sid, [user('racer')], { expectedVersion: 0 }), 'VERSION_CONFLICT')

      // then
      expect(result.version).toBe(1)
      expect(second.details['actualVersion']).toBe(1)
    })

    it('an ephemeral message is INVALID_MESSAGE and the whole batch is refused', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()

      // when
      const error = await expectTurnlogError(store.append(sid, [user('real'), nudge()]), 'INVALID_MESSAGE')

      // then
      expect(error.details['messageId']).toEqual(expect.any(String))
      expect(await eventsOf(store, sid)).toHaveLength(0)
    })

    it('an unknown session is SESSION_NOT_FOUND', async () => {
      // given
      const store = ctx.store()
      const missing = newSessionId()

      // when / then
      await expectTurnlogError(store.append(missing, [user('x')]), 'SESSION_NOT_FOUND')
      await expectTurnlogError(store.flush(missing, [user('x')]), 'SESSION_NOT_FOUND')
      await expectTurnlogError(store.load(missing), 'SESSION_NOT_FOUND')
      await expectTurnlogError(store.getSession(missing), 'SESSION_NOT_FOUND')
      await expectTurnlogError(eventsOf(store, missing), 'SESSION_NOT_FOUND')
    })

    it('an id repeated within one batch: identical copies are one message (issue 13.2), other content is MESSAGE_CONFLICT and nothing is written', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const m = user('twice')
      const copy: Message = toMessage({ ...m })
      const changed: Message = toMessage({ ...m, payload: { role: 'user', content: 'thrice' } })

      // when
      const error = await expectTurnlogError(store.append(sid, [m, assistant('between'), changed]), 'MESSAGE_CONFLICT')
      const nothing = await eventsOf(store, sid)
      const same = await store.append(sid, [m, m])
      const copied = await store.append(sid, [m, assistant('between'), copy])

      // then
      expect(error.details['messageId']).toBe(m.id)
      expect(nothing).toHaveLength(0)
      expect(same).toEqual({ version: 1, appended: [m.id], duplicates: [m.id] })
      expect(copied.duplicates).toEqual([m.id])
      expect(await eventsOf(store, sid)).toHaveLength(2)
    })

    it('documented choice: a message revised with revise() and later re-sent with its old content is a duplicate, not a conflict', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const original = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'result' })
      await store.append(sid, [original])
      await store.revise(sid, original.id, { role: 'tool', tool_call_id: 'call_1', content: 'result\n[note: truncated]' })

      // when: the runtime still holds the old value and flushes/appends it again
      const viaAppend = await store.append(sid, [original])
      const viaFlush = await (await ctx.reopen()).flush(sid, [original])

      // then: no write, no conflict, and the latest revision stays current
      expect(viaAppend).toEqual({ version: 2, appended: [], duplicates: [original.id] })
      expect(viaFlush).toEqual({ version: 2, appended: [], duplicates: [original.id] })
      expect((await store.load(sid)).messages[0]?.payload.content).toBe('result\n[note: truncated]')
      expect(await store.conflicts(sid)).toEqual([])
      // but content that was never stored under that id is still a conflict
      const third = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'something else' }, { id: original.id })
      await expectTurnlogError(store.append(sid, [third]), 'MESSAGE_CONFLICT')
    })
  })
}
