import {
  TurnlogError,
  isTurnlogError,
  contentHash,
  sessionIdFromExternal,
  type JsonValue,
  type Message,
  type SessionInfo,
  type SessionId,
  type SessionState,
  type SessionStore,
} from '@turnlog/core'
import { checkOptions, optionKeys } from '@turnlog/core/internal'
import { splitByBatchBytes } from '@turnlog/postgres'
import { compactionReplayed } from '@turnlog/postgres/internal'
import { epochSecondsOf, hermesRowMessage, type HermesRowMessage } from './hermes-row-message.js'
import { HermesStateDb, type HermesSessionRecord, type SqliteValue } from './hermes-state-db.js'
import { HermesWarnings, type HermesWarning } from './hermes-warning.js'
import { planHermesSession, type HermesPlanStep, type HermesSessionPlan } from './plan-hermes-session.js'

/** Reported after each hermes session. */
export interface HermesImportProgress {
  readonly done: number
  readonly total: number
  readonly hermesSessionId: string
  readonly sessionId: SessionId
}

/** Options for {@link importHermes}. */
export interface ImportHermesOptions {
  /** Tenant of every imported session. */
  readonly tenantId?: string
  /** Import only these hermes session ids (default: all). */
  readonly sessions?: readonly string[]
  readonly onProgress?: (progress: HermesImportProgress) => void
}

/** Every option of {@link importHermes}: a misspelt `sessions` would import every session of the file. */
const IMPORT_HERMES_OPTIONS = optionKeys<ImportHermesOptions>({ tenantId: true, sessions: true, onProgress: true })

/** What the import did with one hermes session. */
export interface HermesSessionImport {
  readonly hermesSessionId: string
  /** `sessionIdFromExternal('hermes:' + hermesSessionId)`. */
  readonly sessionId: SessionId
  /** `sessions.parent_session_id` and its turnlog id (the chain a compression split leaves). */
  readonly parentHermesSessionId: string | null
  readonly parentSessionId: SessionId | null
  /** Message rows read, and how many could not be stored (see warnings). */
  readonly rows: number
  readonly skippedRows: number
  /** hermes' live view: its `active=1` rows. */
  readonly activeRows: number
  /** Messages written by this call / already stored. */
  readonly appended: number
  readonly duplicates: number
  /** Revisions, rewinds and compactions written by this call (0 on a re-import). */
  readonly revised: number
  readonly rewinds: number
  readonly compactions: number
  /** Rows recognised as hermes re-inserting a message it already had (kept under the first row's id). */
  readonly keptCopies: number
  /**
   * Events this call wrote to the session (its appends, revisions, rewinds and compactions): not those an
   * overlapping import of the same file wrote meanwhile, so the counts of overlapping runs add up to the log.
   */
  readonly eventsWritten: number
  /** The session's version after the import. */
  readonly version: number
  /** turnlog's live view (ids, order, content) equals hermes' active rows. */
  readonly liveMatches: boolean
  /** Rows whose timestamp is earlier than a message written before them (also in warnings). */
  readonly timestampRegressions: readonly number[]
}

/** Result of {@link importHermes}. */
export interface HermesImportResult {
  readonly sessions: readonly HermesSessionImport[]
  readonly sessionIds: SessionId[]
  /** Events this call wrote, over every session (see {@link HermesSessionImport.eventsWritten}). */
  readonly eventsWritten: number
  /** Missing columns, skipped rows, salvaged values, timestamp regressions, mismatches: never thrown. */
  readonly warnings: readonly HermesWarning[]
}

function jsonOf(value: SqliteValue): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return value
}

/** The turnlog session id of a hermes session. */
export function hermesSessionId(hermesId: string): SessionId {
  if (typeof hermesId !== 'string' && !(typeof hermesId === 'number' && Number.isFinite(hermesId))) {
    throw new TurnlogError('INVALID_INPUT', 'a hermes session id must be a string', { details: { field: 'hermesId' } })
  }
  return sessionIdFromExternal(`hermes:${hermesId}`)
}

