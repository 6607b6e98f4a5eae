/** How a persister's table compares with what it should hold. */
export interface PersistenceScore {
  /** Messages that should be stored (every non-ephemeral message that was ever flushed). */
  readonly expected: number
  /** Expected messages with no row at all. */
  readonly lost: number
  /** Extra rows for messages already stored (redelivery, re-insertion). */
  readonly duplicated: number
  /** Messages stored only with an old content (a revision or a finished stream never written). */
  readonly stale: number
  /** Rows of scaffolding (ephemeral) messages, which must never be stored. */
  readonly scaffoldingStored: number
  /** The ids behind `lost`, `duplicated` and `stale`. */
  readonly lostIds: readonly string[]
  readonly duplicatedIds: readonly string[]
  readonly staleIds: readonly string[]
}

/** How a persister kept one expected message: how many times it wrote it, and whether it holds a given content version. */
export interface StoredCopies {
  readonly writes: number
  holds(contentHash: string): boolean
}

/**
 * The score of a persister over the messages the runtime flushed (`expected`: id → content hash of the
 * latest version): never written (lost), written more than once (duplicated), not holding the latest
 * version (stale). {@link scoreRows} and `scoreLog` each say how their storage kept a message.
 */
export function scorePersistence(
  expected: ReadonlyMap<string, string>,
  scaffoldingStored: number,
  copiesOf: (id: string) => StoredCopies,
): PersistenceScore {
  const lostIds: string[] = []
  const duplicatedIds: string[] = []
  const staleIds: string[] = []
  let duplicated = 0
  for (const [id, hash] of expected) {
    const copies = copiesOf(id)
    if (copies.writes === 0) lostIds.push(id)
    else {
      if (copies.writes > 1) duplicatedIds.push(id)
      duplicated += copies.writes - 1
      if (!copies.holds(hash)) staleIds.push(id)
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
