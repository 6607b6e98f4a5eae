/**
 * Second adversarial pass over docs/audit.md, aimed at the audit's power: histories built through the
 * real store (Postgres) that the audit must report (false negatives) or must leave alone (false
 * positives). audit-promises.int.test.ts covers deleted and duplicated turns and sync retractions;
 * this file covers:
 * - transcript false positives fixed here: a retried turn (the rewound attempt and the re-sent
 *   message say the same) against a transcript of what the model sees (A1; a compaction's
 *   carried-forward copy and the realistic session's history must stay clean); ephemeral scaffolding in
 *   a transcript of serialized messages (A2); a fork's history transcript holding messages its
 *   parent compacted before the fork (A3);
 * - a live false positive fixed here: memory holding the redaction placeholder the log serves, after
 *   a round trip through JSON (A4);
 * - tool-call pairing split by a rewind or a compaction, parallel calls answered out of order, and a
 *   sync in a fork that dropped a tool result;
 * - incidents a fork inherits (reported in the fork as in its parent), a fork at a compaction summary,
 *   a fork of a fork under `{ all: true }` (no shared_message_id);
 * - the findings of an exported and re-imported session (clock regression included) equal the
 *   original's;
 * - streams through sync: still partial (reported) or finalized with other content (not);
 * - domain.md incident classes: cursor-drift lost reply, identity reuse / flag copy, redelivery with
 *   and without a stable id, wall-clock ordering of a transcript with identical contents.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, parseMessage, serializeMessage, toWire, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, useTestStore } from '@turnlog/testing'
import { audit, exportSessions, importEvents } from '@turnlog/audit'
import { assistant, assistantCalling, findingLines, seedRealisticSession, toolResult, user } from './audit-fixtures.js'

let store: PostgresStore
useTestStore((t) => ({ store } = t))

const kinds = findingLines

/** Messages created one after the other (strictly increasing createdAt), so no clock_regression is staged by accident. */
function inOrder(...make: (() => Message)[]): Message[] {
  const base = Date.parse('2026-03-01T10:00:00.000Z')
  return make.map((f, i) => {
    const m = f()
    return createMessage(m.payload, { createdAt: new Date(base + i * 1000).toISOString() })
  })
}

