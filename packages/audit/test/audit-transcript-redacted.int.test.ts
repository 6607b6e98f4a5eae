/**
 * A transcript of a session with a redacted message (`store.redact`, GDPR) reconciles with the log
 * whichever content it holds for that message: the redaction placeholder the log serves now (`toWire`
 * of `load()`, a UI log refreshed after the redaction) or the original content (a UI log written
 * before it; the log stored it, and the redaction keeps its content hash). Regression for the
 * adversarial finding D3: `toWire(load())` of a redacted session got a critical `lost_turn` and an
 * `unexpected_message`, because matching without ids used the stored (original) content hash only.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, toWire, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { audit, type Finding } from '@turnlog/audit'

let store: PostgresStore
useTestStore((opened) => ({ store } = opened))

const kinds = (findings: readonly Finding[]): string[] =>
  findings.map((f) => `${f.severity} ${f.kind}${typeof f.evidence?.['reason'] === 'string' ? ` ${f.evidence['reason']}` : ''}`)

/** A session of 4 messages whose first (the user's secret) is redacted. */
async function redactedSession(): Promise<{ sessionId: SessionId; original: Message[] }> {
  const sessionId = await store.createSession()
  const original = [
    createMessage({ role: 'user', content: 'my ssn is 123-45-6789' }),
    createMessage({ role: 'assistant', content: 'noted' }),
    createMessage({ role: 'user', content: 'thanks' }),
    createMessage({ role: 'assistant', content: 'you are welcome' }),
  ]
  await store.append(sessionId, original)
  await store.redact(sessionId, original[0]!.id, { reason: 'erasure request' })
  return { sessionId, original }
}

/** What the log serves now, as plain provider messages (no turnlog fields, no memoised hashes). */
async function wireOf(sessionId: string): Promise<Record<string, unknown>[]> {
  return toWire((await store.load(sessionId)).messages) as unknown as Record<string, unknown>[]
}

describe('audit transcript of a redacted session (D3)', () => {
  it('finds nothing when the transcript is what the log serves now (toWire of load: the placeholder)', async () => {
    // given
    const { sessionId } = await redactedSession()
    const transcript = await wireOf(sessionId)
    expect(transcript[0]).toMatchObject({ role: 'user', content: '[redacted]' })

    // when
    const report = await audit(store, sessionId, { transcript })

    // then
    expect(kinds(report.findings)).toEqual([])
  })

  it('finds nothing when the placeholder items carry their message ids', async () => {
    // given: provider messages with the turnlog id as an envelope field
    const { sessionId } = await redactedSession()
    const live = (await store.load(sessionId)).messages
    const transcript = (await wireOf(sessionId)).map((m, i) => ({ id: live[i]!.id, ...m }))

    // when
    const report = await audit(store, sessionId, { transcript })

    // then: not a content_not_stored lost_turn
    expect(kinds(report.findings)).toEqual([])
  })

  it('finds nothing when the transcript holds the original content, stored before the redaction', async () => {
    // given: the UI's copy from before the redaction, with and without ids
    const { sessionId, original } = await redactedSession()

    // when
    const byContent = await audit(store, sessionId, { transcript: toWire(original.map((m) => createMessage(m.payload))) })
    const byId = await audit(store, sessionId, { transcript: original.map((m) => ({ id: m.id, ...m.payload })) })

    // then
    expect(kinds(byContent.findings)).toEqual([])
    expect(kinds(byId.findings)).toEqual([])
  })

  it('still reports a turn the log never stored, and a redacted message the transcript lacks', async () => {
    // given: the placeholder transcript without its last reply, plus a reply the log never stored
    const { sessionId, original } = await redactedSession()
    const served = await wireOf(sessionId)
    const transcript = [...served.slice(0, 3), { role: 'assistant', content: 'a reply nobody stored' }]

    // when
    const report = await audit(store, sessionId, { transcript })

    // then
    expect(kinds(report.findings)).toEqual(['error unexpected_message', 'critical lost_turn not_in_log'])
    expect(report.findings[0]?.messageIds).toEqual([original[3]!.id])

    // and a transcript without the redacted message gets it as unexpected
    const without = await audit(store, sessionId, { transcript: served.slice(1) })
    expect(kinds(without.findings)).toEqual(['error unexpected_message'])
    expect(without.findings[0]?.messageIds).toEqual([original[0]!.id])
  })

  it("finds nothing for a fork's placeholder copies, forked after the redaction or redacted through the parent", async () => {
    // given: one fork made after the redaction (copies marked data.redacted), one made before it (scrubbed with it)
    const parent = await store.createSession()
    const original = [
      createMessage({ role: 'user', content: 'card 4111 1111 1111 1111' }),
      createMessage({ role: 'assistant', content: 'ok' }),
    ]
    await store.append(parent, original)
    const before = await store.fork(parent, { at: original[1]!.id })
    await store.redact(parent, original[0]!.id)
    const after = await store.fork(parent, { at: original[1]!.id })

    // when
    const reports = await Promise.all([before, after].map(async (s) => audit(store, s, { transcript: await wireOf(s) })))

    // then
    for (const [i, s] of [before, after].entries()) {
      expect((await wireOf(s))[0]).toMatchObject({ content: '[redacted]' })
      expect(kinds(reports[i]!.findings)).toEqual([])
    }
  })
})
