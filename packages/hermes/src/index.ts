/**
 * `@turnlog/hermes`: imports a hermes-agent `state.db` (SQLite, read with the native `better-sqlite3`)
 * into a turnlog store. An opt-in package: the rest of turnlog has no native dependency.
 * @packageDocumentation
 */
export {
  hermesSessionId,
  importHermes,
  type HermesImportProgress,
  type HermesImportResult,
  type HermesSessionImport,
  type ImportHermesOptions,
} from './import-hermes.js'
export {
  HERMES_COMPACTION_PREFIX,
  epochToIso,
  hermesExternalId,
  hermesRowMessage,
  type HermesRowMessage,
  type HermesRowState,
} from './hermes-row-message.js'
export {
  HERMES_MESSAGE_COLUMNS,
  HERMES_SESSION_COLUMNS,
  HermesStateDb,
  type HermesMessageRecord,
  type HermesSessionRecord,
  type SqliteValue,
} from './hermes-state-db.js'
export { HermesWarnings, type HermesWarning, type HermesWarningCode } from './hermes-warning.js'
export {
  planHermesSession,
  type HermesPlanIssue,
  type HermesPlanStep,
  type HermesSessionPlan,
  type PlanHermesSessionOptions,
  type PlannedLiveMessage,
} from './plan-hermes-session.js'