function sessionMetadata(s: HermesSessionRecord, parent: string | null, parentEndReason: string | null): JsonValue {
  const columns: Record<string, JsonValue> = {}
  for (const [k, v] of Object.entries(s.columns)) if (v !== null && v !== undefined) columns[k] = jsonOf(v)
  return {
    source: 'hermes',
    hermes: {
      sessionId: s.id,
      columns,
      lineage:
        parent === null
          ? null
          : {
              parentHermesSessionId: parent,
              parentSessionId: hermesSessionId(parent),
              // hermes ends a session with end_reason 'compression' when compaction splits it
              relation: parentEndReason === 'compression' ? 'compression' : 'child',
            },
    },
  }
}

function revisionDone(state: SessionState | null, step: Extract<HermesPlanStep, { kind: 'revise' }>): boolean {
  return state?.messages.get(step.messageId)?.revisions[step.revision]?.contentHash === step.hash
}

function rewindDone(state: SessionState | null, step: Extract<HermesPlanStep, { kind: 'rewind' }>): boolean {
  return state !== null && step.ids.every((id) => state.messages.get(id)?.state === 'retracted')
}

function rowRange(ids: readonly number[]): string {
  if (ids.length === 0) return ''
  return ids.length === 1 ? `row ${String(ids[0])}` : `rows ${String(ids[0])}–${String(ids[ids.length - 1])}`
}

/**
 * Imports a hermes-agent `state.db` (read-only, with better-sqlite3) into a turnlog store so that each
 * session's live view equals hermes' (`active=1` rows in row order), and re-importing the same file
 * changes nothing.
 *
 * - Session `X` becomes `sessionIdFromExternal('hermes:X')`, with every `sessions` column, and the
 *   `parent_session_id` chain (compression splits), kept in its metadata (`metadata.hermes`).
 * - Row `R` becomes message `messageIdFromExternal('hermes:X:R')` (externalId `hermes:X:R`),
 *   created at the row's `timestamp`, in row-id order. See `hermesRowMessage` for the payload.
 * - Row states become events: compaction (`active=0, compacted=1` rows replaced by a
 *   `[CONTEXT COMPACTION]` summary) → `compact`; rewound rows (`active=0, compacted=0`) → `rewind`;
 *   rows hermes re-inserted (kept messages after a compaction) stay the messages they copy. See
 *   `planHermesSession`.
 * - Idempotent: appends are by deterministic id, compactions by summary id, and revisions and rewinds
 *   already in the log are skipped.
 *
 * Columns vary by hermes version: missing optional columns, unreadable values and skipped rows are
 * reported in `warnings`, never thrown. Throws `IMPORT_FAILED` only when the file is not a readable
 * state.db (no messages table, or no id/session_id/role/content columns), and `INVALID_INPUT` for bad
 * options (a key that is not an option among them: `details.field` naming it, `options.sesions`),
 * before the file is opened.
 */
export async function importHermes(store: SessionStore, path: string, options: ImportHermesOptions = {}): Promise<HermesImportResult> {
  checkOptions(options, 'importHermes options', IMPORT_HERMES_OPTIONS)
  // Array.from: every slot, holes included (every() skips a sparse array's holes)
  if (
    options.sessions !== undefined &&
    (!Array.isArray(options.sessions) || !Array.from(options.sessions as readonly unknown[]).every((id) => typeof id === 'string'))
  ) {
    throw new TurnlogError('INVALID_INPUT', 'sessions must be an array of hermes session ids (strings)')
  }
  if (options.tenantId !== undefined && typeof options.tenantId !== 'string')
    throw new TurnlogError('INVALID_INPUT', 'tenantId must be a string')
  const warnings = new HermesWarnings()
  const db = HermesStateDb.open(path, warnings)
  try {
    let all = db.sessions()
    const orphans = all.filter((s) => s.orphan)
    if (orphans.length > 0 && db.sessionColumns.length > 0) {
      warnings.add({
        code: 'orphan_messages',
        message: `message rows of ${orphans.length} session id(s) with no sessions row were imported as sessions of their own`,
      })
    }
    if (options.sessions !== undefined) {
      const wanted = new Set(options.sessions)
      all = all.filter((s) => wanted.has(s.id))
    }
    // every target session id is checked before anything is written: a session of the file whose id
    // another tenant holds refuses the whole import, not the sessions after the ones already written
    await checkTargetSessions(
      store,
      all.map((s) => hermesSessionId(s.id)),
      options.tenantId ?? null,
    )
    const endReason = new Map(all.map((s) => [s.id, typeof s.columns['end_reason'] === 'string' ? s.columns['end_reason'] : null]))
    const results: HermesSessionImport[] = []
    let done = 0
    for (const s of all) {
      results.push(await importSession(store, db, s, endReason, warnings, options))
      done++
      options.onProgress?.({ done, total: all.length, hermesSessionId: s.id, sessionId: hermesSessionId(s.id) })
    }
    return {
      sessions: results,
      sessionIds: results.map((r) => r.sessionId),
      eventsWritten: results.reduce((sum, r) => sum + r.eventsWritten, 0),
      warnings: warnings.toArray(),
    }
  } finally {
    db.close()
  }
}

