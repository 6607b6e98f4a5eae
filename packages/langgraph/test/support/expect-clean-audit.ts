import { expect } from '@jest/globals'
import { audit } from '@turnlog/audit'
import type { SessionStore } from '@turnlog/core'

/**
 * The audit of a session the saver wrote is clean: no finding but the `sync_retraction` notes (info) of
 * the retractions the saver's `sync` wrote for `RemoveMessage`, exactly one per such event of the log.
 */
export async function expectCleanAudit(store: SessionStore, sessionId: string): Promise<void> {
  const report = await audit(store, sessionId)
  expect(report.findings.filter((f) => f.kind !== 'sync_retraction')).toEqual([])
  const syncRetractions: string[] = []
  for await (const e of store.events(sessionId)) {
    if (e.type === 'messages_retracted' && (e.data as { sync?: unknown }).sync === true) syncRetractions.push(e.eventId)
  }
  expect(report.findings.filter((f) => f.kind === 'sync_retraction').flatMap((f) => f.eventIds)).toEqual(syncRetractions)
}
