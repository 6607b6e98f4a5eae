/**
 * `audit(store, id, { live })` when the agent's in-memory list holds one message more than once (the
 * domain brief's "copies": a shallow copy pushed again, a transcript re-inserted into memory with the
 * same ids). The model is sent it twice while the log, rightly, holds it once (flush dedupes by id).
 * Regression: the audit reported the later copy as `live_divergence` with reason `order` ("is at
 * in-memory position 2 but live position 1: out of order"), which names no real reordering; it is now
 * `duplicate_in_memory` (audit.md, `live_divergence`), and the order check leaves the copies out.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { audit } from '@turnlog/audit'

let store: PostgresStore
useTestStore((t) => ({ store } = t))

describe('live_divergence: a message held twice in memory', () => {
  it('reports each later copy as duplicate_in_memory, and no order finding', async () => {
    // given
    const sessionId: SessionId = await store.createSession()
    const q = createMessage({ role: 'user', content: 'q' })
    const a = createMessage({ role: 'assistant', content: 'a' })
    const q2 = createMessage({ role: 'user', content: 'q2' })
    await store.append(sessionId, [q, a, q2])

    // when: a shallow copy of a pushed again, and q pushed again at the end
    const report = await audit(store, sessionId, { live: [q, a, { ...a }, q2, q], checks: ['live'] })

    // then
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.evidence])).toEqual([
      ['live_divergence', 'error', [q.id], { reason: 'duplicate_in_memory', memoryIndex: 4, firstMemoryIndex: 0 }],
      ['live_divergence', 'error', [a.id], { reason: 'duplicate_in_memory', memoryIndex: 2, firstMemoryIndex: 1 }],
    ])
  })

  it('still reports a real reordering of distinct messages as order', async () => {
    // given
    const sessionId: SessionId = await store.createSession()
    const q = createMessage({ role: 'user', content: 'q' })
    const a = createMessage({ role: 'assistant', content: 'a' })
    await store.append(sessionId, [q, a])

    // when
    const report = await audit(store, sessionId, { live: [a, q], checks: ['live'] })

    // then
    expect(report.findings.map((f) => f.evidence?.['reason'])).toEqual(['order'])
  })
})
