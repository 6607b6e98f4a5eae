/**
 * What the hermes importer reports instead of failing. Codes are stable; new ones may be added.
 * - `missing_table`, `missing_column`: the file's schema lacks something optional (older version).
 * - `orphan_messages`: message rows whose `session_id` has no `sessions` row (imported anyway).
 * - `unsupported_role`: rows whose role turnlog cannot store (e.g. `session_meta`); skipped.
 * - `unsupported_row`: a row whose values cannot form a valid message even after salvage, whose id is
 *   not an integer of at most 2^53 - 1 or repeats an earlier row's (its message id derives from it), or
 *   whose `session_id` is NULL; skipped.
 * - `invalid_json`: a JSON column (content parts, reasoning_details, …) did not parse; kept as text.
 * - `invalid_tool_calls`: `tool_calls` was not a JSON list of calls with ids; kept as text in `hermes.tool_calls`.
 * - `null_content`: a non-assistant row with NULL content; stored as `""`.
 * - `coerced_value`: a non-text value where text was expected (number, blob); converted.
 * - `missing_tool_call_id`: a tool row without `tool_call_id`; given `hermes:missing:<rowId>` (an orphan).
 * - `bad_timestamp`: NULL or unreadable `timestamp` (hermes writes epoch seconds; a TEXT that is neither a
 *   number nor an ISO-8601 timestamp of a real instant, such as `2024-02-30T00:00:00Z`, is unreadable);
 *   the previous row's (or the session's) time is used.
 * - `timestamp_regression`: rows whose timestamp is earlier than a row written before them (row order
 *   is the order; the timestamps are kept as `createdAt`, and the audit reports each backward step as a
 *   `clock_regression` finding).
 * - `compacted_without_summary`: `compacted=1` rows no compaction summary row follows; retracted.
 * - `summary_without_compaction`: a `[CONTEXT COMPACTION]` row that replaced nothing; appended as is.
 * - `copy_mapping_fallback`: re-inserted rows could not be matched to the rows they copy in order;
 *   they were imported as new messages (the originals as compacted/retracted).
 * - `live_view_mismatch`: turnlog's live view of the session differs from hermes' active rows.
 * - `row_changed`: rows an earlier import stored that hermes changed in place since (a token count
 *   filled in later, an edit); recorded as revisions of their messages (not recorded, and said so, for
 *   a message retracted or compacted in turnlog).
 * - `row_too_large`: a row whose message the store refuses as larger than its `maxMessageBytes`
 *   (`MESSAGE_TOO_LARGE`, 16 MiB of JSON by default); the session is imported up to the row before it
 *   (its live view then differs: `live_view_mismatch`) and the next session goes on. Open the store with
 *   a larger `maxMessageBytes` and import again to finish the session.
 */
export type HermesWarningCode =
  | 'missing_table'
  | 'missing_column'
  | 'orphan_messages'
  | 'unsupported_role'
  | 'unsupported_row'
  | 'invalid_json'
  | 'invalid_tool_calls'
  | 'null_content'
  | 'coerced_value'
  | 'missing_tool_call_id'
  | 'bad_timestamp'
  | 'timestamp_regression'
  | 'compacted_without_summary'
  | 'summary_without_compaction'
  | 'copy_mapping_fallback'
  | 'live_view_mismatch'
  | 'row_changed'
  | 'row_too_large'

/** One finding of the hermes importer. Row-level findings are grouped per session and code. */
export interface HermesWarning {
  readonly code: HermesWarningCode
  readonly message: string
  /** The hermes session (its own id), when the finding is about one. */
  readonly hermesSessionId?: string
  /** The hermes `messages.id` values concerned. */
  readonly rowIds?: readonly number[]
  readonly table?: string
  readonly column?: string
}

/** Collects row-level findings per code, so a file with a million bad rows gives one warning per code. */
export class HermesWarnings {
  readonly #list: HermesWarning[] = []
  readonly #rows = new Map<string, { code: HermesWarningCode; hermesSessionId: string; message: string; rowIds: number[] }>()

  /** Adds a finding as is. */
  add(warning: HermesWarning): void {
    this.#list.push(warning)
  }

  /** Records that `rowId` of a session has finding `code` (message given once per group). */
  row(code: HermesWarningCode, hermesSessionId: string, rowId: number, message: string): void {
    const key = `${code}\u0000${hermesSessionId}`
    const group = this.#rows.get(key)
    if (group) group.rowIds.push(rowId)
    else this.#rows.set(key, { code, hermesSessionId, message, rowIds: [rowId] })
  }

  /** Every finding: file-level ones first, then row groups in the order first seen. */
  toArray(): HermesWarning[] {
    const grouped = [...this.#rows.values()].map((g) => ({
      code: g.code,
      hermesSessionId: g.hermesSessionId,
      rowIds: g.rowIds,
      message: `${g.message} (${g.rowIds.length} row${g.rowIds.length === 1 ? '' : 's'})`,
    }))
    return [...this.#list, ...grouped]
  }
}
