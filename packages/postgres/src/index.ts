/**
 * `@turnlog/postgres`: the Postgres (and embedded PGlite) store: kysely migrations, the event log,
 * the inline projection, SQLSTATE mapping and retries.
 * @packageDocumentation
 */
export { openStore, type OpenStoreConfig, type OpenStoreCommonConfig, type ConnectionStringConfig, type PoolConfigInput, type KyselyConfig, type EmbeddedConfig } from './open-store.js'
export { PostgresStore, type PostgresStoreInit, type PostgresStoreSettings } from './postgres-store.js'
export { migrateToLatest, type MigrateResult } from './migrate-to-latest.js'
export { PGliteDialect, type PGliteDialectConfig } from './pglite-dialect.js'
export { mapDatabaseError, sqlState } from './map-database-error.js'
export { withRetry, type RetryOptions } from './with-retry.js'
export { KnownMessages } from './known-messages.js'
export { checkSafeJson, checkSafeText } from './safe-text.js'
export type { TurnlogDatabase, EventsTable, SessionsTable, LiveMessagesTable, ConflictsTable } from './database.js'