/**
 * The store's `maxBatchBytes`, read by shape rather than `instanceof PostgresStore`: an application with
 * two copies of `@turnlog/postgres` (its own and ours) still gets its batches split.
 */
function maxBatchBytesOf(store: SessionStore): number | undefined {
  const limit = (store as { readonly maxBatchBytes?: unknown }).maxBatchBytes
  return typeof limit === 'number' && limit > 0 ? limit : undefined
}

/** Throws `SESSION_EXISTS` when one of `ids` is a session of another tenant (or hidden from this one). */
async function checkTargetSessions(store: SessionStore, ids: readonly string[], tenant: string | null): Promise<void> {
  for (const id of ids) {
    let info: SessionInfo
    try {
      info = await store.getSession(id)
    } catch (error) {
      if (isTurnlogError(error, 'SESSION_NOT_FOUND')) {
        // not visible: free, or held by a tenant this login cannot see (createSession says which)
        continue
      }
      throw error
    }
    if (info.tenantId !== tenant) {
      throw new TurnlogError('SESSION_EXISTS', `session ${id} exists with another tenant; nothing was imported`, {
        details: { sessionId: id },
      })
    }
  }
}

async function importSession(
  store: SessionStore,
  db: HermesStateDb,
  s: HermesSessionRecord,
  endReason: ReadonlyMap<string, string | null>,
  warnings: HermesWarnings,
  options: ImportHermesOptions,
): Promise<HermesSessionImport> {
  const rows: HermesRowMessage[] = []
  let read = 0
  let fallback = epochSecondsOf(s.columns['started_at']) ?? 0
  const badIds: string[] = []
  const seenIds = new Set<number>()
  const repeatedIds: number[] = []
  for (const record of db.messages(s.id)) {
    read++
    // a row's id is its message's identity (messageIdFromExternal('hermes:X:R')): an id that is not an
    // exact integer (a REAL or TEXT id of an odd file, or one past 2^53 that JavaScript cannot hold
    // exactly, where two rows would share a message) has none, so the row is skipped and reported
    if (!Number.isSafeInteger(record.rowId)) {
      badIds.push(String(record.columns['id']))
      continue
    }
    // a table without its primary key may repeat an id: the first row keeps it, the others have none
    if (seenIds.has(record.rowId)) {
      repeatedIds.push(record.rowId)
      continue
    }
    seenIds.add(record.rowId)
    const built = hermesRowMessage(s.id, record, { fallbackEpochSeconds: fallback, warnings })
    if (!built) continue
    if (built.epochSeconds !== null) fallback = built.epochSeconds
    rows.push(built)
  }

  if (badIds.length > 0) {
    warnings.add({
      code: 'unsupported_row',
      hermesSessionId: s.id,
      message: `session ${s.id}: ${badIds.length} row(s) whose id is not an integer of at most 2^53 - 1 were skipped (${badIds.slice(0, 5).join(', ')}${badIds.length > 5 ? ', …' : ''}): a row's id is its message's identity`,
    })
  }

  if (repeatedIds.length > 0) {
    warnings.add({
      code: 'unsupported_row',
      hermesSessionId: s.id,
      rowIds: repeatedIds,
      message: `session ${s.id}: ${repeatedIds.length} row(s) whose id an earlier row of the session has were skipped (the first row with an id keeps it): a row's id is its message's identity`,
    })
  }

  let plan: HermesSessionPlan = planHermesSession(rows)
  if (!plan.matches) {
    const plain = planHermesSession(rows, { mapCopies: false })
    if (plain.matches) {
      warnings.add({
        code: 'copy_mapping_fallback',
        hermesSessionId: s.id,
        message: `session ${s.id}: re-inserted rows could not be matched to the rows they copy; every row was imported as its own message`,
      })
      plan = plain
    }
  }
  for (const issue of plan.issues) {
    warnings.add({ code: issue.code, hermesSessionId: s.id, rowIds: issue.rowIds, message: `session ${s.id}: ${issue.message}` })
  }
  if (plan.timestampRegressions.length > 0) {
    warnings.add({
      code: 'timestamp_regression',
      hermesSessionId: s.id,
      rowIds: plan.timestampRegressions,
      message: `session ${s.id}: ${plan.timestampRegressions.length} row(s) carry a timestamp earlier than a message written before them; row order is kept, the timestamps are kept as createdAt`,
    })
  }

  const parentRaw = s.columns['parent_session_id']
  const parent = parentRaw === null || parentRaw === undefined || parentRaw === '' ? null : String(parentRaw)
  const sessionId = hermesSessionId(s.id)
  await store.createSession({
    id: sessionId,
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    metadata: sessionMetadata(s, parent, parent === null ? null : (endReason.get(parent) ?? null)),
  })
  const before = (await store.getSession(sessionId)).version
  const state = before > 0 ? await store.state(sessionId) : null
  const rowIdOf = new Map(rows.map((r) => [r.message.id, r.rowId]))
  // messages whose content the plan's revisions set (kept copies): their first row is compared as it was
  const revisedByPlan = new Set(plan.steps.flatMap((step) => (step.kind === 'revise' ? [step.messageId] : [])))

  // what this call wrote, counted from each write's result: the session's version moves with the writes of
  // an overlapping import of the same file too
  let appended = 0
  let duplicates = 0
  let revised = 0
  let rewinds = 0
  let compactions = 0
  let eventsWritten = 0
  // a row the store refuses as too large stops the session there (a later row written before it would
  // change hermes' order); the rows before it are written, the next session goes on
  const appendRun = async (run: Parameters<SessionStore['append']>[1]): Promise<void> => {
    let result: Awaited<ReturnType<SessionStore['append']>>
    try {
      result = await store.append(sessionId, run)
    } catch (error) {
      const at = isTurnlogError(error, 'MESSAGE_TOO_LARGE') ? run.findIndex((m) => m.id === error.details['messageId']) : -1
      if (at <= 0) throw error
      await appendRun(run.slice(0, at))
      throw error
    }
    appended += result.appended.length
    eventsWritten += result.appended.length
    duplicates += result.duplicates.length
  }
  const runSteps = async (): Promise<void> => {
    for (const step of plan.steps) {
      switch (step.kind) {
        case 'append': {
          // rows an earlier import stored are not appended again: unchanged, they are duplicates; a row hermes
          // updated in place since (a token count filled in later, an edited content) is a revision
          const fresh: Message[] = []
          for (const m of step.messages) {
            const known = state?.messages.get(m.id)
            if (known === undefined) fresh.push(m)
            else if (revisedByPlan.has(m.id) || contentHash(known.message) === contentHash(m)) duplicates++
            else if (known.state === 'live') {
              // unchanged: an overlapping import recorded this revision first
              if (!(await store.revise(sessionId, m.id, m.payload)).unchanged) {
                revised++
                eventsWritten++
              }
              warnings.row(
                'row_changed',
                s.id,
                rowIdOf.get(m.id) ?? -1,
                'rows changed in place since the last import were recorded as revisions',
              )
            } else {
              warnings.add({
                code: 'row_changed',
                hermesSessionId: s.id,
                rowIds: [rowIdOf.get(m.id) ?? -1],
                message: `session ${s.id}: a row changed in place since the last import is retracted or compacted in turnlog; the change was not recorded`,
              })
            }
          }
          // a run of rows larger than one batch (maxBatchBytes) goes in several appends (each idempotent)
          const limit = maxBatchBytesOf(store)
          for (const run of limit === undefined ? [fresh] : splitByBatchBytes(fresh, limit)) {
            if (run.length === 0) continue
            await appendRun(run)
          }
          break
        }
        case 'revise': {
          if (revisionDone(state, step)) break
          const result = await store.revise(sessionId, step.messageId, step.payload)
          if (!result.unchanged) {
            revised++
            eventsWritten++
          }
          break
        }
        case 'rewind': {
          if (rewindDone(state, step)) break
          let result: Awaited<ReturnType<SessionStore['rewind']>>
          try {
            result = await store.rewind(sessionId, { from: step.from }, { reason: `hermes: ${rowRange(step.rowIds)} rewound` })
          } catch (error) {
            // another import of the same file (an overlapping run) wrote this rewind after `state` was read:
            // its target is retracted now, which is what this step wanted
            if (isTurnlogError(error, 'UNKNOWN_MESSAGE') && rewindDone(await store.state(sessionId), step)) break
            throw error
          }
          // a rewind that retracts something writes one messages_retracted event
          if (result.retracted.length > 0) {
            rewinds++
            eventsWritten++
          }
          if (result.retracted.length !== step.ids.length || result.retracted.some((id, k) => id !== step.ids[k])) {
            warnings.add({
              code: 'live_view_mismatch',
              hermesSessionId: s.id,
              rowIds: step.rowIds,
              message: `session ${s.id}: the rewind of ${rowRange(step.rowIds)} retracted ${result.retracted.length} message(s), not ${step.ids.length} (the session holds messages this file does not explain)`,
            })
          }
          break
        }
        case 'compact': {
          const version = (await store.getSession(sessionId)).version
          const result = await store.compact(sessionId, {
            covered: step.covered,
            summary: step.summary,
            reason: `hermes compaction (summary row ${step.summaryRowId})`,
            metadata: step.metadata,
            // history as hermes recorded it: a compaction that left a tool call or result live without its
            // partner happened; it is recorded, and the audit reports the orphan
            allowSplitToolPairs: true,
          })
          // a store of this package says whether the call wrote the compaction or found it placed (by an
          // earlier or an overlapping import); the version cannot tell when another import placed it meanwhile
          const wrote = !(compactionReplayed(result) ?? result.version === version)
          if (wrote) {
            compactions++
            // the summary message(s) and one messages_compacted event
            eventsWritten += result.summary.length + 1
          }
          break
        }
      }
    }
  }
  try {
    await runSteps()
  } catch (error) {
    if (!isTurnlogError(error, 'MESSAGE_TOO_LARGE')) throw error
    const messageId = error.details['messageId']
    const rowId = typeof messageId === 'string' ? rowIdOf.get(messageId as Message['id']) : undefined
    const size = error.details['size']
    const what = typeof size === 'number' ? `${size} UTF-16 code units of JSON` : 'longer than the longest string JavaScript can hold'
    warnings.add({
      code: 'row_too_large',
      hermesSessionId: s.id,
      ...(rowId === undefined ? {} : { rowIds: [rowId] }),
      message: `session ${s.id}: ${rowId === undefined ? 'a message' : `row ${rowId}`} is ${what}, over the store's maxMessageBytes (${String(error.details['limit'])}); the session was imported up to the row before it. Open the store with a larger maxMessageBytes and import again to finish it`,
    })
  }

  const loaded = await store.load(sessionId)
  const liveMatches =
    loaded.messages.length === plan.target.length &&
    loaded.messages.every((m, k) => m.id === plan.target[k]?.id && contentHash(m) === plan.target[k]?.hash)
  if (!liveMatches) {
    const diff = loaded.messages.findIndex((m, k) => m.id !== plan.target[k]?.id || contentHash(m) !== plan.target[k]?.hash)
    warnings.add({
      code: 'live_view_mismatch',
      hermesSessionId: s.id,
      rowIds: plan.target.slice(Math.max(0, diff), Math.max(0, diff) + 1).map((t) => t.rowId),
      message: `session ${s.id}: turnlog's live view (${loaded.messages.length} messages) differs from hermes' active rows (${plan.target.length}) from position ${diff < 0 ? Math.min(loaded.messages.length, plan.target.length) : diff}`,
    })
  }
  const after = loaded.version
  return {
    hermesSessionId: s.id,
    sessionId,
    parentHermesSessionId: parent,
    parentSessionId: parent === null ? null : hermesSessionId(parent),
    rows: read,
    skippedRows: read - rows.length,
    activeRows: plan.target.length,
    appended,
    duplicates,
    revised,
    rewinds,
    compactions,
    keptCopies: plan.keptCopies,
    eventsWritten,
    version: after,
    liveMatches,
    timestampRegressions: plan.timestampRegressions,
  }
}
