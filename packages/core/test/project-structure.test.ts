import { describe, expect, it } from '@jest/globals'
import {
  createMessage,
  foldSession,
  newSessionId,
  projectStructure,
  toMessage,
  type MessageId,
  type MessageEventData,
  type ProjectionRow,
  type StoredEvent,
} from '@turnlog/core'
import { applyEvent, newStructure, projectionRows } from '@turnlog/core/internal'
import { EventLog, coverage } from './support/event-log.js'
import { assistant, user } from './support/messages.js'

const row = (messageId: MessageId, eventSeq: number, partial = false): ProjectionRow => ({ messageId, eventSeq, partial })
const partialReply = (content: string) => createMessage({ role: 'assistant', content }, { status: 'partial' })
/** What the projection reads: seq, type, message id and data; payloads and hashes are noise. */
const structural = (events: readonly StoredEvent[]) =>
  events.map((e) => ({ seq: e.seq, type: e.type, messageId: e.messageId, data: e.data }))

// One test per rule written on applyEvent (project-structure.ts): the rows are what turnlog.live_messages
// holds, in position order.
describe('projectStructure', () => {
  it('message_appended: joins the end of the list with eventSeq = seq and partial from data.status; a deferred one waits', () => {
    // given
    const a = user('a')
    const b = partialReply('b')
    const s = user('summary')
    const log = new EventLog(newSessionId()).append(a).append(b).append(s, { deferred: true })

    // when
    const p = projectStructure(log.events)

    // then
    expect(p.rows).toEqual([row(a.id, 1), row(b.id, 2, true)])
    expect(p.messages.get(s.id)).toMatchObject({ state: 'pending', eventSeq: 3 })
    expect(p.anomalies).toEqual([])
  })

  it('message_appended: `deferred` present and not null waits (as the SQL projection reads it), absent or null joins the list', () => {
    // given: the store writes `deferred: true`; a log written around it may hold anything there
    const [a, b, c, d] = [user('a'), user('b'), user('c'), user('d')]
    const odd = (deferred: unknown) => ({ deferred }) as unknown as Partial<MessageEventData>
    const log = new EventLog(newSessionId()).append(a, odd(false)).append(b, odd(null)).append(c, odd('yes')).append(d)

    // when
    const p = projectStructure(log.events)

    // then
    expect(p.rows).toEqual([row(b.id, 2), row(d.id, 4)])
    expect([a.id, c.id].map((id) => p.messages.get(id)?.state)).toEqual(['pending', 'pending'])
    expect(p.anomalies).toEqual([])
  })

  it('message_appended: an id appended again changes nothing (duplicate_append)', () => {
    const a = user('a')
    const p = projectStructure(new EventLog(newSessionId()).append(a).append(a).events)
    expect(p.rows).toEqual([row(a.id, 1)])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([[2, 'duplicate_append']])
  })

  it('message_revised: eventSeq moves to the revision and partial follows it; the place does not move', () => {
    // given
    const a = user('a')
    const b = partialReply('b')
    const c = user('c')
    const log = new EventLog(newSessionId())
      .append(a)
      .append(b)
      .append(c)
      .revise(b, { role: 'assistant', content: 'b2' }, { status: 'partial' })
    // a final revision: the envelope of b without its streaming status
    log.revise(toMessage({ id: b.id, payload: b.payload, createdAt: b.createdAt }), { role: 'assistant', content: 'b3' })

    // when
    const p = projectStructure(log.events)

    // then
    expect(p.rows).toEqual([row(a.id, 1), row(b.id, 5, false), row(c.id, 3)])
  })

  it('message_revised: of a message not live (retracted, pending, unknown) changes nothing', () => {
    const a = user('a')
    const s = user('s')
    const stranger = user('x')
    const log = new EventLog(newSessionId()).append(a).append(s, { deferred: true }).retract([a.id], { from: a.id })
    log
      .revise(a, { role: 'user', content: 'a2' })
      .revise(s, { role: 'user', content: 's2' })
      .revise(stranger, { role: 'user', content: 'x2' })
    const p = projectStructure(log.events)
    expect(p.rows).toEqual([])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([
      [4, 'not_live'],
      [5, 'not_live'],
      [6, 'unknown_message'],
    ])
    expect(p.messages.get(a.id)?.eventSeq).toBe(1)
  })

  it('message_finalized: partial becomes false; eventSeq and the place stay', () => {
    const a = partialReply('a')
    const b = user('b')
    const p = projectStructure(new EventLog(newSessionId()).append(a).append(b).finalize(a.id).events)
    expect(p.rows).toEqual([row(a.id, 1, false), row(b.id, 2)])
  })

  it('messages_retracted: the named live messages leave; the rest keep their order; names not live are skipped', () => {
    const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
    const log = new EventLog(newSessionId()).append(a).append(b).append(c).append(d).retract([b.id, d.id], { after: a.id })
    log.retract([b.id, user('x').id], { after: a.id })
    const p = projectStructure(log.events)
    expect(p.rows).toEqual([row(a.id, 1), row(c.id, 3)])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([
      [6, 'not_live'],
      [6, 'unknown_message'],
    ])
  })

  it('messages_compacted: the covered leave; the summaries, in order, take the first covered place with their append seq and partial', () => {
    // given: covered c and b (named out of order), two summaries, one of them partial
    const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
    const s1 = user('s1')
    const s2 = partialReply('s2')
    const log = new EventLog(newSessionId()).append(a).append(b).append(c).append(d)
    log.append(s1, { deferred: true }).append(s2, { deferred: true }).compact(coverage(c, b), [s1.id, s2.id])

    // when
    const p = projectStructure(log.events)

    // then
    expect(p.rows).toEqual([row(a.id, 1), row(s1.id, 5), row(s2.id, 6, true), row(d.id, 4)])
    expect(p.messages.get(b.id)?.state).toBe('compacted')
  })

  it('messages_compacted: when no covered message is live the summaries go to the end; a summary not pending is skipped', () => {
    const a = user('a')
    const gone = user('gone')
    const s = user('s')
    const log = new EventLog(newSessionId()).append(a).append(gone).retract([gone.id], { after: a.id })
    log.append(s, { deferred: true }).compact(coverage(gone), [s.id, a.id])
    const p = projectStructure(log.events)
    expect(p.rows).toEqual([row(a.id, 1), row(s.id, 4)])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([
      [5, 'not_live'],
      [5, 'unknown_message'],
    ])
  })

  it('session_forked and the inherited copies: the copies are appends, in the parent order, then the fork goes on', () => {
    const parent = newSessionId()
    const [a, b, c] = [user('a'), partialReply('b'), user('c')]
    const log = new EventLog(newSessionId())
      .forked(parent, 7, b.id, 2)
      .append(a, { inheritedFrom: parent })
      .append(b, { inheritedFrom: parent })
      .append(c)
    const p = projectStructure(log.events)
    expect(p.rows).toEqual([row(a.id, 2), row(b.id, 3, true), row(c.id, 4)])
  })

  it('message_redacted: nothing structural changes', () => {
    const a = partialReply('a')
    const log = new EventLog(newSessionId()).append(a).append(user('b')).redact(a.id).redact(user('x').id)
    const p = projectStructure(log.events)
    expect(p.rows).toEqual(projectStructure(log.events.slice(0, 2)).rows)
    expect(p.messages.get(a.id)?.events).toEqual([1, 3])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([[4, 'unknown_message']])
  })

  it('an unknown event type changes nothing (bad_event)', () => {
    const a = user('a')
    const events = [
      ...structural(new EventLog(newSessionId()).append(a).events),
      { seq: 2, type: 'message_exploded', messageId: a.id, data: {} },
    ]
    const p = projectStructure(events)
    expect(p.rows).toEqual([row(a.id, 1)])
    expect(p.anomalies.map((x) => [x.seq, x.kind])).toEqual([[2, 'bad_event']])
  })

  it('reads only seq, type, message id and data; applyEvent step by step is projectStructure; foldSession shares its live list, states and anomalies', () => {
    // given: a history touching every rule
    const [a, b, c] = [user('a'), partialReply('b'), user('c')]
    const s = user('s')
    const log = new EventLog(newSessionId())
      .append(a)
      .append(b)
      .append(c)
      .revise(b, { role: 'assistant', content: 'b2' }, { status: 'partial' })
    log.finalize(b.id).append(s, { deferred: true }).compact(coverage(a), [s.id]).retract([c.id], { after: b.id }).redact(b.id).append(a)

    // when
    const full = projectStructure(log.events)
    const stripped = projectStructure(structural(log.events))
    const stepped = newStructure()
    const perEvent = log.events.map((e) => applyEvent(stepped, e))
    const folded = foldSession(log.events)

    // then
    expect(full.rows).toEqual([row(s.id, 6), row(b.id, 4, false)])
    expect(stripped.rows).toEqual(full.rows)
    expect(projectionRows(stepped)).toEqual(full.rows)
    expect(perEvent).toEqual([true, true, true, true, true, true, true, true, true, false])
    expect(folded.live).toEqual(full.live)
    expect(folded.anomalies).toEqual(full.anomalies)
    expect([...folded.messages.values()].map((r) => [r.id, r.state, r.partial, r.revisions.at(-1)?.seq, r.events])).toEqual(
      [...full.messages.values()].map((r) => [r.id, r.state, r.partial, r.eventSeq, r.events]),
    )
  })
})
