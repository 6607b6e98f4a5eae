import type { StoredEvent } from '@turnlog/core'
import type { PersistenceScore } from './cursor-persister.js'

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
  const lostIds: string[] = []
  const duplicatedIds: string[] = []
  const staleIds: string[] = []
  let duplicated = 0
  for (const [id, hash] of expected) {
    const n = appends.get(id) ?? 0
    if (n === 0) lostIds.push(id)
    else {
      if (n > 1) duplicatedIds.push(id)
      duplicated += n - 1
      if (latest.get(id) !== hash) staleIds.push(id)
    }
  }
  return {
    expected: expected.size,
    lost: lostIds.length,
    duplicated,
    stale: staleIds.length,
    scaffoldingStored,
    lostIds,
    duplicatedIds,
    staleIds,
  }
}
