import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, isTurnlogError, newSessionId, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase, useTestStore } from '@turnlog/testing'
import { audit, type AuditProgress, type Finding, type FindingKind } from '@turnlog/audit'
import {
  assistant,
  assistantCalling,
  injectAppendedEvent,
  rawSql,
  seedRealisticSession,
  sessionWith,
  system,
  toolResult,
  user,
} from './audit-fixtures.js'
import { itFindsNothingAfterARedaction } from './shared-cases.js'

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

function ofKind(findings: readonly Finding[], kind: FindingKind): Finding[] {
  return findings.filter((f) => f.kind === kind)
}

function kinds(findings: readonly Finding[]): FindingKind[] {
  return findings.map((f) => f.kind)
}

describe('audit of a clean, realistic log', () => {
  it('finds nothing in a session with tool calls, a stream, a rewind, a revision, a compaction and a fork', async () => {
    // given
    const { sessionId, forkId } = await seedRealisticSession(store)

    // when
    const main = await audit(store, sessionId)
    const fork = await audit(store, forkId)

    // then
    expect(main.findings).toEqual([])
    expect(fork.findings).toEqual([])
    expect(main).toMatchObject({
      formatVersion: 1,
      target: sessionId,
      sessionsAudited: 1,
      counts: { bySeverity: { info: 0, warning: 0, error: 0, critical: 0 }, byKind: {} },
    })
    expect(Date.parse(main.generatedAt)).not.toBeNaN()
  })

  itFindsNothingAfterARedaction(() => store)

  it('pages through every session with { all: true }, reporting progress, and finds only the injected incident', async () => {
    // given: a fresh database, so the audit sees exactly these sessions
    const own = await createTestDatabase()
    const local = await openStore({ connectionString: own.connectionString })
    try {
      const { sessionId, forkId } = await seedRealisticSession(local)
      const broken = await local.createSession()
      await local.append(broken, [user('hello'), user('anyone there?')])
      const progress: AuditProgress[] = []

      // when
      const report = await audit(local, { all: true }, { onProgress: (p) => progress.push(p) })

      // then
      expect(report.sessionsAudited).toBe(3)
      expect(report.target).toEqual({ all: true })
      expect(progress.map((p) => p.done)).toEqual([1, 2, 3])
      expect(progress.every((p) => p.total === null)).toBe(true)
      expect(new Set(progress.map((p) => p.sessionId))).toEqual(new Set([sessionId, forkId, broken]))
      expect(report.findings.map((f) => [f.kind, f.sessionId])).toEqual([['consecutive_user_messages', broken]])
      expect(report.counts.byKind).toEqual({ consecutive_user_messages: 1 })
    } finally {
      await local.close()
      await own.drop()
    }
  })
})

describe('audit of every session: ids shared across sessions', () => {
  it('reports an id appended in two sessions without a fork (a same-instant race) as shared_message_id', async () => {
    // given: a fresh database; session B got a copy of A's message written around the store's
    // cross-session check (as two same-instant writers could before 0008; since then only with the claim
    // trigger disabled, or in a log from before it), while the fork's inherited copies are fine
    const own = await createTestDatabase()
    const local = await openStore({ connectionString: own.connectionString })
    try {
      const shared = user('hello from A')
      const a = await local.createSession({ id: '00000000-0000-4000-8000-00000000000a' })
      await local.append(a, [shared, assistant('hi')])
      await local.fork(a, { at: shared.id, id: '00000000-0000-4000-8000-00000000000c' })
      const b = await local.createSession({ id: '00000000-0000-4000-8000-00000000000b' })
      await local.append(b, [system('B starts')])
      await rawSql(own.connectionString, 'alter table turnlog.events disable trigger events_claim_ids')
      await rawSql(
        own.connectionString,
        `
        insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
        select $1, 2, gen_random_uuid(), type, message_id, content_hash, payload, data
          from turnlog.events where session_id = $2 and seq = 1`,
        [b, a],
      )
      await rawSql(own.connectionString, 'alter table turnlog.events enable trigger events_claim_ids')
      await rawSql(own.connectionString, 'update turnlog.sessions set version = 2 where session_id = $1', [b])

      // when
      const report = await audit(local, { all: true })
      const withoutIdentity = await audit(local, { all: true }, { checks: ['chain', 'pairing'] })

      // then
      // (the copy was created before "B starts", which the log holds before it: the clock check sees it too)
      expect(report.findings).toEqual([
        expect.objectContaining({ kind: 'clock_regression', severity: 'warning', sessionId: b, seqs: [1, 2] }),
        expect.objectContaining({
          kind: 'shared_message_id',
          severity: 'error',
          sessionId: b,
          messageIds: [shared.id],
          seqs: [2],
          evidence: expect.objectContaining({ otherSessionId: a }),
        }),
      ])
      expect(withoutIdentity.findings).toEqual([])
    } finally {
      await local.close()
      await own.drop()
    }
  })
})

