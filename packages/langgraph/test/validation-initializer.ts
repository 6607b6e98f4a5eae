import { expect } from '@jest/globals'
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation'
import type { PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'

/**
 * The official suite is written for vitest's globals: its one vitest-only call is `expect.soft` (in
 * the `list` spec), which keeps a test running after a failed assertion. Jest has none; a hard
 * `expect` in its place fails at the first mismatch instead of at the end, which is stricter.
 */
export function allowSoftExpect(): void {
  const e = expect as unknown as { soft?: unknown }
  e.soft ??= expect
  const global = (globalThis as { expect?: { soft?: unknown } }).expect
  if (global !== undefined) global.soft ??= global
}

/**
 * The suite's initializer for a saver on `store()` (opened by the test file): each `createCheckpointer`
 * returns a new saver on the same database; `destroyCheckpointer` empties the saver's tables, as the
 * stock Postgres initializer drops its database (the `list` spec lists every thread, so each checkpointer
 * must start empty). turnlog sessions stay (nothing lists them).
 */
export function turnlogInitializer(name: string, store: () => PostgresStore): CheckpointSaverTestInitializer<TurnlogCheckpointSaver> {
  return {
    checkpointerName: name,
    async createCheckpointer() {
      const saver = new TurnlogCheckpointSaver({ store: store() })
      await saver.setup()
      return saver
    },
    async destroyCheckpointer(saver) {
      await sql`truncate turnlog_langgraph.checkpoints, turnlog_langgraph.blobs, turnlog_langgraph.writes,
                         turnlog_langgraph.sessions, turnlog_langgraph.threads`.execute(saver.store.db)
    },
  }
}
