import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore, useTestStoreOfKind } from '@turnlog/testing'
import { audit, exitCodeFor, renderReportText, type Finding } from '@turnlog/audit'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

function syncRetractions(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.kind === 'sync_retraction')
}

/** The `sync_retraction` cases, on one store. */
function describeSyncRetraction(name: string, store: () => PostgresStore): void {
  describe(`sync_retraction (${name})`, () => {
    it('reports each retraction sync wrote, with the retracted ids and the version; rewinds and compactions get none', async () => {
      // given: a sync drops c and d (a runtime's list lost them), a later one drops g and h; a rewind and a compaction besides
      const s = store()
      const sessionId = await s.createSession()
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      const [e, f, g, h] = [user('e'), assistant('f'), user('g'), assistant('h')]
      await s.append(sessionId, [a, b, c, d])
      const first = await s.sync(sessionId, [a, b, e, f, g, h])
      const second = await s.sync(sessionId, [a, b, e, f])
      await s.rewind(sessionId, { from: f.id })
      const summary = createMessage({ role: 'system', content: 'summary of a' })
      await s.compact(sessionId, { covered: [a.id], summary })

      // when
      const report = await audit(s, sessionId)

      // then
      expect(syncRetractions(report.findings)).toEqual([
        {
          kind: 'sync_retraction',
          severity: 'info',
          sessionId,
          messageIds: [c.id, d.id],
          seqs: [5],
          eventIds: [expect.any(String)],
          explanation: `sync retracted 2 message(s) at version 5 because the caller's list no longer held them (not a rewind): ${c.id} (user "c"), ${d.id} (assistant "d")`,
          evidence: { version: 5, retracted: [c.id, d.id] },
        },
        {
          kind: 'sync_retraction',
          severity: 'info',
          sessionId,
          messageIds: [g.id, h.id],
          seqs: [second.version],
          eventIds: [expect.any(String)],
          explanation: expect.stringContaining(`2 message(s) at version 10 because`),
          evidence: { version: 10, retracted: [g.id, h.id] },
        },
      ])
      expect([first.version, second.version]).toEqual([9, 10])
      // the event ids are the retraction events'
      const retractions: string[] = []
      for await (const ev of s.events(sessionId)) if (ev.type === 'messages_retracted') retractions.push(ev.eventId)
      expect(syncRetractions(report.findings).flatMap((x) => x.eventIds)).toEqual(retractions.slice(0, 2))
      // info: the audit still passes at any failOn but info, and the text report names the kind
      expect(report.findings.filter((x) => x.kind !== 'sync_retraction')).toEqual([])
      expect([exitCodeFor(report, 'warning'), exitCodeFor(report, 'info')]).toEqual([0, 1])
      expect(renderReportText(report)).toContain('sync_retraction')
      // the group can be left out
      expect(syncRetractions((await audit(s, sessionId, { checks: ['chain', 'fold'] })).findings)).toEqual([])
    })

    it('a sync that only appends, revises or compacts reports nothing', async () => {
      // given
      const s = store()
      const sessionId = await s.createSession()
      const [a, b, c] = [user('a'), assistant('b'), user('c')]
      await s.sync(sessionId, [a, b, c])
      const summary = createMessage({ role: 'system', content: 'summary of a and b' })
      await s.sync(sessionId, [summary, c, assistant('d')], { compaction: { summaryIds: [summary.id] } })

      // when
      const report = await audit(s, sessionId)

      // then
      expect(report.findings).toEqual([])
    })
  })
}

let postgres: PostgresStore
useTestStore((t) => ({ store: postgres } = t))
describeSyncRetraction('Postgres', () => postgres)

let pglite: PostgresStore
useTestStoreOfKind('pglite', (t) => ({ store: pglite } = t))
describeSyncRetraction('PGlite', () => pglite)