describe('transcript: healthy histories are not incidents', () => {
  it('A1: a retried turn (rewound attempt, same user text sent again) against what the model sees is clean; a history transcript too', async () => {
    // given: "hi" and a failed call rewound, "hi" sent again under a new id and answered
    const [hi1, failed, hi2, reply] = inOrder(
      () => user('hi'),
      () => assistantCalling(['call_x']),
      () => user('hi'),
      () => assistant('hello'),
    ) as [Message, Message, Message, Message]
    const s = await store.createSession()
    await store.append(s, [hi1, failed])
    await store.rewind(s, { from: hi1.id }, { reason: 'retry' })
    await store.append(s, [hi2, reply])

    // when: the transcript is what the model sees now (no ids), or the whole history
    const now = await audit(store, s, { transcript: toWire((await store.load(s)).messages) })
    const history = await audit(store, s, { transcript: toWire([hi1, failed, hi2, reply]) })

    // then
    expect(kinds(now.findings)).toEqual([])
    expect(kinds(history.findings)).toEqual([])
  })

  it('A1: still reports a re-sent message the transcript lacks when the transcript holds the attempt by its id', async () => {
    // given
    const [hi1, hi2, reply] = inOrder(
      () => user('hi'),
      () => user('hi'),
      () => assistant('hello'),
    ) as [Message, Message, Message]
    const s = await store.createSession()
    await store.append(s, [hi1])
    await store.rewind(s, { from: hi1.id })
    await store.append(s, [hi2, reply])

    // when: the item names the rewound message: it is that one, not the live copy
    const report = await audit(store, s, { transcript: [{ id: hi1.id, ...hi1.payload }, reply.payload] })

    // then
    expect(kinds(report.findings)).toEqual(['error unexpected_message'])
    expect(report.findings[0]?.messageIds).toEqual([hi2.id])
  })

  it("A1: a compaction's carried-forward copy keeps its summary expected; the realistic session's history and live list stay clean", async () => {
    // given: q1/a1 compacted into a summary that carries a copy of a1 forward
    const [q1, a1, q2, a2, summary] = inOrder(
      () => user('q1'),
      () => assistant('a1'),
      () => user('q2'),
      () => assistant('a2'),
      () => user('[summary] q1/a1'),
    ) as [Message, Message, Message, Message, Message]
    const carried = createMessage(a1.payload)
    const s = await store.createSession()
    await store.append(s, [q1, a1, q2, a2])
    await store.compact(s, { covered: [q1.id, a1.id], summary: [summary, carried] })
    const realistic = await seedRealisticSession(store)

    // when: a history transcript holding a1 (not the summary); the realistic session's history and live list
    const partial = await audit(store, s, { transcript: toWire([a1, q2, a2]) })
    const reports = await Promise.all([
      audit(store, realistic.sessionId, { transcript: toWire(realistic.all) }),
      audit(store, realistic.sessionId, { transcript: realistic.all }),
      audit(store, realistic.sessionId, { transcript: toWire(realistic.live) }),
    ])

    // then
    expect(kinds(partial.findings)).toEqual([])
    expect(reports.map((r) => kinds(r.findings))).toEqual([[], [], []])
  })

  it('A2: skips ephemeral scaffolding in a transcript of serialized messages, and still reports a real lost turn', async () => {
    // given: the runtime nudged the model ("please continue"); flush skipped the nudge
    const [q, a, lostReply] = inOrder(
      () => user('q'),
      () => assistant('a'),
      () => assistant('never written'),
    ) as [Message, Message, Message]
    const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })
    const s = await store.createSession()
    await store.flush(s, [q, nudge, a])

    // when
    const clean = await audit(store, s, { transcript: [q, nudge, a].map((m) => serializeMessage(m)), live: [q, nudge, a] })
    const lossy = await audit(store, s, { transcript: [q, nudge, a, lostReply].map((m) => serializeMessage(m)) })

    // then
    expect(kinds(clean.findings)).toEqual([])
    expect(kinds(lossy.findings)).toEqual(['critical lost_turn not_in_log'])
    expect(lossy.findings[0]?.evidence?.['index']).toBe(3)
  })

  it("A3: a fork's history transcript holding messages the parent compacted before the fork is clean, by id and by content", async () => {
    // given: q1/a1 compacted in the parent, then a fork at a2
    const [q1, a1, q2, a2, summary] = inOrder(
      () => user('q1'),
      () => assistant('a1'),
      () => user('q2'),
      () => assistant('a2'),
      () => user('[summary] q1/a1'),
    ) as [Message, Message, Message, Message, Message]
    const parent = await store.createSession()
    await store.append(parent, [q1, a1, q2, a2])
    await store.compact(parent, { covered: [q1.id, a1.id], summary })
    const fork = await store.fork(parent, { at: a2.id })
    const history = [q1, a1, q2, a2]

    // when
    const ofParent = await audit(store, parent, { transcript: history })
    const byId = await audit(store, fork, { transcript: history })
    const byContent = await audit(store, fork, { transcript: toWire(history) })
    const grandchild = await store.fork(fork, { at: a2.id })
    const twoUp = await audit(store, grandchild, { transcript: history })

    // then
    expect(kinds(ofParent.findings)).toEqual([])
    expect(kinds(byId.findings)).toEqual([])
    expect(kinds(byContent.findings)).toEqual([])
    expect(kinds(twoUp.findings)).toEqual([])
  })

  it('A3: in a fork, still reports an ancestor-compacted id under other content, a turn never stored, and the summary when nothing it covers is there', async () => {
    // given
    const [q1, a1, q2, a2, summary, ghost] = inOrder(
      () => user('q1'),
      () => assistant('a1'),
      () => user('q2'),
      () => assistant('a2'),
      () => user('[summary] q1/a1'),
      () => assistant('ghost'),
    ) as [Message, Message, Message, Message, Message, Message]
    const parent = await store.createSession()
    await store.append(parent, [q1, a1, q2, a2])
    await store.compact(parent, { covered: [q1.id, a1.id], summary })
    const fork = await store.fork(parent, { at: a2.id })

    // when
    const edited = await audit(store, fork, { transcript: [{ id: q1.id, role: 'user', content: 'q1 (edited)' }, a1, q2, a2] })
    const lost = await audit(store, fork, { transcript: toWire([q2, a2, ghost]) })

    // then
    expect(kinds(edited.findings)).toEqual(['error lost_turn content_not_stored'])
    expect(edited.findings[0]?.evidence?.['storedHashes']).toEqual([expect.any(String)])
    expect(kinds(lost.findings)).toEqual(['error unexpected_message', 'critical lost_turn not_in_log'])
    expect(lost.findings[0]?.messageIds).toEqual([summary.id])
  })
})