describe('audit: tampering and lost events (raw SQL as superuser)', () => {
  it('reports an UPDATE of a payload as chain_break and content_hash_mismatch at that seq', async () => {
    // given
    const s = system('s') // messages are created in log order throughout (else: clock_regression)
    const target = user('transfer 10 EUR')
    const sessionId = await sessionWith(store, s, target, assistant('done'))
    await rawSql(
      db.connectionString,
      `update turnlog.events set payload = '{"role":"user","content":"transfer 10000 EUR"}' where session_id = $1 and seq = 2`,
      [sessionId],
    )

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.severity, f.seqs])).toEqual([
      ['chain_break', 'critical', [2]],
      ['content_hash_mismatch', 'critical', [2]],
    ])
    expect(report.findings[0]?.messageIds).toEqual([target.id])
    expect(report.counts.bySeverity.critical).toBe(2)
  })

  it('reports a DELETE in the middle as seq_gap, located at the seq after the gap', async () => {
    // given
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'), user('q2'), assistant('a2'))
    await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = 2', [sessionId])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(report.findings.map((f) => [f.kind, f.seqs, f.evidence?.['expected']])).toEqual([['seq_gap', [3], 2]])
  })

  it('reports a seq stored twice (the primary key dropped, a second seq 2 inserted) as seq_duplicate', async () => {
    // given: a database of its own, whose log lost its (session_id, seq) key
    const own = await createTestDatabase()
    const local = await openStore({ connectionString: own.connectionString })
    try {
      const sessionId = await local.createSession()
      await local.append(sessionId, [user('q1'), assistant('a1'), user('q2')])
      await rawSql(own.connectionString, 'alter table turnlog.events drop constraint events_pkey')
      await rawSql(
        own.connectionString,
        `
        insert into turnlog.events (session_id, seq, event_id, type, message_id, data)
        select session_id, seq, gen_random_uuid(), 'message_finalized', message_id, '{}'
          from turnlog.events where session_id = $1 and seq = 2`,
        [sessionId],
      )

      // when
      const report = await audit(local, sessionId, { checks: ['chain'] })

      // then
      expect(report.findings.map((f) => [f.kind, f.severity, f.seqs])).toEqual([['seq_duplicate', 'critical', [2]]])
    } finally {
      await local.close()
      await own.drop()
    }
  })

  it('reports a DELETE of the last event as truncated_log', async () => {
    // given: the assistant's last reply is deleted
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'), user('q2'), assistant('a2'))
    await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = 4', [sessionId])

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'truncated_log',
        severity: 'critical',
        seqs: [4],
        evidence: expect.objectContaining({ expected: 4, actual: 3 }),
      }),
    ])
  })

  it('reports an event inserted around the store as version_mismatch', async () => {
    // given
    const sessionId = await sessionWith(store, user('q1'))
    await injectAppendedEvent(db.connectionString, sessionId, 2, 'assistant')

    // when
    const report = await audit(store, sessionId, { checks: ['chain'] })

    // then
    expect(kinds(report.findings)).toEqual(['version_mismatch'])
  })

  it('reports an edited projection table as projection_drift naming the missing message', async () => {
    // given
    const q = user('q1')
    const a = assistant('a1')
    const sessionId = await sessionWith(store, q, a)
    await rawSql(db.connectionString, 'delete from turnlog.live_messages where session_id = $1 and message_id = $2', [sessionId, a.id])

    // when
    const report = await audit(store, sessionId)

    // then
    expect(kinds(report.findings)).toEqual(['projection_drift'])
    expect(report.findings[0]).toMatchObject({
      severity: 'error',
      messageIds: [a.id],
      seqs: [2],
      evidence: { missing: [a.id], expectedCount: 2, actualCount: 1 },
    })
  })

  it('reports an event the fold cannot apply as fold_anomaly at its seq', async () => {
    // given: a rewind naming a message that never existed, written around the store (the version moved
    // too), in the chain's text format (JSON.stringify output) so that only the fold objects to it
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'))
    const ghost = createMessage({ role: 'user', content: 'x' }).id
    await rawSql(
      db.connectionString,
      `
      insert into turnlog.events (session_id, seq, event_id, type, data)
      values ($1, 3, gen_random_uuid(), 'messages_retracted', $2::json)`,
      [sessionId, JSON.stringify({ ids: [ghost], target: { from: ghost } })],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 3 where session_id = $1', [sessionId])

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'fold_anomaly',
        severity: 'error',
        seqs: [3],
        messageIds: [ghost],
        evidence: { anomaly: 'unknown_message' },
      }),
    ])
  })

  it('reports a log the fold cannot read at all as one fold_anomaly (fold_failed), and still checks the rest', async () => {
    // given: a rewind event without its ids, written around the store
    const sessionId = await sessionWith(store, user('q1'), assistant('a1'))
    await rawSql(
      db.connectionString,
      `insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, 3, gen_random_uuid(), 'messages_retracted', '{}')`,
      [sessionId],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 3 where session_id = $1', [sessionId])

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([expect.objectContaining({ kind: 'fold_anomaly', seqs: [], evidence: { anomaly: 'fold_failed' } })])
    expect(report.findings[0]?.explanation).toMatch(/^the log cannot be folded: /)
    const rebuild = await store.rebuild({ sessionId, verify: true }).catch((e: unknown) => e)
    expect(isTurnlogError(rebuild, 'CORRUPT_LOG')).toBe(true)
  })
})

