import { sql } from 'kysely'
import { checkKeysOfObject } from '../check-arguments.js'
import { checkpointFromRow, type Checkpoint } from './checkpoint.js'
import { setCheckpoint, withSubscriptionsIdle, type RebaseResult, type SubscriptionAdminStore } from './rebase-subscription.js'

/**
 * The transaction id restored events get: `2`, "frozen" (committed before every transaction of this
 * cluster). They then sort among themselves by `global_position`, before every later event.
 */
export const REBASED_TX_ID = '2'

/** Options of {@link rebaseAfterRestore}. */
export interface RebaseAfterRestoreOptions {
  /** Rewrite even when no transaction id is ahead of this cluster (the log still reads correctly then). */
  readonly force?: boolean
}

/** Result of {@link rebaseAfterRestore}. */
export interface RebaseAfterRestoreResult {
  /** True when the log held transaction ids this cluster has not reached (a rebase was needed). */
  readonly needed: boolean
  /** Events whose `tx_id` was rewritten to {@link REBASED_TX_ID}. */
  readonly eventsRewritten: number
  /** Every subscription's checkpoint, before and after. */
  readonly subscriptions: readonly RebaseResult[]
}

/**
 * Repairs the transaction order after a logical restore (pg_dump/pg_restore, or a copy) into a
 * cluster whose transaction counter is behind the source's. Restored rows keep the source's `tx_id`s:
 * readers would not see them (they look like transactions still to come) and new events would sort
 * before them. This sets every event's `tx_id` to {@link REBASED_TX_ID} (order among them:
 * `global_position`) and moves each checkpoint to just before the first event it had not delivered
 * (by position; conservative: some events may be delivered again, none skipped).
 *
 * Run it once, right after the restore and before the application writes again: events written in
 * between carry this cluster's ids and cannot be told apart. It takes every subscription's lock (no
 * consumer may run: `SUBSCRIPTION_LOCKED`) and blocks appends until it commits. It rewrites the whole
 * events table: on a large log, plan for the time and run VACUUM after. Without `force`, it changes
 * nothing when the log has no id ahead of this cluster (`needed: false`).
 */
export async function rebaseAfterRestore(
  store: SubscriptionAdminStore,
  options: RebaseAfterRestoreOptions = {},
): Promise<RebaseAfterRestoreResult> {
  // a misspelt `force` would leave the log as it is without a word
  checkKeysOfObject(options, ['force'], 'options', 'rebaseAfterRestore')
  return withSubscriptionsIdle(
    store,
    async (trx) => {
      // no append may interleave: a concurrent event would carry a real id and be rewritten or not by chance
      await sql`lock table turnlog.events in share mode`.execute(trx)
      await sql`lock table turnlog.subscriptions in share row exclusive mode`.execute(trx)
      const { rows } = await sql<{ tenant_id: string | null; name: string }>`
        select tenant_id, name from turnlog.subscriptions order by name, tenant_id nulls first`.execute(trx)
      return rows.map((r) => ({ tenant: r.tenant_id, name: r.name }))
    },
    async (trx) => {
      const { rows: probe } = await sql<{ next_tx: string; max_tx: string | null }>`
        select pg_snapshot_xmax(pg_current_snapshot())::text as next_tx, (select max(e.tx_id) from turnlog.events e)::text as max_tx`.execute(
        trx,
      )
      const next = BigInt(probe[0]?.next_tx ?? '0')
      const maxTx = probe[0]?.max_tx ?? null
      const { rows: subs } = await sql<{ tenant_id: string | null; name: string; tx_id: string; global_position: string | number }>`
        select tenant_id, name, tx_id::text as tx_id, global_position from turnlog.subscriptions order by name, tenant_id nulls first`.execute(
        trx,
      )
      const needed = (maxTx !== null && BigInt(maxTx) >= next) || subs.some((s) => BigInt(s.tx_id) > next)
      if (!needed && options.force !== true) {
        const unchanged = subs.map((s) => {
          const at = checkpointFromRow(s.tx_id, s.global_position)
          return { name: s.name, tenantId: s.tenant_id, from: at, to: at }
        })
        return { needed, eventsRewritten: 0, subscriptions: unchanged }
      }
      // each checkpoint, mapped while the old order still exists: just before the smallest position
      // among the events after it (all of which it had not delivered)
      const { rows: top } = await sql<{
        max_gp: string | number | null
      }>`select max(global_position) as max_gp from turnlog.events`.execute(trx)
      const maxGp = Number(top[0]?.max_gp ?? 0)
      const mapped: RebaseResult[] = []
      for (const s of subs) {
        const { rows } = await sql<{ first_gp: string | number | null }>`
          select min(e.global_position) as first_gp from turnlog.events e
           where (e.tx_id, e.global_position) > (${s.tx_id}::xid8, ${s.global_position}::bigint)`.execute(trx)
        const first = rows[0]?.first_gp
        const to: Checkpoint = checkpointFromRow(REBASED_TX_ID, first === null || first === undefined ? maxGp : Number(first) - 1)
        mapped.push({ name: s.name, tenantId: s.tenant_id, from: checkpointFromRow(s.tx_id, s.global_position), to })
      }
      const rewritten = await sql`update turnlog.events set tx_id = ${REBASED_TX_ID}::xid8 where tx_id <> ${REBASED_TX_ID}::xid8`.execute(
        trx,
      )
      for (const m of mapped) await setCheckpoint(trx, { tenant: m.tenantId, name: m.name }, m.to)
      return { needed, eventsRewritten: Number(rewritten.numAffectedRows ?? 0n), subscriptions: mapped }
    },
  )
}
