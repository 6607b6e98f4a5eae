/**
 * The audit on embedded PGlite (one instance for the file): a clean realistic session, incidents
 * injected through the public API and through raw SQL on the store's own connection, and the
 * reconciliation with an external transcript and with the agent's in-memory list.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, serializeMessage, toWire, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { audit, type Finding } from '@turnlog/audit'
import { sql } from 'kysely'
import { assistant, assistantCalling, seedRealisticSession, toolResult, user, type RealisticSession } from './audit-fixtures.js'
import { itFindsNothingAfterARedaction } from './shared-cases.js'
import { useTestStoreOfKind } from '@turnlog/testing'

let store: PostgresStore

useTestStoreOfKind('pglite', (t) => ({ store } = t))

describe('audit on PGlite', () => {
  it('finds nothing in a clean realistic session, its fork, or the whole store', async () => {
    // given
    const { sessionId, forkId } = await seedRealisticSession(store)

    // when
    const main = await audit(store, sessionId)
    const fork = await audit(store, forkId)
    const all = await audit(store, { all: true })

    // then
    expect(main.findings).toEqual([])
    expect(fork.findings).toEqual([])
    expect(all.findings).toEqual([])
    expect(all.sessionsAudited).toBeGreaterThanOrEqual(2)
  })

  itFindsNothingAfterARedaction(() => store)

  it('reports tool-pairing incidents and an unfinished stream', async () => {
    // given
    const sessionId = await store.createSession()
    const go = user('go') // created first: the log's order is the creation order (no clock_regression)
    const call = assistantCalling(['call_1', 'call_2'])
    const r1 = toolResult('call_1')
    const r1again = toolResult('call_1', 'again')
    const partial = createMessage({ role: 'assistant', content: 'half' }, { status: 'partial' })
    await store.append(sessionId, [go, call, r1, r1again, partial])

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.seqs])).toEqual([
      ['unanswered_tool_call', [2]],
      ['duplicate_tool_result', [3, 4]],
      ['partial_never_finalized', [5]],
    ])
  })

  it('reports a rewritten payload and an edited projection (raw SQL on the store connection)', async () => {
    // given
    const sessionId = await store.createSession()
    const q = user('q')
    const a = assistant('a')
    await store.append(sessionId, [q, a])
    await sql`update turnlog.events set payload = ${'{"role":"user","content":"forged"}'}::json where session_id = ${sessionId} and seq = 1`.execute(
      store.db,
    )
    await sql`delete from turnlog.live_messages where session_id = ${sessionId} and message_id = ${a.id}`.execute(store.db)

    // when
    const report = await audit(store, sessionId)

    // then
    expect(report.findings.map((f) => [f.kind, f.seqs])).toEqual([
      ['chain_break', [1]],
      ['content_hash_mismatch', [1]],
      ['projection_drift', [2]],
    ])
  })
})

const brief = (f: Finding): [string, string, readonly string[]] => [f.kind, f.severity, f.messageIds]

/** A turnlog JSONL transcript (one parsed `serializeMessage` object per message). */
function jsonl(messages: readonly Message[]): unknown[] {
  return messages.map((m) => JSON.parse(serializeMessage(m)) as unknown)
}