describe('live: healthy memory is not an incident', () => {
  it('A4: memory holding the redaction placeholder the log serves (reloaded through JSON) is clean, in the session and its fork', async () => {
    // given: q redacted; the agent reloaded its list after the redaction and kept it as JSON
    const [q, a] = inOrder(
      () => user('my card is 4111 1111 1111 1111'),
      () => assistant('noted'),
    ) as [Message, Message]
    const s = await store.createSession()
    await store.append(s, [q, a])
    await store.redact(s, q.id)
    const fork = await store.fork(s, { at: a.id })
    const viaJson = async (id: string): Promise<Message[]> => (await store.load(id)).messages.map((m) => parseMessage(serializeMessage(m)))

    // when
    const main = await audit(store, s, { live: await viaJson(s) })
    const ofFork = await audit(store, fork, { live: await viaJson(fork) })
    const original = await audit(store, s, { live: [q, a] })

    // then
    expect(kinds(main.findings)).toEqual([])
    expect(kinds(ofFork.findings)).toEqual([])
    expect(kinds(original.findings)).toEqual([])
  })

  it('A4: still reports content the log never stored for a redacted message', async () => {
    // given
    const [q, a] = inOrder(
      () => user('secret'),
      () => assistant('noted'),
    ) as [Message, Message]
    const s = await store.createSession()
    await store.append(s, [q, a])
    await store.redact(s, q.id)
    const edited = createMessage({ role: 'user', content: 'secret, edited in memory' }, { id: q.id, createdAt: q.createdAt })

    // when
    const report = await audit(store, s, { live: [edited, a] })

    // then
    expect(kinds(report.findings)).toEqual(['error live_divergence content_differs'])
  })
})

