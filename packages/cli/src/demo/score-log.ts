import type { StoredEvent } from '@turnlog/core'
import type { PersistenceScore } from './score-persistence.js'
import { scorePersistence } from './score-persistence.js'

/** Scores the session's event log the way {@link scoreRows} scores the naive table. */
export function scoreLog(
  events: readonly StoredEvent[],
  expected: ReadonlyMap<string, string>,
  ephemeralIds: ReadonlySet<string>,
): PersistenceScore {
  const appends = new Map<string, number>()
  const latest = new Map<string, string>()
  let scaffoldingStored = 0
  for (const e of events) {
    if (e.type === 'message_appended' || e.type === 'message_revised') {
      if (ephemeralIds.has(e.messageId)) scaffoldingStored++
      if (e.type === 'message_appended') appends.set(e.messageId, (appends.get(e.messageId) ?? 0) + 1)
      latest.set(e.messageId, e.contentHash)
    }
  }
  return scorePersistence(expected, scaffoldingStored, (id) => ({
    writes: appends.get(id) ?? 0,
    holds: (hash) => latest.get(id) === hash,
  }))
}