describe('audit: live-view incidents (through the public API)', () => {
  it('reports a tool call with no result (a crash between call and result) as unanswered_tool_call', async () => {
    // given
    const ask = user('run it')
    const call = assistantCalling(['call_crash'])
    const sessionId = await sessionWith(store, ask, call)

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'unanswered_tool_call',
        severity: 'warning',
        messageIds: [call.id],
        seqs: [2],
        evidence: { toolCallId: 'call_crash', format: 'openai-chat' },
      }),
    ])
  })

  it('reports a result without a call as orphan_tool_result, matching call_id too', async () => {
    // given: a paired call by call_id, and a result for a call that is not there
    // (created in log order: a message created before the ones stored ahead of it is a clock_regression)
    const before = [user('go'), assistantCalling(['c1'], 'call_id'), toolResult('c1', 'ok', 'call_id')]
    const orphan = toolResult('call_gone')
    const sessionId = await sessionWith(store, ...before, orphan, assistant('done'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.messageIds, f.seqs])).toEqual([['orphan_tool_result', [orphan.id], [4]]])
  })

  it('reports two results for one call as duplicate_tool_result', async () => {
    // given: a retried tool wrote its result twice
    const go = user('go')
    const call = assistantCalling(['call_07'])
    const first = toolResult('call_07', 'ok')
    const retry = toolResult('call_07', 'ok (retry)')
    const sessionId = await sessionWith(store, go, call, first, retry, assistant('done'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.messageIds, f.seqs])).toEqual([['duplicate_tool_result', [first.id, retry.id], [3, 4]]])
  })

  it('reports two tool calls with one id in one assistant message as duplicate_tool_call (OpenAI refuses the request; one result "pairs" both)', async () => {
    // given: a provider returned call_07 twice in one message; the tool ran once
    const go = user('go')
    const call = assistantCalling(['call_07', 'call_07'])
    const result = toolResult('call_07', 'ok')
    const sessionId = await sessionWith(store, go, call, result, assistant('done'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.seqs])).toEqual([
      ['duplicate_tool_call', 'error', [call.id], [2]],
    ])
    expect(report.findings[0]?.evidence).toEqual({ toolCallId: 'call_07', calls: 2, format: 'openai-chat' })
    expect(report.findings[0]?.explanation).toBe(`tool call call_07 is made 2 times in assistant message ${call.id}`)
  })

  it('reports a later assistant message that calls an id again before its result as duplicate_tool_call, naming both messages', async () => {
    // given: turn 2 repeats turn 1's call while it is still open
    const go = user('a')
    const first = assistantCalling(['call_0'])
    const again = assistantCalling(['call_0'])
    const sessionId = await sessionWith(store, go, first, again, toolResult('call_0', 'a'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(
      report.findings.filter((f) => f.kind !== 'live_duplicate_copy').map((f) => [f.kind, f.messageIds, f.seqs, f.explanation]),
    ).toEqual([['duplicate_tool_call', [first.id, again.id], [2, 3], 'tool call call_0 is made 2 times by 2 live messages']])
  })

  it('reports an id called again after its result (a provider that numbers calls per turn) as reused_tool_call_id, a warning, and nothing else', async () => {
    // given: turn 2 reuses turn 1's call id for another call, both answered
    const go = user('a')
    const first = assistantCalling(['call_0'])
    const a = toolResult('call_0', 'a')
    const again = createMessage({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.md"}' } }],
    })
    const sessionId = await sessionWith(store, go, first, a, again, toolResult('call_0', 'b'), assistant('done'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.seqs, f.explanation])).toEqual([
      [
        'reused_tool_call_id',
        'warning',
        [first.id, again.id],
        [2, 4],
        "tool call id call_0 is used for 2 calls, each after the previous one's result",
      ],
    ])
    expect(report.findings[0]?.evidence).toEqual({ toolCallId: 'call_0', calls: 2, format: 'openai-chat' })
  })

  it('reports a re-inserted transcript (#92231) as live_duplicate_copy per content, and the doubled tool results', async () => {
    // given: the runtime reloads its messages without their ids and flushes them again as new messages
    const original = [system('be brief'), user('read a.md'), assistantCalling(['call_a']), toolResult('call_a'), assistant('it says hi')]
    const sessionId = await sessionWith(store, ...original)
    const reloaded = (await store.load(sessionId)).messages.map((m) => createMessage(m.payload))
    await store.flush(sessionId, [...original, ...reloaded])

    // when
    const report = await audit(store, sessionId)

    // then
    const copies = ofKind(report.findings, 'live_duplicate_copy')
    expect(copies).toHaveLength(5)
    expect(copies.map((f) => f.messageIds)).toEqual(original.map((m, i) => [m.id, reloaded[i]?.id]))
    expect(copies.map((f) => f.seqs)).toEqual(original.map((_, i) => [i + 1, i + 6]))
    expect(copies.map((f) => f.severity)).toEqual(['error', 'warning', 'error', 'error', 'warning'])
    expect(kinds(report.findings).filter((k) => k !== 'live_duplicate_copy')).toEqual(['reused_tool_call_id'])
  })

  it('compares the conversation of a chat message, not fields beside it: a re-insert that dropped bookkeeping is still a copy; two redacted messages are not', async () => {
    // given: copies that lost a runtime's bookkeeping field, and two different messages redacted
    const asked = createMessage({ role: 'user', content: 'What is 2+3?', hermes: { token_count: 7 } } as never)
    const answered = createMessage({ role: 'assistant', content: '5', reasoning_content: 'add' } as never)
    const [secretA, secretB] = [user('my card is 4111'), user('my pin is 1234')]
    // two different refusals: their content is null, what they said is in `refusal`
    const refusals = ['I cannot help with that card.', 'I cannot share a PIN.'].map((refusal) =>
      createMessage({ role: 'assistant', content: null, refusal } as never),
    )
    const sessionId = await sessionWith(store, asked, answered, secretA, refusals[0] as Message, secretB, refusals[1] as Message)
    await store.append(sessionId, [
      createMessage({ role: 'user', content: 'What is 2+3?' }),
      createMessage({ role: 'assistant', content: '5' }),
    ])
    for (const m of [secretA, secretB]) await store.redact(sessionId, m.id)

    // when
    const report = await audit(store, sessionId)

    // then: the re-inserted question and answer, each once; the two placeholders are not copies of each
    // other, nor the two refusals
    const copies = ofKind(report.findings, 'live_duplicate_copy')
    const live = (await store.load(sessionId)).messages
    expect(copies.map((f) => f.messageIds)).toEqual([
      [asked.id, live[6]?.id],
      [answered.id, live[7]?.id],
    ])
    expect(copies[0]?.evidence).toMatchObject({ contentHash: contentHash(asked), copies: 2 })
  })

  it('does not report a compaction that carries a copy of a covered message forward', async () => {
    // given: the summary list repeats the last covered answer under a new id; the original is compacted
    const q = user('q')
    const a = assistant('the answer')
    const sessionId = await sessionWith(store, q, a)
    await store.compact(sessionId, { covered: [q.id, a.id], summary: [user('[CONTEXT COMPACTION] asked q'), createMessage(a.payload)] })
    await store.append(sessionId, [user('next'), assistant('sure')])

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([])
  })

  it('reports two user messages with no reply between them (a lost reply) as consecutive_user_messages', async () => {
    // given
    const s = system('s')
    const u1 = user('first question')
    const u2 = user('hello?')
    const sessionId = await sessionWith(store, s, u1, u2, assistant('sorry, here'))

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({ kind: 'consecutive_user_messages', severity: 'warning', messageIds: [u1.id, u2.id], seqs: [2, 3] }),
    ])
  })

  it('reports a stream that was never finalized as partial_never_finalized', async () => {
    // given
    const ask = user('explain')
    const partial = createMessage({ role: 'assistant', content: 'Let me expl' }, { status: 'partial' })
    const sessionId = await sessionWith(store, ask, partial)

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({ kind: 'partial_never_finalized', severity: 'warning', messageIds: [partial.id], seqs: [2] }),
    ])
  })

  it('reports each refused conflicting write (an in-place edit, #92881; a foreign id) as message_conflict_attempt', async () => {
    // given
    const q = user('what is 2+2?')
    const sessionId = await sessionWith(store, q, assistant('4'))
    const edited = createMessage({ role: 'user', content: 'what is 2+3?' }, { id: q.id })
    const refused = await store.append(sessionId, [edited]).catch((e: unknown) => e)
    const other = await sessionWith(store, user('elsewhere'))
    const foreign = await store.append(other, [q]).catch((e: unknown) => e)

    // when
    const report = await audit(store, sessionId)
    const otherReport = await audit(store, other)

    // then
    expect(isTurnlogError(refused, 'MESSAGE_CONFLICT')).toBe(true)
    expect(isTurnlogError(foreign, 'MESSAGE_CONFLICT')).toBe(true)
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'message_conflict_attempt',
        messageIds: [q.id],
        seqs: [1],
        evidence: expect.objectContaining({ reason: 'content_mismatch' }),
      }),
    ])
    expect(otherReport.findings).toEqual([
      expect.objectContaining({
        kind: 'message_conflict_attempt',
        messageIds: [q.id],
        evidence: expect.objectContaining({ reason: 'foreign_session', otherSessionId: sessionId }),
      }),
    ])
  })
})