describe('tool-call pairing around rewinds, compactions, syncs and parallel calls', () => {
  it('reports a rewind that cut the result off as unanswered_tool_call, a compaction that took the call as orphan_tool_result', async () => {
    // given
    const [q, call, result, summary] = inOrder(
      () => user('q'),
      () => assistantCalling(['call_r']),
      () => toolResult('call_r'),
      () => assistant('[summary] read a file'),
    ) as [Message, Message, Message, Message]
    const rewound = await store.createSession()
    await store.append(rewound, [q, call, result])
    await store.rewind(rewound, { from: result.id })
    const compacted = await store.createSession()
    const [q2, call2, result2] = inOrder(
      () => user('q'),
      () => assistantCalling(['call_c']),
      () => toolResult('call_c'),
    ) as [Message, Message, Message]
    await store.append(compacted, [q2, call2, result2])
    // compact refuses a split since it became a rule; a history that has one (recorded as an importer does) is audited
    await store.compact(compacted, { covered: [call2.id], summary, allowSplitToolPairs: true })

    // when
    const a = await audit(store, rewound)
    const b = await audit(store, compacted)

    // then
    expect(kinds(a.findings)).toEqual(['warning unanswered_tool_call'])
    expect(a.findings[0]?.messageIds).toEqual([call.id])
    expect(kinds(b.findings)).toEqual(['error orphan_tool_result'])
    expect(b.findings[0]).toMatchObject({ messageIds: [result2.id], evidence: { toolCallId: 'call_c' } })
  })

  it('finds nothing for parallel calls answered in reverse order, with id and with call_id', async () => {
    // given
    const [q, calls, t2, t1, q2, calls2, u2, u1, done] = inOrder(
      () => user('q'),
      () => assistantCalling(['call_1', 'call_2']),
      () => toolResult('call_2'),
      () => toolResult('call_1'),
      () => user('again'),
      () => assistantCalling(['call_3', 'call_4'], 'call_id'),
      () => toolResult('call_4', 'b', 'call_id'),
      () => toolResult('call_3', 'a', 'call_id'),
      () => assistant('done'),
    )
    const s = await store.createSession()
    await store.append(s, [q, calls, t2, t1, q2, calls2, u2, u1, done] as Message[])

    // when
    const report = await audit(store, s)

    // then
    expect(kinds(report.findings)).toEqual([])
  })

  it("reports a sync in a fork that dropped an inherited tool result: unanswered_tool_call and the sync's retraction", async () => {
    // given
    const [q, call, result, a] = inOrder(
      () => user('q'),
      () => assistantCalling(['call_f']),
      () => toolResult('call_f'),
      () => assistant('a'),
    ) as [Message, Message, Message, Message]
    const parent = await store.createSession()
    await store.append(parent, [q, call, result, a])
    const fork = await store.fork(parent, { at: a.id })
    await store.sync(fork, [q, call, a])

    // when
    const report = await audit(store, fork)

    // then
    expect(kinds(report.findings)).toEqual(['warning unanswered_tool_call', 'info sync_retraction'])
    expect(report.findings[1]?.messageIds).toEqual([result.id])
    expect(kinds((await audit(store, parent)).findings)).toEqual([])
  })
})

describe('forks: inherited incidents and lineage', () => {
  it("reports a parent's incidents again in a fork that inherited them; a fork at a compaction summary is clean", async () => {
    // given: a lost reply (q2, q3) and an unanswered call, inherited by a fork at the call
    const [q1, a1, q2, q3, call, summary] = inOrder(
      () => user('q1'),
      () => assistant('a1'),
      () => user('q2'),
      () => user('q3'),
      () => assistantCalling(['call_i']),
      () => assistant('[summary] q1/a1'),
    ) as [Message, Message, Message, Message, Message, Message]
    const parent = await store.createSession()
    await store.append(parent, [q1, a1, q2, q3, call])
    const fork = await store.fork(parent, { at: call.id })
    await store.compact(parent, { covered: [q1.id, a1.id], summary })
    const atSummary = await store.fork(parent, { at: summary.id })

    // when
    const [ofParent, ofFork, ofSummaryFork] = await Promise.all([audit(store, parent), audit(store, fork), audit(store, atSummary)])

    // then
    const expected = ['warning consecutive_user_messages', 'warning unanswered_tool_call']
    expect(kinds(ofParent.findings)).toEqual(expected)
    expect(kinds(ofFork.findings)).toEqual(expected)
    expect(ofFork.findings.map((f) => f.messageIds)).toEqual([[q2.id, q3.id], [call.id]])
    expect(kinds(ofSummaryFork.findings)).toEqual([])
  })

  it('reports no shared_message_id for a fork of a fork under { all: true }', async () => {
    // given: a fresh database, so the audit sees exactly these sessions
    const own = await createTestDatabase()
    const local = await openStore({ connectionString: own.connectionString })
    try {
      const [q1, a1, q2, a2, q3, a3, q4, a4] = inOrder(
        () => user('q1'),
        () => assistant('a1'),
        () => user('q2'),
        () => assistant('a2'),
        () => user('q3'),
        () => assistant('a3'),
        () => user('q4'),
        () => assistant('a4'),
      ) as [Message, Message, Message, Message, Message, Message, Message, Message]
      const root = await local.createSession()
      await local.append(root, [q1, a1, q2, a2])
      const child = await local.fork(root, { at: a2.id })
      await local.append(child, [q3, a3])
      const grandchild = await local.fork(child, { at: a3.id })
      await local.append(grandchild, [q4, a4])

      // when
      const report = await audit(local, { all: true })

      // then
      expect(report.sessionsAudited).toBe(3)
      expect(kinds(report.findings)).toEqual([])
    } finally {
      await local.close()
      await own.drop()
    }
  })
})

