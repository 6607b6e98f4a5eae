import { contentHash, type Message } from '@turnlog/core'
import { scorePersistence, type PersistenceScore } from './score-persistence.js'

/** One row of the naive persister's table: a copy of the payload, nothing else. */
export interface CursorRow {
  readonly row: number
  /** The demo's id of the message the row was copied from: used to score the table, never to dedupe. */
  readonly sourceId: string
  readonly contentHash: string
  readonly ephemeral: boolean
}

/**
 * The persister turnlog replaces, for contrast: it remembers how many messages of the live list it
 * wrote (`messages[lastFlushed:]`) and appends the rest to a plain table. It has no ids, so it cannot
 * tell a list that shrank (rewind, compaction) from one that did not grow, nor a revised message from
 * a written one, nor a redelivered message from a new one.
 */
export class CursorPersister {
  /** The table: one row per write. */
  readonly rows: CursorRow[]
  #lastFlushed: number

  /** Starts with an empty table, or continues a table with its cursor (a resumed process). */
  constructor(rows: CursorRow[] = [], lastFlushed = 0) {
    this.rows = rows
    this.#lastFlushed = lastFlushed
  }

  /** Where the cursor stands. */
  get lastFlushed(): number {
    return this.#lastFlushed
  }

  /** Writes `live[lastFlushed:]` and moves the cursor to the end of the list; returns the rows written. */
  flush(live: readonly Message[]): number {
    const fresh = live.slice(this.#lastFlushed)
    for (const m of fresh) {
      this.rows.push({ row: this.rows.length + 1, sourceId: m.id, contentHash: contentHash(m), ephemeral: m.ephemeral === true })
    }
    this.#lastFlushed = live.length
    return fresh.length
  }

  /**
   * A process that restarts after a crash: its cursor is gone, so it counts the rows it already has,
   * the usual way to "resume" a position cursor.
   */
  resumeAfterCrash(): CursorPersister {
    return new CursorPersister(this.rows, this.rows.length)
  }
}

/**
 * Scores a table of rows against the expected final content of each message (`expected`: id → content
 * hash of its latest version).
 */
export function scoreRows(
  rows: readonly { readonly sourceId: string; readonly contentHash: string; readonly ephemeral: boolean }[],
  expected: ReadonlyMap<string, string>,
): PersistenceScore {
  const byId = new Map<string, string[]>()
  let scaffoldingStored = 0
  for (const r of rows) {
    if (r.ephemeral) {
      scaffoldingStored++
      continue
    }
    const list = byId.get(r.sourceId)
    if (list) list.push(r.contentHash)
    else byId.set(r.sourceId, [r.contentHash])
  }
  return scorePersistence(expected, scaffoldingStored, (id) => {
    const stored = byId.get(id) ?? []
    return { writes: stored.length, holds: (hash) => stored.includes(hash) }
  })
}
