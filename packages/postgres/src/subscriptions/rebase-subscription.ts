import { TurnlogError } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'
import { checkSafeText, describeValue } from '../safe-text.js'
import { START_CHECKPOINT, checkpointFromRow, parseCheckpoint, type Checkpoint } from './checkpoint.js'
import { OWN_TENANT, isClaimedInProcess, tryLockSubscriptionForTransaction } from './subscription-lock.js'

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
  /** The checkpoint's tenant (null: none); `rebaseAfterRestore` run by the owner rebases every tenant's. */
  readonly tenantId: string | null
  readonly from: Checkpoint
  readonly to: Checkpoint
}

/** The store members the admin functions use (a `PostgresStore`). */
export interface SubscriptionAdminStore {
  readonly db: Kysely<unknown>
  readonly flavor: 'postgres' | 'pglite'
}

/** How a store runs an admin function's work: checked open (`STORE_CLOSED`), and waited for by its `close()`. */
type AdminTracker = <T>(work: () => Promise<T>) => Promise<T>

/** The tracker of every `PostgresStore` (registered by its constructor); another object passed as a store has none. */
const trackers = new WeakMap<object, AdminTracker>()

/** Registers how `store` runs the admin functions' work (see {@link onAdminStore}). */
export function registerAdminStore(store: object, track: AdminTracker): void {
  trackers.set(store, track)
}

/**
 * Runs `work` of an admin function (`listSubscriptions`, `rebaseSubscription`, `dropSubscription`,
 * `rebaseAfterRestore`) on `store` as its own calls run: a closed store gives `STORE_CLOSED` (before,
 * the destroyed driver's `DB_ERROR`), and `close()` waits for work already running.
 */
export async function onAdminStore<T>(store: SubscriptionAdminStore, work: () => Promise<T>): Promise<T> {
  const track = typeof store === 'object' && store !== null ? trackers.get(store) : undefined
  return track === undefined ? work() : track(work)
}

/** One checkpoint: its tenant (null: none) and name, the row's key. */
export interface CheckpointKey {
  readonly tenant: string | null
  readonly name: string
}

/** The checkpoint `name` of the caller's own tenant (`bound_tenant(current_user)`, as the row policies compute it). */
export async function ownCheckpoint(trx: Kysely<unknown>, name: string): Promise<CheckpointKey> {
  const { rows } = await sql<{ tenant: string | null }>`select ${OWN_TENANT} as tenant`.execute(trx)
  return { tenant: rows[0]?.tenant ?? null, name }
}

/**
 * Runs `work` in a transaction after making sure no consumer holds any of the checkpoints `keys` returns
 * (and none can start until it commits); throws `SUBSCRIPTION_LOCKED`.
 */
export async function withSubscriptionsIdle<T>(
  store: SubscriptionAdminStore,
  keys: (trx: Kysely<unknown>) => Promise<readonly CheckpointKey[]>,
  work: (trx: Kysely<unknown>, keys: readonly CheckpointKey[]) => Promise<T>,
): Promise<T> {
  try {
    return await onAdminStore(store, () =>
      store.db.transaction().execute(async (trx) => {
        const locked = await keys(trx)
        for (const { tenant, name } of locked) {
          // an embedded store runs as the owner with no tenant: its consumers are claimed by name
          const idle =
            store.flavor === 'pglite' ? !isClaimedInProcess(store.db, name) : await tryLockSubscriptionForTransaction(trx, tenant, name)
          if (!idle) {
            throw new TurnlogError('SUBSCRIPTION_LOCKED', `subscription "${name}" has an active consumer; stop it first`, {
              details: { name },
            })
          }
        }
        return work(trx, locked)
      }),
    )
  } catch (error) {
    throw mapDatabaseError(error)
  }
}

async function targetCheckpoint(trx: Kysely<unknown>, target: RebaseTarget): Promise<Checkpoint> {
  if (typeof target !== 'object' || target === null)
    throw new TurnlogError('INVALID_INPUT', 'a rebase target is required', { details: { field: 'target' } })
  if ('toStart' in target && target.toStart === true) return START_CHECKPOINT
  if ('toCheckpoint' in target) return parseCheckpoint(target.toCheckpoint, 'target.toCheckpoint')
  if ('toNow' in target && target.toNow === true) {
    const { rows } = await sql<{ tx_id: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as tx_id`.execute(trx)
    return checkpointFromRow(rows[0]?.tx_id ?? '0', 0)
  }
  if ('toGlobalPosition' in target) {
    const position = target.toGlobalPosition
    if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
      throw new TurnlogError('INVALID_INPUT', `toGlobalPosition must be a non-negative integer, got ${describeValue(position)}`, {
        details: { field: 'target.toGlobalPosition' },
      })
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
  throw new TurnlogError(
    'INVALID_INPUT',
    'a rebase target is { toStart: true }, { toNow: true }, { toGlobalPosition } or { toCheckpoint }',
    {
      details: { field: 'target' },
    },
  )
}

/**
 * Sets checkpoint `key` to `to` through `turnlog.subscription_rebase` (which applies the tenant rule):
 * the checkpoint it replaced, or undefined when there is no such row the caller may act for.
 */
export async function setCheckpoint(trx: Kysely<unknown>, key: CheckpointKey, to: Checkpoint): Promise<Checkpoint | undefined> {
  const { rows } = await sql<{ tx_id: string; global_position: string | number }>`
    select from_tx_id::text as tx_id, from_global_position as global_position
      from turnlog.subscription_rebase(${key.tenant}::text, ${key.name}, ${to.txId}::xid8, ${to.globalPosition}::bigint)`.execute(trx)
  const row = rows[0]
  return row === undefined ? undefined : checkpointFromRow(row.tx_id, row.global_position)
}

/**
 * Moves the checkpoint of a subscription name of the caller's tenant while no consumer runs
 * (`SUBSCRIPTION_LOCKED` otherwise; `SUBSCRIPTION_NOT_FOUND` for an unknown name, or one only another
 * tenant has). Use it to replay a projection, to skip ahead, or to re-position a subscription by global
 * position after a restore (see docs/subscriptions.md).
 */
export async function rebaseSubscription(store: SubscriptionAdminStore, name: string, target: RebaseTarget): Promise<RebaseResult> {
  checkSafeText(name, 'name')
  const notFound = (): TurnlogError => new TurnlogError('SUBSCRIPTION_NOT_FOUND', `no subscription named "${name}"`, { details: { name } })
  return withSubscriptionsIdle(
    store,
    async (trx) => [await ownCheckpoint(trx, name)],
    async (trx, [key]) => {
      if (key === undefined) throw notFound()
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from turnlog.subscriptions where name = ${name} and tenant_id is not distinct from ${key.tenant}::text`.execute(
        trx,
      )
      if ((rows[0]?.n ?? 0) === 0) throw notFound()
      const to = await targetCheckpoint(trx, target)
      const from = await setCheckpoint(trx, key, to)
      if (from === undefined) throw notFound()
      return { name, tenantId: key.tenant, from, to }
    },
  )
}