describe('export and import keep the evidence', () => {
  it('audits an exported and re-imported session and its fork exactly as the originals (clock regression, lost reply, partial, sync)', async () => {
    // given: a message created before the one the log holds before it, a lost reply, a sync retraction, a partial, a fork
    const own = await createTestDatabase()
    const local = await openStore({ connectionString: own.connectionString })
    try {
      const [early, q1, q2, dropped] = inOrder(
        () => user('created first, appended second'),
        () => user('q1'),
        () => user('q2'),
        () => assistant('dropped by a sync'),
      ) as [Message, Message, Message, Message]
      const stream = createMessage({ role: 'assistant', content: 'Let me expl' }, { status: 'partial' })
      const s = await store.createSession()
      await store.append(s, [q1, early, q2, dropped])
      await store.sync(s, [q1, early, q2])
      await store.append(s, [stream])
      const fork = await store.fork(s, { at: stream.id })
      const lines: string[] = []
      for await (const line of exportSessions(store, { sessionIds: [s, fork] })) lines.push(line)

      // when
      await importEvents(local, lines)
      const original = [await audit(store, s), await audit(store, fork)]
      const imported = [await audit(local, s), await audit(local, fork)]

      // then
      expect(imported.map((r) => r.findings)).toEqual(original.map((r) => r.findings))
      expect(kinds(original[0]?.findings ?? [])).toEqual([
        'warning consecutive_user_messages',
        'warning clock_regression',
        'info sync_retraction',
        'warning partial_never_finalized',
      ])
    } finally {
      await local.close()
      await own.drop()
    }
  })
})

describe('streams finished (or not) through sync', () => {
  it('reports a message the caller still holds as partial after a sync (a stream in progress), not one sync finalized with other content', async () => {
    // given
    const [q] = inOrder(() => user('q'))
    const streaming = createMessage({ role: 'assistant', content: 'Let me' }, { status: 'partial' })
    const s = await store.createSession()
    await store.append(s, [q as Message, streaming])
    const more = createMessage(
      { role: 'assistant', content: 'Let me expl' },
      { id: streaming.id, createdAt: streaming.createdAt, status: 'partial' },
    )
    const final = createMessage({ role: 'assistant', content: 'Let me explain.' }, { id: streaming.id, createdAt: streaming.createdAt })

    // when
    await store.sync(s, [q as Message, more])
    const midStream = await audit(store, s)
    await store.sync(s, [q as Message, final])
    const done = await audit(store, s, { live: [q as Message, final], transcript: [q as Message, final] })

    // then
    expect(kinds(midStream.findings)).toEqual(['warning partial_never_finalized'])
    expect(midStream.findings[0]?.evidence).toMatchObject({ revision: 1 })
    expect(kinds(done.findings)).toEqual([])
  })
})

