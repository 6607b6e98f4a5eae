import type { SessionId } from './ids.js'
import type { JsonValue } from './json-value.js'

/**
 * An imported session's attributes once checked, ids parsed: what the export-file reader
 * (`@turnlog/audit`'s `importEvents`) and the store's import writer (`@turnlog/postgres`) each hold per
 * session. Written once here so the two cannot drift; internal (`@turnlog/core/internal`).
 */
export interface ImportedSessionHead {
  /** Where the session came from (a 1-based line of a file). */
  readonly line: number
  readonly id: SessionId
  readonly tenantId: string | null
  readonly metadata: JsonValue | null
  /** ISO-8601. */
  readonly createdAt: string
  /** ISO-8601. */
  readonly updatedAt: string
  /** Fork lineage: the parent session, its version at the fork, and the last inherited message. */
  readonly parent: { readonly sessionId: SessionId; readonly version: number; readonly at: string } | null
}
