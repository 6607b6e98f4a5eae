import { describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  foldSession,
  isMessage,
  liveMessages,
  newSessionId,
  toWire,
  transcriptOf,
  type ChatMessage,
  type Message,
  type MessageId,
  type SessionState,
  type StoredEvent,
} from '@turnlog/core'
import { EventLog, coverage } from './support/event-log.js'
import { assistant, user } from './support/messages.js'

const payloads = (state: SessionState): ChatMessage[] => liveMessages(state).map((m) => m.payload)
const statuses = (state: SessionState): [string, number, string][] =>
  transcriptOf(state).map((e) => [String(e.message.payload.content), e.revision, e.status])

describe('foldSession', () => {
  it('folds appends into the live list, in seq order, ids and envelopes intact', () => {
    // given
    const a = createMessage(
      { role: 'user', content: 'a' },
      { externalId: 'telegram:1:1', scope: null, createdAt: '2026-01-01T00:00:00.000Z' },
    )
    const b = assistant('b')
    const c = user('c')
    const log = new EventLog(newSessionId()).append(a).append(b).append(c)

    // when
    const state = foldSession(log.events)

    // then
    expect(state.sessionId).toBe(log.sessionId)
    expect(state.version).toBe(3)
    expect(state.live).toEqual([a.id, b.id, c.id])
    expect(state.anomalies).toEqual([])
    expect(state.forkedFrom).toBeNull()
    expect(liveMessages(state)).toEqual([a, b, c])
    expect(liveMessages(state).every((m) => isMessage(m) && Object.isFrozen(m.payload))).toBe(true)
    expect(state.messages.get(b.id)).toMatchObject({ id: b.id, state: 'live', partial: false, events: [2] })
    expect(contentHash(liveMessages(state)[0] as Message)).toBe(contentHash(a))
  })

  it('changes no event but freezes the payloads it gives to the messages (they are shared, as documented)', () => {
    // given hand-made events (their payloads fresh, unfrozen objects) and a deep copy of them
    const log = new EventLog(newSessionId()).append(user('q')).append(assistant('a'))
    const before = JSON.parse(JSON.stringify(log.events)) as unknown
    expect(log.events.some((e) => e.payload !== null && Object.isFrozen(e.payload))).toBe(false)

    // when
    const state = foldSession(log.events)

    // then every event reads as before, and each message's payload is the event's own object, frozen
    expect(JSON.parse(JSON.stringify(log.events))).toEqual(before)
    expect(liveMessages(state).map((m) => m.payload)).toEqual(log.events.map((e) => e.payload))
    liveMessages(state).forEach((m, i) => expect(m.payload).toBe(log.events[i]?.payload))
    expect(log.events.every((e) => Object.isFrozen(e.payload))).toBe(true)
  })

  it('orders by seq, not by createdAt (clocks regress)', () => {
    // given: the second message was stamped earlier than the first
    const first = createMessage({ role: 'user', content: 'first' }, { createdAt: '2026-01-01T12:00:00Z' })
    const second = createMessage({ role: 'assistant', content: 'second' }, { createdAt: '2025-12-31T23:59:59Z' })

    // when
    const state = foldSession(new EventLog(newSessionId()).append(first).append(second).events)

    // then
    expect(state.live).toEqual([first.id, second.id])
  })

  it('is deterministic', () => {
    // given
    const a = user('a')
    const log = new EventLog(newSessionId()).append(a).revise(a, { role: 'user', content: 'a2' }).append(assistant('b'))

    // when / then
    expect(foldSession(log.events)).toEqual(foldSession(log.events))
  })

  it('applies a revision in place: same id and position, new content, history kept', () => {
    // given
    const a = user('a')
    const b = createMessage({ role: 'tool', tool_call_id: 'c1', content: 'result' })
    const c = assistant('c')
    const revised: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: 'result\n[note: truncated]' }
    const log = new EventLog(newSessionId()).append(a).append(b).append(c).revise(b, revised)

    // when
    const state = foldSession(log.events)

    // then
    expect(state.live).toEqual([a.id, b.id, c.id])
    expect(payloads(state)[1]).toEqual(revised)
    const record = state.messages.get(b.id)
    expect(record?.revisions.map((r) => r.seq)).toEqual([2, 4])
    expect(record?.revisions.map((r) => r.contentHash)).toEqual([contentHash(b), contentHash(revised)])
    expect(record?.events).toEqual([2, 4])
    expect(record ? contentHash(record.message) : null).toBe(contentHash(revised))
    expect(statuses(state)).toEqual([
      ['a', 0, 'live'],
      ['result', 0, 'superseded-revision'],
      ['c', 0, 'live'],
      ['result\n[note: truncated]', 1, 'live'],
    ])
    expect(transcriptOf(state).find((e) => e.seq === 2)?.changedBy).toEqual([4])
  })

  it('follows a streaming reply: partial, revised while partial, then finalized', () => {
    // given
    const reply = createMessage({ role: 'assistant', content: 'Hel' }, { status: 'partial' })
    const log = new EventLog(newSessionId())
      .append(user('hi'))
      .append(reply)
      .revise(reply, { role: 'assistant', content: 'Hello wor' }, { status: 'partial' })
      .finalize(reply.id)

    // when
    const streaming = foldSession(log.events, { at: 3 })
    const done = foldSession(log.events)

    // then
    expect(streaming.messages.get(reply.id)).toMatchObject({
      partial: true,
      message: { status: 'partial', payload: { content: 'Hello wor' } },
    })
    expect(statuses(streaming).at(-1)).toEqual(['Hello wor', 1, 'partial'])
    const record = done.messages.get(reply.id)
    expect(record?.partial).toBe(false)
    expect(record?.message.payload).toEqual({ role: 'assistant', content: 'Hello wor' })
    expect(record && 'status' in record.message).toBe(false)
    expect(record?.events).toEqual([2, 3, 4])
    expect(statuses(done).at(-1)).toEqual(['Hello wor', 1, 'live'])
    expect(toWire(liveMessages(done))).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello wor' },
    ])
  })

  it('removes retracted messages from the live list and keeps them in the transcript (rewind)', () => {
    // given
    const a = user('a')
    const b = assistant('b')
    const c = user('c')
    const log = new EventLog(newSessionId()).append(a).append(b).append(c).retract([b.id, c.id], { after: a.id })

    // when
    const state = foldSession(log.events)

    // then
    expect(state.live).toEqual([a.id])
    expect(state.messages.get(b.id)?.state).toBe('retracted')
    expect(state.messages.get(c.id)?.events).toEqual([3, 4])
    expect(statuses(state)).toEqual([
      ['a', 0, 'live'],
      ['b', 0, 'retracted'],
      ['c', 0, 'retracted'],
    ])
  })

  describe('compaction', () => {
    it('places a deferred summary at the first covered message; later messages stay after it', () => {
      // given: a b c d live; summary s written (deferred, not yet live) while e and f are appended
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      const s = createMessage({ role: 'user', content: '[CONTEXT COMPACTION] a, b' })
      const e = user('e')
      const f = assistant('f')
      const log = new EventLog(newSessionId()).append(a).append(b).append(c).append(d).append(e).append(s, { deferred: true }).append(f)

      // when: the summary is not live until the compaction event places it
      const before = foldSession(log.events)
      log.compact(coverage(a, b), [s.id])
      const after = foldSession(log.events)

      // then
      expect(before.live).toEqual([a.id, b.id, c.id, d.id, e.id, f.id])
      expect(before.messages.get(s.id)?.state).toBe('pending')
      expect(after.live).toEqual([s.id, c.id, d.id, e.id, f.id])
      expect(after.messages.get(a.id)?.state).toBe('compacted')
      expect(after.messages.get(s.id)?.state).toBe('live')
      expect(after.messages.get(s.id)?.events).toEqual([6, 8])
      expect(after.anomalies).toEqual([])
      expect(statuses(after).map(([content, , status]) => `${content}:${status}`)).toEqual([
        'a:compacted',
        'b:compacted',
        'c:live',
        'd:live',
        'e:live',
        '[CONTEXT COMPACTION] a, b:live',
        'f:live',
      ])
    })

    it('handles a covered range in the middle and a non-contiguous one', () => {
      // given
      const [a, b, c, d, e] = [user('a'), assistant('b'), user('c'), assistant('d'), user('e')]
      const s1 = user('summary of b, d')
      const log = new EventLog(newSessionId())
        .append(a)
        .append(b)
        .append(c)
        .append(d)
        .append(e)
        .append(s1, { deferred: true })
        .compact(coverage(b, d), [s1.id])

      // when
      const state = foldSession(log.events)

      // then
      expect(state.live).toEqual([a.id, s1.id, c.id, e.id])
    })

    it('places several summary messages in order', () => {
      // given
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      const s1 = user('summary 1')
      const s2 = assistant('summary 2')
      const log = new EventLog(newSessionId())
        .append(a)
        .append(b)
        .append(c)
        .append(s1, { deferred: true })
        .append(s2, { deferred: true })
        .compact(coverage(a, b), [s1.id, s2.id])

      // when / then
      expect(foldSession(log.events).live).toEqual([s1.id, s2.id, c.id])
    })
  })

  it('records where a fork came from; inherited copies are live', () => {
    // given
    const parent = newSessionId()
    const a = user('a')
    const b = assistant('b')
    const log = new EventLog(newSessionId())
      .forked(parent, 7, b.id, 2)
      .append(a, { inheritedFrom: parent })
      .append(b, { inheritedFrom: parent })
      .append(user('new branch'))

    // when
    const state = foldSession(log.events)

    // then
    expect(state.forkedFrom).toEqual({ sessionId: parent, version: 7, at: b.id })
    expect(state.live.slice(0, 2)).toEqual([a.id, b.id])
    expect(state.live).toHaveLength(3)
    expect(state.version).toBe(4)
    expect(state.anomalies).toEqual([])
  })

  it('records a redaction against the message', () => {
    // given
    const a = user('secret')
    const log = new EventLog(newSessionId()).append(a).redact(a.id)

    // when / then
    expect(foldSession(log.events).messages.get(a.id)?.events).toEqual([1, 2])
  })

  it('shows the placeholder in every view after a redaction: live list, wire, every revision; hashes kept', () => {
    // given: a message revised once, then redacted, next to one that is not
    const a = user('secret')
    const b = assistant('public')
    const revised: ChatMessage = { role: 'user', content: 'secret, edited' }
    const log = new EventLog(newSessionId()).append(a).append(b).revise(a, revised).redact(a.id)

    // when
    const state = foldSession(log.events)

    // then
    const placeholder = { role: 'user', content: '[redacted]' }
    expect(payloads(state)).toEqual([placeholder, b.payload])
    expect(toWire(liveMessages(state))).toEqual([placeholder, b.payload])
    const record = state.messages.get(a.id)!
    expect(record.message.payload).toEqual(placeholder)
    expect(record.revisions.map((r) => r.message.payload)).toEqual([placeholder, placeholder])
    expect(record.revisions.map((r) => r.contentHash)).toEqual([contentHash(a), contentHash(revised)])
    expect(statuses(state)).toEqual([
      ['[redacted]', 0, 'superseded-revision'],
      ['public', 0, 'live'],
      ['[redacted]', 1, 'live'],
    ])
  })

  describe('time travel', () => {
    it('gives the state as of a version with `at`', () => {
      // given
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      const s = user('summary')
      const log = new EventLog(newSessionId())
        .append(a) // 1
        .append(b) // 2
        .revise(b, { role: 'assistant', content: 'b2' }) // 3
        .append(c) // 4
        .retract([c.id], { from: c.id }) // 5
        .append(s, { deferred: true }) // 6
        .compact(coverage(a), [s.id]) // 7

      // when
      const at = (v: number) => foldSession(log.events, { at: v })

      // then
      expect(at(0).live).toEqual([])
      expect(at(0).version).toBe(0)
      expect(at(2).live).toEqual([a.id, b.id])
      expect(payloads(at(2))[1]).toEqual({ role: 'assistant', content: 'b' })
      expect(payloads(at(3))[1]).toEqual({ role: 'assistant', content: 'b2' })
      expect(at(4).live).toEqual([a.id, b.id, c.id])
      expect(at(5).live).toEqual([a.id, b.id])
      expect(at(6).live).toEqual([a.id, b.id])
      expect(at(7).live).toEqual([s.id, b.id])
      expect(at(7)).toEqual(foldSession(log.events))
      expect(at(99)).toEqual(foldSession(log.events))
      expect([1, 2, 3, 4, 5, 6, 7].map((v) => at(v).version)).toEqual([1, 2, 3, 4, 5, 6, 7])
    })
  })

  describe('anomalies: impossible events are reported, not applied', () => {
    const unknown = '0190f5a2-3b4c-7d8e-9f01-23456789abcd' as MessageId

    it('a second append of a known id (the duplicate is ignored)', () => {
      // given
      const a = user('a')
      const log = new EventLog(newSessionId()).append(a).append(a)

      // when
      const state = foldSession(log.events)

      // then
      expect(state.live).toEqual([a.id])
      expect(state.anomalies).toEqual([{ seq: 2, kind: 'duplicate_append', explanation: expect.stringContaining(a.id) }])
    })

    it('a revision, finalization or redaction of an unknown message', () => {
      // given
      const ghost = createMessage({ role: 'user', content: 'ghost' }, { id: unknown })
      const log = new EventLog(newSessionId())
        .append(user('a'))
        .revise(ghost, { role: 'user', content: 'x' })
        .finalize(unknown)
        .redact(unknown)

      // when
      const state = foldSession(log.events)

      // then
      expect(state.anomalies.map((a) => [a.seq, a.kind])).toEqual([
        [2, 'unknown_message'],
        [3, 'unknown_message'],
        [4, 'unknown_message'],
      ])
      expect(state.messages.has(unknown)).toBe(false)
      expect(state.live).toHaveLength(1)
    })

    it('a rewind naming an unknown or already retracted message', () => {
      // given
      const [a, b] = [user('a'), assistant('b')]
      const log = new EventLog(newSessionId()).append(a).append(b).retract([b.id], { from: b.id }).retract([b.id, unknown], { from: b.id })

      // when
      const state = foldSession(log.events)

      // then
      expect(state.anomalies.map((x) => [x.seq, x.kind])).toEqual([
        [4, 'not_live'],
        [4, 'unknown_message'],
      ])
      expect(state.live).toEqual([a.id])
      expect(state.messages.get(b.id)?.events).toEqual([2, 3])
    })

    it('a compaction covering a message that is not live, or naming a summary that was not appended deferred', () => {
      // given
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      const s = user('summary')
      const log = new EventLog(newSessionId())
        .append(a)
        .append(b)
        .append(c)
        .retract([c.id], { from: c.id })
        .append(s, { deferred: true })
        .compact([...coverage(c), ...coverage(a)], [s.id, b.id, unknown])

      // when
      const state = foldSession(log.events)

      // then
      expect(state.anomalies.map((x) => [x.seq, x.kind])).toEqual([
        [6, 'not_live'],
        [6, 'unknown_message'],
        [6, 'unknown_message'],
      ])
      expect(state.live).toEqual([s.id, b.id])
      expect(state.messages.get(c.id)?.state).toBe('retracted')
    })

    it('a revision of a message that is no longer live (the store refuses those with UNKNOWN_MESSAGE)', () => {
      // given
      const [a, b] = [user('a'), assistant('b')]
      const log = new EventLog(newSessionId())
        .append(a)
        .append(b)
        .retract([b.id], { from: b.id })
        .revise(b, { role: 'assistant', content: 'b2' })

      // when
      const state = foldSession(log.events)

      // then
      expect(state.anomalies.map((x) => [x.seq, x.kind])).toEqual([[4, 'not_live']])
      expect(state.messages.get(b.id)?.message.payload).toEqual({ role: 'assistant', content: 'b' })
      expect(statuses(state).at(-1)).toEqual(['b', 0, 'retracted'])
    })

    it('an event of an unknown type', () => {
      // given
      const log = new EventLog(newSessionId()).append(user('a'))
      const bogus = { ...log.events[0], seq: 2, type: 'message_teleported' } as unknown as StoredEvent

      // when
      const state = foldSession([...log.events, bogus])

      // then
      expect(state.anomalies).toEqual([{ seq: 2, kind: 'bad_event', explanation: expect.stringContaining('message_teleported') }])
      expect(state.version).toBe(2)
      expect(state.live).toHaveLength(1)
    })
  })
})
