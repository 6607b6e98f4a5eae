import { describe, expect, it } from '@jest/globals'
import { INTERRUPTED_TOOL_RESULT, createMessage, toWire, type TranscriptStatus } from '@turnlog/core'
import { assistant, eventsOf, toolCall, toolResult, user, type ContractContext } from './contract-helpers.js'

/**
 * The full transcript (every content version with its status), tool-call pairing of the live list,
 * and the wire view's pairing repair, which must never change the log.
 */
export function describeTranscriptContract(ctx: ContractContext): void {
  describe('transcript and tool-call pairing', () => {
    it('lists every content version with its status: live, retracted, compacted, superseded-revision, partial', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const kept = user('kept')
      const revised = createMessage({ role: 'tool', tool_call_id: 'call_9', content: 'v0' })
      const compactedAway = assistant('compacted away')
      const streaming = createMessage({ role: 'assistant', content: 'still typ' }, { status: 'partial' })
      const retracted = user('retracted')
      const summary = user('[CONTEXT COMPACTION]')
      await store.append(sid, [kept, revised, compactedAway, streaming, retracted])
      await store.revise(sid, revised.id, { role: 'tool', tool_call_id: 'call_9', content: 'v1' })
      await store.rewind(sid, { from: retracted.id })
      await store.compact(sid, { covered: [compactedAway.id], summary })

      // when
      const transcript = await store.transcript(sid)

      // then
      const rows = transcript.entries.map((e) => [e.seq, e.message.id, e.revision, e.status] as [number, string, number, TranscriptStatus])
      expect(rows).toEqual([
        [1, kept.id, 0, 'live'],
        [2, revised.id, 0, 'superseded-revision'],
        [3, compactedAway.id, 0, 'compacted'],
        [4, streaming.id, 0, 'partial'],
        [5, retracted.id, 0, 'retracted'],
        [6, revised.id, 1, 'live'],
        [8, summary.id, 0, 'live'],
      ])
      expect(transcript.entries[1]?.message.payload.content).toBe('v0')
      expect(transcript.entries[5]?.message.payload.content).toBe('v1')
      expect(transcript.entries[1]?.changedBy).toEqual([6])
      expect(transcript.version).toBe(9)
      expect(transcript.events.map((e) => e.type)).toEqual(['messages_retracted', 'messages_compacted'])
      expect(transcript.pairing.ok).toBe(false) // call_9 has a result but no call: an orphan
    })

    it('reports unanswered calls, orphan results and duplicate results (tool_call_id and call_id variants)', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      const ask = user('do things')
      const calls = toolCall(['call_a', 'call_b'])
      const resultA = toolResult('call_a', 'A')
      const resultA2 = toolResult('call_a', 'A again')
      const orphan = toolResult('call_zzz', 'nobody asked')
      const viaCallId = toolCall(['resp_1'], 'call_id')
      const viaCallIdResult = toolResult('resp_1', 'ok', 'call_id')
      await store.append(sid, [ask, calls, resultA, resultA2, orphan, viaCallId, viaCallIdResult])

      // when
      const { pairing } = await store.load(sid)
      const transcript = await store.transcript(sid)

      // then
      expect(pairing.ok).toBe(false)
      expect(pairing.unanswered).toEqual([{ messageId: calls.id, toolCallId: 'call_b' }])
      expect(pairing.orphans).toEqual([{ messageId: orphan.id, toolCallId: 'call_zzz' }])
      expect(pairing.duplicates).toEqual([{ toolCallId: 'call_a', messageIds: [resultA.id, resultA2.id] }])
      expect(transcript.pairing).toEqual(pairing)
    })

    it('a well-paired list (call_id variant included) is ok', async () => {
      // given
      const store = ctx.store()
      const sid = await store.createSession()
      await store.append(sid, [
        user('q'),
        toolCall(['c1'], 'call_id'),
        toolResult('c1', 'r', 'call_id'),
        toolCall(['c2']),
        toolResult('c2', 'r2'),
        assistant('done'),
      ])

      // when
      const { pairing } = await store.load(sid)

      // then
      expect(pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    })

    it('toWire({ repairPairing }) repairs only the copy: the log and the loaded list are unchanged', async () => {
      // given: an interrupted tool call, an orphan and a duplicate result
      const store = ctx.store()
      const sid = await store.createSession()
      const calls = toolCall(['call_1', 'call_2'])
      const r1 = toolResult('call_1', 'one')
      const r1again = toolResult('call_1', 'one again')
      const orphan = toolResult('call_x', 'orphan')
      const next = user('next question')
      await store.append(sid, [user('q'), calls, r1, r1again, orphan, next])
      const before = await store.load(sid)
      const eventsBefore = await eventsOf(store, sid)

      // when
      const wire = toWire(before.messages, { repairPairing: true })
      const plain = toWire(before.messages)

      // then
      expect(wire).toEqual([
        { role: 'user', content: 'q' },
        calls.payload,
        { role: 'tool', tool_call_id: 'call_1', content: 'one' },
        { role: 'tool', tool_call_id: 'call_2', content: INTERRUPTED_TOOL_RESULT },
        { role: 'user', content: 'next question' },
      ])
      expect(plain).toHaveLength(6)
      const after = await store.load(sid)
      expect(after.messages).toEqual(before.messages)
      expect(after.pairing).toEqual(before.pairing)
      expect(after.pairing.ok).toBe(false)
      expect(await eventsOf(store, sid)).toEqual(eventsBefore)
    })
  })
}
