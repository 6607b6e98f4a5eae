import { describe, expect, it } from '@jest/globals'
import { createMessage, toWire, type Message, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { type TestDatabase, useTestStore } from '@turnlog/testing'
import { audit, exitCodeFor, verifyChain, type Finding } from '@turnlog/audit'
import {
  assistant,
  eventIdAt,
  rawSql,
  rawSqlBefore0006,
  sessionWith,
  system,
  toolResult,
  assistantCalling,
  user,
} from './audit-fixtures.js'

// Adversarial checks of the promises of docs/audit.md that the other audit tests leave loose,
// lost and duplicated turns first. Tampering runs as the test database's superuser.

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

/** Deletes the events of `sessionId` at `seqs` around the store. */
async function deleteSeqs(sessionId: string, seqs: readonly number[]): Promise<void> {
  await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = any($2::bigint[])', [sessionId, seqs])
}

/**
 * `store` whose `events()` stream lets a writer append `late` once the stored events were read: the
 * stream then yields the late event too (`sees: true`, a page read after the append) or ends without it.
 */
function storeWithLateAppend(late: Message, sees: boolean): PostgresStore {
  const events = async function* (sessionId: string): AsyncGenerator<StoredEvent> {
    let last = 0
    for await (const e of store.events(sessionId)) {
      last = e.seq
      yield e
    }
    await store.append(sessionId, [late])
    if (!sees) return
    for await (const e of store.events(sessionId)) if (e.seq > last) yield e
  }
  return new Proxy(store, {
    get(target, key): unknown {
      if (key === 'events') return events
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}

function summary(findings: readonly Finding[]): unknown[] {
  return findings.map((f) => [f.kind, f.severity, f.seqs, f.evidence?.['reason'] ?? f.evidence?.['break'] ?? null])
}

describe('lost turns: events deleted from the log', () => {
  it('reports a whole turn deleted from the middle as one critical seq_gap at the next seq, naming its event and message', async () => {
    // given: the second turn (seqs 3 and 4) is deleted
    const [q1, a1, q2, a2, q3, a3] = [user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3'), assistant('a3')]
    const sessionId = await sessionWith(store, q1, a1, q2, a2, q3, a3)
    const e5 = await eventIdAt(db.connectionString, sessionId, 5)
    await deleteSeqs(sessionId, [3, 4])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then: one finding, at the first seq after the gap, whose expected is the first missing seq
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'seq_gap',
        severity: 'critical',
        seqs: [5],
        eventIds: [e5],
        messageIds: [q3.id],
        evidence: { break: 'seq_gap', expected: 3, actual: 5, type: 'message_appended' },
      }),
    ])
    expect(report.findings[0]?.explanation).toContain('3–4')
    expect(exitCodeFor(report, 'critical')).toBe(1)
  })

  it('reports the head of the log deleted as seq_gap with evidence.break missing_genesis and expected 1', async () => {
    // given: the first user message (seq 1) is deleted
    const [q1, a1, q2] = [user('q1'), assistant('a1'), user('q2')]
    const sessionId = await sessionWith(store, q1, a1, q2)
    await deleteSeqs(sessionId, [1])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'seq_gap',
        severity: 'critical',
        seqs: [2],
        messageIds: [a1.id],
        evidence: expect.objectContaining({ break: 'missing_genesis', expected: 1, actual: 2 }),
      }),
    ])
  })

  it('reports the last turn deleted as one truncated_log with the first missing seq, no event id and the count', async () => {
    // given: the last turn (seqs 3 and 4) is deleted
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'), user('q2'), assistant('a2'))
    await deleteSeqs(sessionId, [3, 4])

    // when
    const report = await audit(store, sessionId)

    // then: only the truncation (the fold of the remaining log is clean, the projection is not checked against it here)
    const truncated = report.findings.filter((f) => f.kind === 'truncated_log')
    expect(truncated).toEqual([
      expect.objectContaining({
        severity: 'critical',
        seqs: [3],
        eventIds: [],
        messageIds: [],
        evidence: { break: 'truncated', expected: 4, actual: 2 },
      }),
    ])
    expect(truncated[0]?.explanation).toContain('2 event(s) at the tail were deleted')
    expect(report.findings.map((f) => f.kind)).not.toContain('seq_gap')
  })

  it('reports a log deleted whole (the session row kept) as truncated_log at seq 1', async () => {
    // given
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'))
    await deleteSeqs(sessionId, [1, 2])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(summary(report.findings)).toEqual([['truncated_log', 'critical', [1], 'truncated']])
    expect(report.findings[0]?.evidence).toEqual({ break: 'truncated', expected: 2, actual: 0 })
  })

  it('reports a gap and a truncated tail in one log as two findings, in seq order', async () => {
    // given: seq 2 and the tail (seq 5) are deleted
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3'))
    await deleteSeqs(sessionId, [2, 5])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(summary(report.findings)).toEqual([
      ['seq_gap', 'critical', [3], 'seq_gap'],
      ['truncated_log', 'critical', [5], 'truncated'],
    ])
  })

  it('reports events inserted around the store as version_mismatch at the first seq beyond the version', async () => {
    // given: two events copied in at seqs 3 and 4 with raw SQL (the trigger links them; the version stays 2)
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'))
    await rawSql(
      db.connectionString,
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
       select session_id, seq + 2, gen_random_uuid(), type, gen_random_uuid(), content_hash, payload, data
         from turnlog.events where session_id = $1 order by seq`,
      [sessionId],
    )

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'version_mismatch',
        severity: 'critical',
        seqs: [3],
        eventIds: [],
        evidence: { break: 'version_mismatch', expected: 2, actual: 4 },
      }),
    ])
  })

  it('reports no truncation and no version mismatch when a writer appends while the audit streams (both versions read around the stream)', async () => {
    for (const sees of [true, false]) {
      // given: a writer appends a turn while the events are streamed; the stream sees it or not
      const sessionId = await sessionWith(store, user('q1'), assistant('a1'))

      // when
      const report = await audit(storeWithLateAppend(user(`late ${sees}`), sees), sessionId, { checks: ['chain'] })
      const chain = await verifyChain(storeWithLateAppend(user(`later ${sees}`), sees), sessionId)

      // then
      expect([sees, report.findings]).toEqual([sees, []])
      expect([sees, chain.ok, chain.breaks]).toEqual([sees, true, []])
    }
  })

  it('reports the turns a deletion lost, against the transcript the user saw, as critical lost_turn (with ids and without)', async () => {
    // given: the user saw q1 a1 q2 a2; the log lost q2 and a2 (seqs 3 and 4 deleted)
    const [q1, a1, q2, a2] = [user('q1'), assistant('a1'), user('q2'), assistant('a2')]
    const sessionId = await sessionWith(store, q1, a1, q2, a2)
    await deleteSeqs(sessionId, [3, 4])
    const transcript = [q1, a1, q2, a2]

    // when
    const byId = await audit(store, sessionId, { transcript: transcript.map((m) => ({ ...m.payload, id: m.id })) })
    const byContent = await audit(store, sessionId, { transcript: toWire(transcript) })

    // then
    for (const report of [byId, byContent]) {
      const lost = report.findings.filter((f) => f.kind === 'lost_turn')
      expect(lost.map((f) => [f.severity, f.evidence?.['index'], f.evidence?.['reason'], f.evidence?.['role']])).toEqual([
        ['critical', 2, 'not_in_log', 'user'],
        ['critical', 3, 'not_in_log', 'assistant'],
      ])
      expect(report.findings.map((f) => f.kind)).toContain('truncated_log')
      expect(report.findings.map((f) => f.kind)).not.toContain('unexpected_message')
    }
  })

  it('does not report a rewound or compacted message of the transcript as lost', async () => {
    // given: the transcript holds a turn the log rewound and a turn it compacted (both stored, not live)
    const [q1, a1, q2, bad] = [user('q1'), assistant('a1'), user('q2'), assistant('a bad reply')]
    const sessionId = await sessionWith(store, q1, a1, q2, bad)
    await store.rewind(sessionId, { after: q2.id })
    const good = assistant('a good reply')
    await store.append(sessionId, [good])
    const note = user('[CONTEXT COMPACTION] q1 answered')
    await store.compact(sessionId, { covered: [q1.id, a1.id], summary: note })

    // when: the history the UI kept, in the wire form (no ids)
    const report = await audit(store, sessionId, { transcript: toWire([q1, a1, q2, bad, good]), checks: ['transcript'] })

    // then
    expect(report.findings).toEqual([])
  })
  it('expects a placed compaction summary only when the transcript has a message it covers', async () => {
    // given: q1 a1 compacted into a summary, then q2 a2
    const [q1, a1, q2, a2] = [user('q1'), assistant('a1'), user('q2'), assistant('a2')]
    const sessionId = await sessionWith(store, q1, a1)
    const note = user('[CONTEXT COMPACTION] q1 answered')
    await store.compact(sessionId, { covered: [q1.id, a1.id], summary: note })
    await store.append(sessionId, [q2, a2])

    // when: a history transcript (covered messages, no summary), and one that lacks the covered turn too
    const history = await audit(store, sessionId, { transcript: toWire([q1, a1, q2, a2]), checks: ['transcript'] })
    const lastTurnOnly = await audit(store, sessionId, { transcript: toWire([q2, a2]), checks: ['transcript'] })

    // then
    expect(history.findings).toEqual([])
    expect(summary(lastTurnOnly.findings)).toEqual([['unexpected_message', 'error', [3], null]])
    expect(lastTurnOnly.findings[0]?.messageIds).toEqual([note.id])
  })
})

describe('duplicated turns: copies live under new ids', () => {
  it('reports a redelivered user message as one live_duplicate_copy (warning) and, against the transcript, one unexpected_message (error)', async () => {
    // given: the platform redelivered q under a new id and the runtime answered twice
    const [q, a] = [user('what time is it?'), assistant('10:00')]
    const copy = createMessage(q.payload)
    const again = assistant('10:01')
    const sessionId = await sessionWith(store, q, a, copy, again)

    // when
    const report = await audit(store, sessionId, { transcript: toWire([q, a]).map((p, i) => ({ ...p, id: [q, a][i]?.id })) })

    // then
    const copies = report.findings.filter((f) => f.kind === 'live_duplicate_copy')
    expect(copies).toEqual([
      expect.objectContaining({
        severity: 'warning',
        messageIds: [q.id, copy.id],
        seqs: [1, 3],
        evidence: expect.objectContaining({ copies: 2, role: 'user' }),
      }),
    ])
    const unexpected = report.findings.filter((f) => f.kind === 'unexpected_message')
    expect(unexpected.map((f) => [f.severity, f.messageIds, f.seqs, f.evidence?.['livePosition'], f.evidence?.['role']])).toEqual([
      ['error', [copy.id], [3], 2, 'user'],
      ['error', [again.id], [4], 3, 'assistant'],
    ])
  })

  it('reports three live copies as one finding with copies: 3, and a copied system prompt or tool result as an error', async () => {
    // given
    const prompt = system('you are terse')
    const call = assistantCalling(['call_x'])
    const result = toolResult('call_x')
    const yes = user('yes')
    const sessionId = await sessionWith(
      store,
      prompt,
      createMessage(prompt.payload),
      yes,
      call,
      result,
      createMessage(result.payload),
      assistant('ok'),
      createMessage(yes.payload),
      assistant('ok.'),
      createMessage(yes.payload),
      assistant('ok!'),
    )

    // when
    const report = await audit(store, sessionId, { checks: ['duplicates'] })

    // then
    expect(report.findings.map((f) => [f.severity, f.seqs, f.evidence?.['copies'], f.evidence?.['role']])).toEqual([
      ['error', [1, 2], 2, 'system'],
      ['warning', [3, 8, 10], 3, 'user'],
      ['error', [5, 6], 2, 'tool'],
    ])
  })

  it('does not report a copy whose original was rewound (only the live view counts)', async () => {
    // given: a reply written, rewound, and written again under a new id with the same content
    const [q, a] = [user('q'), assistant('same words')]
    const sessionId = await sessionWith(store, q, a)
    await store.rewind(sessionId, { after: q.id })
    await store.append(sessionId, [createMessage(a.payload)])

    // when
    const report = await audit(store, sessionId, { checks: ['duplicates'] })

    // then
    expect(report.findings).toEqual([])
  })

  it('reports a run of three user messages once (count 3), not broken by system or tool messages, ended by a compaction summary', async () => {
    // given: u1, system, u2, tool result, u3 (one run); then a compaction summary (a user message) followed by u4
    const [u1, u2, u3] = [user('u1'), user('u2'), user('u3')]
    const call = assistantCalling(['call_t'])
    const sessionId = await sessionWith(store, user('first'), call, u1, system('note'), u2, toolResult('call_t'), u3)
    const [old1, old2] = [user('old q'), assistant('old a')]
    await store.append(sessionId, [assistant('reply'), old1, old2])
    await store.compact(sessionId, { covered: [old1.id, old2.id], summary: user('[CONTEXT COMPACTION] old q answered') })
    await store.append(sessionId, [user('u4'), assistant('fine')])

    // when
    const report = await audit(store, sessionId, { checks: ['turns'] })

    // then: "first" is closed by the tool call; u4 is alone after the summary
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.evidence])).toEqual([
      ['consecutive_user_messages', 'warning', [u1.id, u2.id, u3.id], { count: 3 }],
    ])
  })
})

describe('turns that left the live list through sync', () => {
  it('reports a sync that lost four messages as one info sync_retraction, all four in live order, quoting the first three', async () => {
    // given: the runtime's list lost everything after the first turn
    const [q1, a1, q2, a2, q3, a3] = [user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3'), assistant('a3')]
    const sessionId = await sessionWith(store, q1, a1, q2, a2, q3, a3)
    const synced = await store.sync(sessionId, [q1, a1])

    // when
    const report = await audit(store, sessionId, { checks: ['sync'] })

    // then
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.seqs, f.evidence])).toEqual([
      [
        'sync_retraction',
        'info',
        [q2.id, a2.id, q3.id, a3.id],
        [synced.version],
        { version: synced.version, retracted: [q2.id, a2.id, q3.id, a3.id] },
      ],
    ])
    const explanation = report.findings[0]?.explanation ?? ''
    expect([q2.id, a2.id, q3.id].every((id) => explanation.includes(id))).toBe(true)
    expect(explanation).not.toContain(a3.id)
    expect(exitCodeFor(report, 'warning')).toBe(0)
  })
})

describe('a log the projection cannot follow (docs/schema.md, "live_messages"): one id both a copy and another append, written before 0006', () => {
  it('an inherited copy of an id the session no longer shows live, written around the store: fold_anomaly (duplicate_append) and projection_drift', async () => {
    // given: a turn, rewound, then a raw "inherited copy" of its first message
    const [q, a] = [user('q'), assistant('a')]
    const sessionId = await sessionWith(store, q, a)
    await store.rewind(sessionId, { from: q.id })
    await rawSqlBefore0006(
      db.connectionString,
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
       select session_id, 4, gen_random_uuid(), type, message_id, content_hash, payload,
              json_build_object('createdAt', data->>'createdAt', 'inheritedFrom', json_build_object('sessionId', $1::text, 'seq', 1))
         from turnlog.events where session_id = $1::uuid and seq = 1`,
      [sessionId],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 4 where session_id = $1', [sessionId])

    // when
    const report = await audit(store, sessionId)

    // then: the table shows the copy live, the fold skips it, and the audit says both
    expect((await store.load(sessionId)).messages.map((m) => m.id)).toEqual([q.id])
    const kinds = report.findings.map((f) => [f.kind, f.severity])
    expect(kinds).toEqual(
      expect.arrayContaining([
        ['fold_anomaly', 'error'],
        ['projection_drift', 'error'],
      ]),
    )
    const anomaly = report.findings.find((f) => f.kind === 'fold_anomaly')
    expect(anomaly?.seqs).toEqual([4])
    expect(JSON.stringify(anomaly)).toContain('duplicate_append')
  })

  it('an original append of an id the session holds as a copy no longer live, written around the store: fold_anomaly (duplicate_append) and projection_drift', async () => {
    // given: a turn, a raw "inherited copy" of a new id (content of the first message), rewound, then a raw original append of that id
    const [q, a] = [user('q'), assistant('a')]
    const sessionId = await sessionWith(store, q, a)
    const copyId = createMessage({ role: 'user', content: 'q' }).id
    await rawSqlBefore0006(
      db.connectionString,
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
       select session_id, 3, gen_random_uuid(), type, $2::uuid, content_hash, payload,
              json_build_object('createdAt', data->>'createdAt', 'inheritedFrom', gen_random_uuid())
         from turnlog.events where session_id = $1::uuid and seq = 1`,
      [sessionId, copyId],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 3 where session_id = $1', [sessionId])
    await store.rewind(sessionId, { from: copyId })
    await rawSqlBefore0006(
      db.connectionString,
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
       select session_id, 5, gen_random_uuid(), type, message_id, content_hash, payload, json_build_object('createdAt', data->>'createdAt')
         from turnlog.events where session_id = $1::uuid and seq = 3`,
      [sessionId],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 5 where session_id = $1', [sessionId])

    // when
    const report = await audit(store, sessionId)

    // then: the table shows the id live again, the fold skips the second append, and the audit says both
    expect((await store.load(sessionId)).messages.map((m) => m.id)).toEqual([q.id, a.id, copyId])
    expect(report.findings.map((f) => [f.kind, f.severity])).toEqual(
      expect.arrayContaining([
        ['fold_anomaly', 'error'],
        ['projection_drift', 'error'],
      ]),
    )
    const anomaly = report.findings.find((f) => f.kind === 'fold_anomaly')
    expect(anomaly?.seqs).toEqual([5])
    expect(JSON.stringify(anomaly)).toContain('duplicate_append')
  })
})
