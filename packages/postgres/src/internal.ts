/**
 * `@turnlog/postgres/internal`: building blocks the other turnlog packages (audit, cli, bench,
 * testing, openai-agents) share with the store, outside the public API: the SQLSTATE table and mapping,
 * the group commit queue, the known-message cache, the PGlite dialect, the safe-text checks, the retry
 * loop behind `withRetry` (`retryWhile`) and its options' check (`checkRetryOptions`), the telemetry wrapper (for the bench's overhead figure),
 * whether a `compact` result was a replay (`compactionReplayed`, for importHermes' counts). No
 * stability promise: they change with the store. Applications import `turnlog` (or `@turnlog/postgres`).
 * @packageDocumentation
 */
export { CUSTOM_SQLSTATES, customSqlState, isCustomSqlState, type CustomSqlState } from './custom-sqlstates.js'
export { lostMessageIdRace, mapDatabaseError, sqlState } from './map-database-error.js'
export { GroupCommit, type GroupCommitOptions } from './group-commit.js'
export { statementRolledBack } from './statement-rolled-back.js'
export { PGliteDialect, type PGliteDialectConfig } from './pglite-dialect.js'
export { KnownMessages } from './known-messages.js'
export { checkSafeJson, checkSafeText } from './safe-text.js'
export { checkRetryOptions, retryWhile } from './with-retry.js'
export { compactionReplayed } from './store/compaction-replayed.js'
export { acquireDataDirLock, processStartTime, DATA_DIR_LOCK_PREFIX, type DataDirLock, type DataDirLockHolder } from './data-dir-lock.js'
export { checkDataDir, ensureDataDir } from './check-data-dir.js'
export { StoreTelemetry } from './telemetry/store-telemetry.js'
export { loadOpenTelemetry } from './telemetry/load-open-telemetry.js'
