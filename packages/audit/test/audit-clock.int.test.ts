import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { type PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { audit, renderReportText, type Finding } from '@turnlog/audit'
import fc from 'fast-check'

let store: PostgresStore

useTestStore((t) => ({ store } = t))

const T0 = Date.parse('2026-03-01T10:00:00.000Z')

function at(text: string, createdAt: string): Message {
  return createMessage({ role: 'user', content: text }, { createdAt })
}

function clock(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.kind === 'clock_regression')
}

describe('clock_regression', () => {
  it('names writers racing on a session as a cause: a message created first and appended second, no clock at fault', async () => {
    // given: two writers of one session; the one whose message was created first gets the session second
    const sessionId = await store.createSession()
    const first = createMessage({ role: 'user', content: 'created first' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const second = createMessage({ role: 'assistant', content: 'created second' })
    await store.append(sessionId, [second])
    await store.append(sessionId, [first])

    // when
    const [finding, ...others] = clock((await audit(store, sessionId)).findings)

    // then: the finding says both possible causes, not only a clock going backwards
    expect(others).toEqual([])
    expect(finding?.messageIds).toEqual([second.id, first.id])
    expect(finding?.explanation).toContain('a clock went backwards, or the later-created message was appended first')
  })

  it('reports a natively appended message created before the message the log holds before it (the hermes incident, without hermes)', async () => {
    // given: the writer's clock stepped back one minute between the second and the third message
    const sessionId = await store.createSession()
    const messages = [
      at('a', '2026-03-01T10:00:00.000Z'),
      at('b', '2026-03-01T10:00:01.000Z'),
      at('c', '2026-03-01T09:59:01.000Z'),
      at('d', '2026-03-01T09:59:02.000Z'),
    ]
    await store.append(sessionId, messages.slice(0, 2))
    await store.append(sessionId, messages.slice(2))

    // when
    const report = await audit(store, sessionId)

    // then: one finding, at the backward step, naming both messages, seqs and timestamps
    expect(clock(report.findings)).toEqual([
      {
        kind: 'clock_regression',
        severity: 'warning',
        sessionId,
        messageIds: [messages[1]?.id, messages[2]?.id],
        seqs: [2, 3],
        eventIds: expect.any(Array),
        explanation: expect.stringContaining('went backwards'),
        evidence: {
          previous: { messageId: messages[1]?.id, seq: 2, createdAt: '2026-03-01T10:00:01.000Z' },
          message: { messageId: messages[2]?.id, seq: 3, createdAt: '2026-03-01T09:59:01.000Z' },
          backwardsMs: 60_000,
        },
      },
    ])
    expect(report.counts.byKind).toEqual({ clock_regression: 1, consecutive_user_messages: 1 })
    expect(renderReportText(report)).toContain(`WARNING  clock_regression session=${sessionId} seq=2-3:`)
    // the check can be selected alone, and left out
    expect(clock((await audit(store, sessionId, { checks: ['clock'] })).findings)).toHaveLength(1)
    expect(clock((await audit(store, sessionId, { checks: ['turns'] })).findings)).toEqual([])
  })

  it('compares createdAt to the nanosecond and across time zones', async () => {
    // given: microseconds (as hermes writes them) and an offset that is the same instant plus one second
    const sessionId = await store.createSession()
    await store.append(sessionId, [
      at('a', '2026-03-01T10:00:00.000002Z'),
      at('b', '2026-03-01T10:00:00.000001Z'),
      at('c', '2026-03-01T12:00:01+02:00'),
      at('d', '2026-03-01T10:00:01.000Z'),
    ])

    // when
    const found = clock((await audit(store, sessionId)).findings)

    // then: only the microsecond step back; 12:00:01+02:00 and 10:00:01Z are the same instant
    expect(found.map((f) => f.seqs)).toEqual([[1, 2]])
    expect(found[0]?.evidence?.['backwardsMs']).toBe(0.001)
  })

  it('reports nothing for monotone sessions, equal timestamps, revisions and forks', async () => {
    // given: equal timestamps, a revision (keeps createdAt), a rewind, a compaction whose summary is newer, a fork
    const sessionId = await store.createSession()
    const a = at('a', '2026-03-01T10:00:00.000Z')
    const b = at('b', '2026-03-01T10:00:00.000Z')
    const c = at('c', '2026-03-01T10:00:02.000Z')
    await store.append(sessionId, [a, b, c])
    await store.revise(sessionId, b.id, { role: 'user', content: 'b2' })
    await store.compact(sessionId, {
      covered: [a.id],
      summary: [createMessage({ role: 'system', content: 'sum' }, { createdAt: '2026-03-01T10:00:03.000Z' })],
    })
    const forkId = await store.fork(sessionId, { at: c.id })
    await store.append(forkId, [at('d', '2026-03-01T10:00:04.000Z')])

    // when
    const report = await audit(store, { all: true }, { checks: ['clock'] })

    // then
    expect(clock(report.findings).filter((f) => f.sessionId === sessionId || f.sessionId === forkId)).toEqual([])
  })

  it('finds a regression exactly when some adjacent pair of appended messages goes backwards (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        // offsets in ms from T0, in log order, split into batches
        fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (offsets, batchSize) => {
          // given
          const sessionId = await store.createSession()
          const messages = offsets.map((o, i) => at(`m${i}`, new Date(T0 + o).toISOString()))
          for (let i = 0; i < messages.length; i += batchSize) await store.append(sessionId, messages.slice(i, i + batchSize))

          // when
          const found = clock((await audit(store, sessionId, { checks: ['clock'] })).findings)

          // then: one finding per backward step, at that step
          const steps = offsets.flatMap((o, i) => (i > 0 && o < (offsets[i - 1] as number) ? [[i, i + 1]] : []))
          expect(found.map((f) => f.seqs)).toEqual(steps)
          expect(found.map((f) => f.evidence?.['backwardsMs'])).toEqual(
            steps.map(([s]) => (offsets[(s as number) - 1] as number) - (offsets[s as number] as number)),
          )
        },
      ),
      { numRuns: 30 },
    )
  })
})