describe('audit options and errors', () => {
  it('runs only the selected checks', async () => {
    // given: an unanswered call and two user messages in a row
    const sessionId = await sessionWith(store, user('a'), user('b'), assistantCalling(['call_x']))

    // when
    const all = await audit(store, sessionId)
    const pairingOnly = await audit(store, sessionId, { checks: ['pairing'] })

    // then
    expect(kinds(all.findings).sort()).toEqual(['consecutive_user_messages', 'unanswered_tool_call'])
    expect(kinds(pairingOnly.findings)).toEqual(['unanswered_tool_call'])
  })

  it('refuses an unknown check, a transcript with { all: true }, and an unknown session', async () => {
    // given
    const sessionId = await sessionWith(store, user('a'))

    // when
    const unknownCheck = await audit(store, sessionId, { checks: ['nope' as never] }).catch((e: unknown) => e)
    const allWithTranscript = await audit(store, { all: true }, { transcript: [] }).catch((e: unknown) => e)
    const missing = await audit(store, newSessionId()).catch((e: unknown) => e)
    // a sparse transcript (found by bad-input.prop seed 1213365198): its hole is an item that is not an object
    // eslint-disable-next-line no-sparse-arrays
    const sparse = await audit(store, sessionId, { transcript: [, user('b').payload] }).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(sparse, 'INVALID_INPUT')).toBe(true)
    expect((sparse as { message: string }).message).toContain('item #0 is not an object')
    expect(isTurnlogError(unknownCheck, 'INVALID_INPUT')).toBe(true)
    expect(isTurnlogError(allWithTranscript, 'INVALID_INPUT')).toBe(true)
    expect(isTurnlogError(missing, 'SESSION_NOT_FOUND')).toBe(true)
  })
})
