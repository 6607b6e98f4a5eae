import { sql, type Kysely } from 'kysely'
import { type Checkpoint } from './checkpoint.js'

/** How far a subscription is behind. Counts stop at {@link LAG_COUNT_CAP}. */
export interface SubscriptionLag {
  /** The checkpoint the counts are from (the stored one when this consumer has not loaded it yet). */
  readonly checkpoint: Checkpoint
  /** Committed events after the checkpoint that readers can see: work waiting for the consumer. */
  readonly visible: number
  /** Committed events after the checkpoint that an older open transaction still holds back. */
  readonly heldBack: number
  /** True when a count reached the cap. */
  readonly capped: boolean
  /** Age of the next undelivered event (from its `recorded_at`), ms; null when there is none. */
  readonly nextEventAgeMs: number | null
}

/** Where {@link SubscriptionLag} counts stop. Counting is an index scan over the undelivered range. */
export const LAG_COUNT_CAP = 100_000

/** Counts the events after `checkpoint` (visible, held back) and the age of the next one: `Subscription.lag()`. */
export async function measureLag(db: Kysely<unknown>, checkpoint: Checkpoint): Promise<SubscriptionLag> {
  const after = sql`(e.tx_id, e.global_position) > (${checkpoint.txId}::xid8, ${checkpoint.globalPosition}::bigint)`
  const { rows } = await sql<{ visible: string | number; held_back: string | number; next_age_ms: string | number | null }>`
    select
      (select count(*) from (select 1 from turnlog.events e
         where ${after} and e.tx_id < pg_snapshot_xmin(pg_current_snapshot()) limit ${LAG_COUNT_CAP}) v) as visible,
      (select count(*) from (select 1 from turnlog.events e
         where ${after} and e.tx_id >= pg_snapshot_xmin(pg_current_snapshot()) limit ${LAG_COUNT_CAP}) h) as held_back,
      (select extract(epoch from (clock_timestamp() - e.recorded_at)) * 1000 from turnlog.events e
         where ${after} order by e.tx_id, e.global_position limit 1) as next_age_ms`.execute(db)
  const row = rows[0]
  const visible = Number(row?.visible ?? 0)
  const heldBack = Number(row?.held_back ?? 0)
  return {
    checkpoint,
    visible,
    heldBack,
    capped: visible >= LAG_COUNT_CAP || heldBack >= LAG_COUNT_CAP,
    nextEventAgeMs: row?.next_age_ms === null || row?.next_age_ms === undefined ? null : Math.max(0, Math.round(Number(row.next_age_ms))),
  }
}