describe('audit with options.transcript', () => {
  let seeded: RealisticSession

  beforeAll(async () => {
    seeded = await seedRealisticSession(store)
  })

  it('finds nothing for the full history with ids (rewound, compacted and older revisions included)', async () => {
    // when
    const report = await audit(store, seeded.sessionId, { transcript: jsonl(seeded.all) })

    // then
    expect(report.findings).toEqual([])
  })

  it('finds nothing for the live list as serialized text lines', async () => {
    // when
    const report = await audit(store, seeded.sessionId, { transcript: seeded.live.map(serializeMessage) })

    // then
    expect(report.findings).toEqual([])
  })

  it('finds nothing for the provider (wire) form without ids, matched by content and order', async () => {
    // when
    const report = await audit(store, seeded.sessionId, { transcript: toWire(seeded.live) })

    // then
    expect(report.findings).toEqual([])
  })

  it('reports a reply the user saw but the log never got (a late flush) as a critical lost_turn, with and without ids', async () => {
    // given
    const sessionId = await store.createSession()
    const q = user('Summarise the report')
    const seen = assistant('The report says revenue grew 12 %.')
    await store.flush(sessionId, [q])

    // when
    const byId = await audit(store, sessionId, { transcript: jsonl([q, seen]) })
    const byContent = await audit(store, sessionId, { transcript: toWire([q, seen]) })

    // then
    expect(byId.findings.map(brief)).toEqual([['lost_turn', 'critical', [seen.id]]])
    expect(byContent.findings.map(brief)).toEqual([['lost_turn', 'critical', []]])
    expect(byContent.findings[0]?.evidence).toMatchObject({ index: 1, reason: 'not_in_log', role: 'assistant' })
    expect(byContent.findings[0]?.explanation).toContain('revenue grew')
  })

  it('reports a message whose content changed without a revision as lost_turn (error)', async () => {
    // given: the runtime edited the message in place; the log keeps the old bytes (#92881)
    const sessionId = await store.createSession()
    const q = user('deploy to staging')
    const a = assistant('deployed')
    await store.append(sessionId, [q, a])
    const editedInPlace = { id: q.id, role: 'user', content: 'deploy to production' }

    // when
    const report = await audit(store, sessionId, { transcript: [editedInPlace, { ...a.payload, id: a.id }] })

    // then
    expect(report.findings.map(brief)).toEqual([['lost_turn', 'error', [q.id]]])
    expect(report.findings[0]).toMatchObject({ seqs: [1], evidence: { reason: 'content_not_stored' } })
  })

  it('counts copies: a message said twice in the transcript but stored once is one lost turn', async () => {
    // given
    const sessionId = await store.createSession()
    await store.append(sessionId, [user('yes'), assistant('ok')])

    // when
    const report = await audit(store, sessionId, { transcript: toWire([user('yes'), assistant('ok'), user('yes'), assistant('ok')]) })

    // then
    expect(report.findings.map((f) => [f.kind, f.evidence?.['index']])).toEqual([
      ['lost_turn', 2],
      ['lost_turn', 3],
    ])
  })

  it('reports a live message the transcript lacks (a redelivery stored twice) as unexpected_message', async () => {
    // given
    const sessionId = await store.createSession()
    const sys = createMessage({ role: 'system', content: 'prompt' })
    const q = user('ping')
    const redelivered = user('ping')
    const a = assistant('pong')
    await store.append(sessionId, [sys, q, redelivered, a])

    // when: a UI transcript, without the system prompt
    const report = await audit(store, sessionId, { transcript: jsonl([q, a]), checks: ['transcript'] })

    // then: the system prompt is only info, the stored redelivery an error
    expect(report.findings.map(brief)).toEqual([
      ['unexpected_message', 'info', [sys.id]],
      ['unexpected_message', 'error', [redelivered.id]],
    ])
  })

  it('reports messages in another order than the log as order_mismatch', async () => {
    // given
    const sessionId = await store.createSession()
    const m = [user('q1'), assistant('a1'), user('q2'), assistant('a2'), user('q3')]
    await store.append(sessionId, m)
    const swapped = [m[0], m[1], m[3], m[2], m[4]] as Message[]

    // when
    const byId = await audit(store, sessionId, { transcript: jsonl(swapped) })
    const byContent = await audit(store, sessionId, { transcript: toWire(swapped) })

    // then: one of the two swapped messages is out of place
    for (const report of [byId, byContent]) {
      expect(report.findings).toHaveLength(1)
      expect(report.findings[0]?.kind).toBe('order_mismatch')
      expect([[m[2]?.id], [m[3]?.id]]).toContainEqual(report.findings[0]?.messageIds)
    }
  })

  it('refuses a malformed transcript item with INVALID_INPUT naming it', async () => {
    // when
    const error = await audit(store, seeded.sessionId, { transcript: [{ role: 'user', content: 'ok' }, 42] }).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(error, 'INVALID_INPUT')).toBe(true)
    expect((error as Error).message).toContain('#1')
  })
})

describe('audit with options.live', () => {
  it('finds nothing when memory matches the log (ephemeral scaffolding ignored)', async () => {
    // given
    const { sessionId, live } = await seedRealisticSession(store)
    const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })

    // when
    const report = await audit(store, sessionId, { live: [...live, nudge] })

    // then
    expect(report.findings).toEqual([])
  })

  it('reports each way memory and the log disagree as live_divergence with its reason', async () => {
    // given
    const sessionId = await store.createSession()
    const q1 = user('q1')
    const a1 = assistant('a1')
    const q2 = user('q2')
    const a2 = assistant('a2')
    const dropped = user('q3')
    const a3 = assistant('a3 draft')
    await store.append(sessionId, [q1, a1, q2, a2, dropped, a3])
    await store.revise(sessionId, a3.id, { role: 'assistant', content: 'a3 final' })
    const unflushed = user('q4')
    const editedInPlace = createMessage({ role: 'assistant', content: 'a1 edited' }, { id: a1.id, createdAt: a1.createdAt })
    const memory = [q1, editedInPlace, a2, q2, a3, unflushed] // q2/a2 swapped, `dropped` gone, a3 at revision 0

    // when
    const report = await audit(store, sessionId, { live: memory })

    // then
    const byReason = report.findings.map((f) => [f.evidence?.['reason'], f.severity, f.messageIds[0]])
    expect(report.findings.every((f) => f.kind === 'live_divergence')).toBe(true)
    expect(byReason).toEqual(
      expect.arrayContaining([
        ['content_differs', 'error', a1.id],
        ['content_differs', 'error', a3.id],
        ['not_in_memory', 'warning', dropped.id],
        ['not_in_log', 'error', unflushed.id],
      ]),
    )
    expect(byReason.filter((r) => r[0] === 'order')).toHaveLength(1)
    expect(report.findings).toHaveLength(5)
    expect(report.findings.find((f) => f.messageIds[0] === a3.id)?.evidence).toMatchObject({ memoryRevision: 0 })
  })

  it('reports a message the log rewound but memory still sends as live_divergence (not_live_in_log)', async () => {
    // given
    const sessionId = await store.createSession()
    const q = user('run')
    const failed = assistant('(empty)')
    await store.append(sessionId, [q, failed])
    await store.rewind(sessionId, { after: q.id })

    // when
    const report = await audit(store, sessionId, { live: [q, failed] })

    // then
    expect(report.findings).toEqual([
      expect.objectContaining({
        kind: 'live_divergence',
        severity: 'error',
        messageIds: [failed.id],
        seqs: [2],
        evidence: expect.objectContaining({ reason: 'not_live_in_log', logState: 'retracted' }),
      }),
    ])
  })
})
