import { TurnlogError } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'
import { checkSafeText, describeValue } from '../safe-text.js'
import { START_CHECKPOINT, checkpointFromRow, parseCheckpoint, type Checkpoint } from './checkpoint.js'
import { isClaimedInProcess, tryLockSubscriptionForTransaction } from './subscription-lock.js'

/** Where {@link rebaseSubscription} moves a checkpoint. */
export type RebaseTarget =
  /** Deliver the whole log again. */
  | { readonly toStart: true }
  /** Skip everything readers can be handed now (as `from: 'now'`: the horizon of the oldest open transaction). */
  | { readonly toNow: true }
  /**
   * Everything with `global_position <= toGlobalPosition` counts as delivered: deliver every event with
   * a greater position (and, since positions are not commit order, possibly some below it again).
   */
  | { readonly toGlobalPosition: number }
  /** An exact checkpoint. */
  | { readonly toCheckpoint: Checkpoint }

/** Result of a rebase. */
export interface RebaseResult {
  readonly name: string
  readonly from: Checkpoint
  readonly to: Checkpoint
}

/** The store members the admin functions use (a `PostgresStore`). */
export interface SubscriptionAdminStore {
  readonly db: Kysely<unknown>
  readonly flavor: 'postgres' | 'pglite'
}

/**
 * Runs `work` in a transaction after making sure no consumer holds `name` (and none can start until it
 * commits); throws `SUBSCRIPTION_LOCKED`.
 */
export async function withSubscriptionsIdle<T>(
  store: SubscriptionAdminStore,
  names: (trx: Kysely<unknown>) => Promise<readonly string[]>,
  work: (trx: Kysely<unknown>) => Promise<T>,
): Promise<T> {
  try {
    return await store.db.transaction().execute(async (trx) => {
      for (const name of await names(trx)) {
        const idle = store.flavor === 'pglite' ? !isClaimedInProcess(store.db, name) : await tryLockSubscriptionForTransaction(trx, name)
        if (!idle) {
          throw new TurnlogError('SUBSCRIPTION_LOCKED', `subscription "${name}" has an active consumer; stop it first`, {
            details: { name },
          })
        }
      }
      return work(trx)
    })
  } catch (error) {
    throw mapDatabaseError(error)
  }
}

async function targetCheckpoint(trx: Kysely<unknown>, target: RebaseTarget): Promise<Checkpoint> {
  if (typeof target !== 'object' || target === null) throw new TurnlogError('INVALID_INPUT', 'a rebase target is required')
  if ('toStart' in target && target.toStart === true) return START_CHECKPOINT
  if ('toCheckpoint' in target) return parseCheckpoint(target.toCheckpoint, 'toCheckpoint')
  if ('toNow' in target && target.toNow === true) {
    const { rows } = await sql<{ tx_id: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as tx_id`.execute(trx)
    return checkpointFromRow(rows[0]?.tx_id ?? '0', 0)
  }
  if ('toGlobalPosition' in target) {
    const position = target.toGlobalPosition
    if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
      throw new TurnlogError('INVALID_INPUT', `toGlobalPosition must be a non-negative integer, got ${describeValue(position)}`)
    }
    // the first visible event past the position, in log order; everything before it in that order has
    // a smaller key, so the checkpoint just before it delivers every event past the position
    const { rows } = await sql<{ tx_id: string; global_position: string | number; xmin: string }>`
      select e.tx_id::text as tx_id, e.global_position, pg_snapshot_xmin(pg_current_snapshot())::text as xmin
        from turnlog.events e
       where e.global_position > ${position} and e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
       order by e.tx_id, e.global_position limit 1`.execute(trx)
    const first = rows[0]
    if (first !== undefined) return checkpointFromRow(first.tx_id, Number(first.global_position) - 1)
    const { rows: now } = await sql<{ tx_id: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as tx_id`.execute(trx)
    return checkpointFromRow(now[0]?.tx_id ?? '0', 0)
  }
  throw new TurnlogError('INVALID_INPUT', 'a rebase target is { toStart: true }, { toNow: true }, { toGlobalPosition } or { toCheckpoint }')
}

/**
 * Moves a subscription's checkpoint while no consumer runs (`SUBSCRIPTION_LOCKED` otherwise;
 * `SUBSCRIPTION_NOT_FOUND` for an unknown name). Use it to replay a projection, to skip ahead, or to
 * re-position a subscription by global position after a restore (see docs/subscriptions.md).
 */
export async function rebaseSubscription(store: SubscriptionAdminStore, name: string, target: RebaseTarget): Promise<RebaseResult> {
  checkSafeText(name, 'subscription name')
  return withSubscriptionsIdle(
    store,
    async () => [name],
    async (trx) => {
      const { rows } = await sql<{ tx_id: string; global_position: string | number }>`
        select tx_id::text as tx_id, global_position from turnlog.subscriptions where name = ${name} for update`.execute(trx)
      const row = rows[0]
      if (row === undefined) throw new TurnlogError('SUBSCRIPTION_NOT_FOUND', `no subscription named "${name}"`, { details: { name } })
      const to = await targetCheckpoint(trx, target)
      await sql`update turnlog.subscriptions set tx_id = ${to.txId}::xid8, global_position = ${to.globalPosition}::bigint,
                       updated_at = now(), last_error = null where name = ${name}`.execute(trx)
      return { name, from: checkpointFromRow(row.tx_id, row.global_position), to }
    },
  )
}
