import type { TelemetryConfig } from '../telemetry/telemetry-config.js'
import type { Kysely } from 'kysely'
import type { Pool } from 'pg'
import type { KnownMessages } from '../known-messages.js'
import type { DedicatedConnectionFactory } from '../subscriptions/dedicated-connection.js'

/** Settings shared by every way of opening a store. */
export interface PostgresStoreSettings {
  /** Largest accepted payload, in UTF-16 code units of its JSON text; default 16 MiB. */
  readonly maxMessageBytes?: number
  /**
   * Largest accepted batch: the JSON texts of one call's messages together (`append`, `flush`,
   * `compact`'s summary), in UTF-16 code units; default 128 MiB, at most 256 MiB. A larger batch is
   * refused up front with `BATCH_TOO_LARGE` (nothing written); see docs/errors.md.
   */
  readonly maxBatchBytes?: number
  /** How many sessions the flush cache remembers; default 10,000. */
  readonly knownSessions?: number
  /**
   * Group commit of concurrent appends to different sessions (one statement and one commit for every
   * batch waiting while earlier ones are in flight; each batch still all-or-nothing and isolated from
   * the others' errors). Default on for a Postgres server (`{ maxBatches: 32, maxInFlight: 2 }`); `false`
   * sends every append on its own. Not used by PGlite or inside a caller's transaction. See
   * docs/performance.md.
   */
  readonly groupCommit?: boolean | GroupCommitSettings
  /**
   * OpenTelemetry spans and metrics of every store call (docs/operations.md, "Tracing and metrics").
   * Default: the global providers of `@opentelemetry/api` (an optional peer) when it is installed and
   * a provider is registered, otherwise nothing at all. `false`: none. `{ tracer, meter }`: these.
   */
  readonly telemetry?: false | TelemetryConfig
}

/** Limits of the append group commit; see {@link PostgresStoreSettings.groupCommit}. */
export interface GroupCommitSettings {
  /** Most sessions' batches in one group statement; default 32. */
  readonly maxBatches?: number
  /** Most append statements in flight at once (each holds a pooled connection); default 2. */
  readonly maxInFlight?: number
}

/** Internal wiring of a {@link PostgresStore}; use `openStore` to make one. */
export interface PostgresStoreInit extends PostgresStoreSettings {
  /** Where statements run: the store's own Kysely, or a caller's transaction. */
  readonly db: Kysely<unknown>
  /** Runs independent work (conflict evidence) outside any caller transaction. */
  readonly root: Kysely<unknown>
  /** True when `db` is a caller's transaction: the store must not begin its own or cache results. */
  readonly inTransaction?: boolean
  /** Releases what the store owns; called once by `close`. */
  readonly onClose?: () => Promise<void>
  /** The flush cache to share (a transaction-bound store gets a private one). */
  readonly known?: KnownMessages
  /** `'postgres'` or `'pglite'`, for diagnostics. */
  readonly flavor: 'postgres' | 'pglite'
  /** Opens a subscription consumer's own Postgres session (its lock and LISTEN); see `subscribe`. */
  readonly dedicatedConnection?: DedicatedConnectionFactory
  /**
   * The pool behind `db` when the store created it with `directConnection: true`: `load` and the
   * appends run named prepared statements on it (planned once per connection). Its connections run
   * with `jit = off` and no parallel workers.
   */
  readonly ownPool?: Pool
}