describe('domain.md incident classes', () => {
  it('cursor drift (#46053): a runtime that appends messages[lastFlushed:] after its list shrank never writes the reply; the audit finds it', async () => {
    // given: flushed 4 messages; a repair merged two, so the list is 4 long again with a new reply at the end
    const [sys, q1, a1, q2, reply] = inOrder(
      () => createMessage({ role: 'system', content: 'be brief' }),
      () => user('q1'),
      () => assistant('a1'),
      () => user('q2'),
      () => assistant('the reply the user saw'),
    ) as [Message, Message, Message, Message, Message]
    const s = await store.createSession()
    let lastFlushed = 0
    const cursorFlush = async (list: Message[]): Promise<void> => {
      await store.append(s, list.slice(lastFlushed))
      lastFlushed = list.length
    }
    await cursorFlush([sys, q1, a1, q2])
    const shrunk = [q1, a1, q2, reply] // the system prompt was merged away
    await cursorFlush(shrunk) // slice(4): nothing
    const next = user('q3')
    await store.append(s, [next])

    // when
    const report = await audit(store, s, { transcript: toWire([...shrunk, next]), live: [...shrunk, next] })

    // then: the reply, lost (transcript, memory, the run q2-q3); the merged-away prompt, still live in the log
    expect(kinds(report.findings)).toEqual([
      'info unexpected_message',
      'warning live_divergence not_in_memory',
      'warning consecutive_user_messages',
      'critical lost_turn not_in_log',
      'error live_divergence not_in_log',
    ])
    expect(report.findings[2]?.messageIds).toEqual([q2.id, next.id])
  })

  it('identity reuse / flag copy (#50372, #57491): a new message under a flushed id is refused and leaves evidence', async () => {
    // given: a shallow copy kept the marker (the id) of a flushed message
    const [q, a] = inOrder(
      () => user('q'),
      () => assistant('a'),
    ) as [Message, Message]
    const s = await store.createSession()
    await store.flush(s, [q, a])
    const copy = createMessage({ role: 'assistant', content: 'a new reply' }, { id: a.id })
    await expect(store.flush(s, [q, a, copy])).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })

    // when
    const report = await audit(store, s, { transcript: [q, a, copy].map((m) => serializeMessage(m)) })

    // then: the refused write, and the content the user saw under that id
    expect(kinds(report.findings)).toEqual(['warning message_conflict_attempt content_mismatch', 'error lost_turn content_not_stored'])
  })

  it('redelivery (#8): with an id derived from the platform id nothing is stored twice; without one the copy is reported', async () => {
    // given
    const first = createMessage({ role: 'user', content: 'hi' }, { externalId: '9001', scope: 'tg:1' })
    const again = createMessage({ role: 'user', content: 'hi' }, { externalId: '9001', scope: 'tg:1' })
    const reply = assistant('hello')
    const stable = await store.createSession()
    await store.append(stable, [first])
    const result = await store.append(stable, [again])
    await store.append(stable, [reply])
    const unstable = await store.createSession()
    await store.append(unstable, [user('hi')])
    await store.append(unstable, [user('hi')])

    // when
    const a = await audit(store, stable)
    const b = await audit(store, unstable)

    // then
    expect(result.duplicates).toEqual([first.id])
    expect(kinds(a.findings)).toEqual([])
    expect(kinds(b.findings)).toEqual(['warning live_duplicate_copy', 'warning consecutive_user_messages'])
  })

  it('wall-clock ordering: a transcript sorted another way is order_mismatch even with identical contents', async () => {
    // given: "yes" said twice
    const [y1, q, y2, a] = inOrder(
      () => user('yes'),
      () => assistant('really?'),
      () => user('yes'),
      () => assistant('ok'),
    ) as [Message, Message, Message, Message]
    const s = await store.createSession()
    await store.append(s, [y1, q, y2, a])

    // when
    const inLogOrder = await audit(store, s, { transcript: toWire([y1, q, y2, a]), checks: ['transcript'] })
    const reordered = await audit(store, s, { transcript: toWire([q, y1, y2, a]), checks: ['transcript'] })

    // then
    expect(kinds(inLogOrder.findings)).toEqual([])
    expect(kinds(reordered.findings)).toEqual(['error order_mismatch'])
  })
})
