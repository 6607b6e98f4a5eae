/**
 * `@turnlog/postgres`: the Postgres (and embedded PGlite) store: kysely migrations, the event log,
 * the inline projection, subscriptions and retries. Building blocks shared with the other turnlog
 * packages (the SQLSTATE map, group commit, the PGlite dialect) are in `@turnlog/postgres/internal`.
 * @packageDocumentation
 */
export { parseOpenStoreConfig } from './open-store-config.js'
export {
  openStore,
  type OpenStoreConfig,
  type OpenStoreCommonConfig,
  type ConnectionStringConfig,
  type PoolConfigInput,
  type KyselyConfig,
  type EmbeddedConfig,
  type PGliteConfig,
  type PGliteInstance,
} from './open-store.js'
export type { DataDirLockHolder } from './data-dir-lock.js'
export { PostgresStore, type PostgresStoreInit, type PostgresStoreSettings, type GroupCommitSettings } from './postgres-store.js'
export type { FindSessionIdsOptions } from './lookups/find-session-ids.js'
export { migrateToLatest, type MigrateResult } from './migrate-to-latest.js'
export type { TelemetryConfig, TelemetryTracer, TelemetryMeter } from './telemetry/telemetry-config.js'
export { TURNLOG_ROLES, rolesSql, type RolesSqlOptions } from './roles-sql.js'
export { withRetry, type RetryOptions } from './with-retry.js'
export { DEFAULT_MAX_BATCH_BYTES, MAX_BATCH_BYTES_CEILING } from './batch-limits.js'
/** Re-exported from `@turnlog/core`, where it lives (the store port's callers use it too). */
export { splitByBatchBytes } from '@turnlog/core'
export type { TurnlogDatabase, EventsTable, SessionsTable, LiveMessagesTable, ConflictsTable } from './database.js'
export type { SubscriptionConfig, SubscribeOptions, BackoffOptions } from './subscriptions/subscribe.js'
export { Subscription, type SubscriptionHandler, type HandlerContext, type SubscriptionState } from './subscriptions/subscription.js'
export { EVENTS_CHANNEL } from './subscriptions/open-consumer-session.js'
export { LAG_COUNT_CAP, type SubscriptionLag } from './subscriptions/subscription-lag.js'
export { START_CHECKPOINT, compareCheckpoints, type Checkpoint } from './subscriptions/checkpoint.js'
export {
  readCommittedEvents,
  type ReadCommittedEventsOptions,
  type ReadCommittedEventsResult,
  type SubscribedEvent,
  type SubscriptionFilter,
} from './subscriptions/read-committed-events.js'
export {
  oldestOpenTransaction,
  type OpenTransactionInfo,
  type OldestOpenTransactionOptions,
} from './subscriptions/oldest-open-transaction.js'
export {
  rebaseSubscription,
  type RebaseTarget,
  type RebaseResult,
  type SubscriptionAdminStore,
} from './subscriptions/rebase-subscription.js'
export {
  rebaseAfterRestore,
  REBASED_TX_ID,
  type RebaseAfterRestoreOptions,
  type RebaseAfterRestoreResult,
} from './subscriptions/rebase-after-restore.js'
export { listSubscriptions, type SubscriptionInfo } from './subscriptions/list-subscriptions.js'
export { dropSubscription } from './subscriptions/drop-subscription.js'
export {
  dedicatedConnectionFromConfig,
  dedicatedConnectionFromPool,
  type DedicatedConnection,
  type DedicatedConnectionFactory,
} from './subscriptions/dedicated-connection.js'
