import type { JsonValue } from '@turnlog/core'
import { sql } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'
import { checkpointFromRow, type Checkpoint } from './checkpoint.js'
import { onAdminStore, type SubscriptionAdminStore } from './rebase-subscription.js'
import { SUBSCRIPTION_LOCK_CLASS, isClaimedInProcess, subscriptionLockKey } from './subscription-lock.js'

/** A stored subscription, for monitoring. */
export interface SubscriptionInfo {
  readonly name: string
  /**
   * The checkpoint's tenant (null: none). A name is unique per tenant; a caller lists its own tenant's
   * checkpoints, the owner (superusers, `BYPASSRLS` roles) every tenant's.
   */
  readonly tenantId: string | null
  readonly checkpoint: Checkpoint
  /** Events delivered by every consumer of this name, ever. */
  readonly delivered: number
  readonly createdAt: string
  /** When the checkpoint last moved (or an error was recorded). */
  readonly updatedAt: string
  /** The `SUBSCRIPTION_FAILED` error that last stopped it, until the checkpoint moves again. */
  readonly lastError: JsonValue | null
  /** True when a consumer holds the name now. */
  readonly active: boolean
  /** The backend pid of the consumer's session (Postgres), if active. */
  readonly holderPid: number | null
}

interface Row {
  name: string
  tenant_id: string | null
  tx_id: string
  global_position: string | number
  delivered: string | number
  created_at: Date | string
  updated_at: Date | string
  last_error: JsonValue | null
  holder_pid: number | null
}

function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString()
}

/**
 * Every subscription the caller may see (its tenant's; the owner's: every tenant's) with its checkpoint, totals, last error and current holder (from `pg_locks`).
 * Pair it with `subscription.lag()` or {@link SubscriptionInfo.updatedAt} to alert on a stuck consumer.
 */
export async function listSubscriptions(store: SubscriptionAdminStore): Promise<readonly SubscriptionInfo[]> {
  try {
    const { rows } = await onAdminStore(store, () =>
      sql<Row>`
      select s.name, s.tenant_id, s.tx_id::text as tx_id, s.global_position, s.delivered, s.created_at, s.updated_at, s.last_error,
             (select l.pid from pg_locks l
               where l.locktype = 'advisory' and l.granted and l.objsubid = 2
                 and l.database = (select oid from pg_database where datname = current_database())
                 and l.classid = ${SUBSCRIPTION_LOCK_CLASS}::int8::oid
                 and l.objid = (${subscriptionLockKey(sql`s.tenant_id`, sql`s.name`)}::int8 & 4294967295)::oid
               limit 1) as holder_pid
        from turnlog.subscriptions s order by s.name, s.tenant_id nulls first`.execute(store.db),
    )
    return rows.map((r) => {
      const holderPid = store.flavor === 'pglite' || r.holder_pid === null ? null : Number(r.holder_pid)
      return {
        name: r.name,
        tenantId: r.tenant_id,
        checkpoint: checkpointFromRow(r.tx_id, r.global_position),
        delivered: Number(r.delivered),
        createdAt: iso(r.created_at),
        updatedAt: iso(r.updated_at),
        lastError: r.last_error,
        active: store.flavor === 'pglite' ? isClaimedInProcess(store.db, r.name) : holderPid !== null,
        holderPid,
      }
    })
  } catch (error) {
    throw mapDatabaseError(error)
  }
}
