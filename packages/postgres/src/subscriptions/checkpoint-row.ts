import { TurnlogError } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { START_CHECKPOINT, checkpointFromRow, type Checkpoint } from './checkpoint.js'
import { OWN_TENANT } from './subscription-lock.js'

/**
 * The `turnlog.subscriptions` row of one subscription name in the caller's own tenant
 * (`bound_tenant(current_user)`, as the row policies compute it): every statement a consumer runs on
 * its checkpoint (create and load, compare-and-set, listening lease, last error). Reads go through the
 * table's row policy; writes through the SECURITY DEFINER `subscription_*` functions (docs/security.md).
 */
export class CheckpointRow {
  constructor(readonly name: string) {}

  /**
   * Creates the row if new (at `from`), reads it, and refuses transaction ids from another cluster
   * (`SUBSCRIPTION_REBASE_REQUIRED`; `INVALID_INPUT` for a `from` this cluster has not reached).
   */
  async load(db: Kysely<unknown>, from: 'start' | 'now' | Checkpoint): Promise<Checkpoint> {
    const { name } = this
    const start =
      from === 'now'
        ? sql`pg_snapshot_xmin(pg_current_snapshot()), 0`
        : from === 'start'
          ? sql`'0'::xid8, 0`
          : sql`${from.txId}::xid8, ${from.globalPosition}::bigint`
    // a new name never stores a `from` this cluster has not reached: it would need a rebase before any use
    const reached = typeof from === 'object' ? sql`${from.txId}::xid8 <= pg_snapshot_xmax(pg_current_snapshot())` : sql`true`
    await sql`select turnlog.subscription_create(${OWN_TENANT}, ${name}, ${start}) where ${reached}`.execute(db)
    const { rows } = await sql<{ tx_id: string; global_position: string | number; next_tx: string; max_tx: string | null }>`
      select s.tx_id::text as tx_id, s.global_position, pg_snapshot_xmax(pg_current_snapshot())::text as next_tx,
             (select max(e.tx_id) from turnlog.events e)::text as max_tx
        from turnlog.subscriptions s where s.name = ${name} and s.tenant_id is not distinct from ${OWN_TENANT}`.execute(db)
    const row = rows[0]
    if (row === undefined && typeof from === 'object') {
      throw new TurnlogError(
        'INVALID_INPUT',
        `from.txId ${from.txId} is a transaction id this cluster has not reached (a checkpoint of another cluster?); nothing was stored`,
        {
          details: { name, from, field: 'config.from.txId' },
        },
      )
    }
    if (row === undefined)
      throw new TurnlogError('SUBSCRIPTION_NOT_FOUND', `subscription "${name}" vanished while starting`, { details: { name } })
    const next = BigInt(row.next_tx)
    if ((row.max_tx !== null && BigInt(row.max_tx) >= next) || BigInt(row.tx_id) > next) {
      throw new TurnlogError(
        'SUBSCRIPTION_REBASE_REQUIRED',
        `the log or the checkpoint of "${name}" holds transaction ids this cluster has not reached (restored from another cluster?): run rebaseAfterRestore first`,
        { details: { name, maxTxId: row.max_tx, checkpointTxId: row.tx_id, nextTxId: row.next_tx } },
      )
    }
    return checkpointFromRow(row.tx_id, row.global_position)
  }

  /** The stored checkpoint, or the start of the log when the row does not exist yet. */
  async read(db: Kysely<unknown>): Promise<Checkpoint> {
    const { rows } = await sql<{ tx_id: string; global_position: string | number }>`
      select tx_id::text as tx_id, global_position from turnlog.subscriptions
       where name = ${this.name} and tenant_id is not distinct from ${OWN_TENANT}`.execute(db)
    const row = rows[0]
    return row === undefined ? START_CHECKPOINT : checkpointFromRow(row.tx_id, row.global_position)
  }

  /** Moves the stored checkpoint from `from` (the one the consumer holds) to `to`, or throws `SUBSCRIPTION_CONFLICT`. */
  async move(db: Kysely<unknown>, from: Checkpoint, to: Checkpoint, delivered: number): Promise<void> {
    const { rows } = await sql<{ moved: boolean }>`
      select turnlog.subscription_move(${OWN_TENANT}, ${this.name}, ${from.txId}::xid8, ${from.globalPosition}::bigint,
                                       ${to.txId}::xid8, ${to.globalPosition}::bigint, ${delivered}::bigint) as moved`.execute(db)
    if (rows[0]?.moved !== true) {
      throw new TurnlogError(
        'SUBSCRIPTION_CONFLICT',
        `the checkpoint of subscription "${this.name}" was moved by someone else; this consumer stopped without writing`,
        { details: { name: this.name, expected: from, attempted: to } },
      )
    }
  }

  /** Extends the listening lease (writers notify while one is live; see migration 0002) by `leaseMs`. */
  async renewLease(db: Kysely<unknown>, leaseMs: number): Promise<void> {
    await sql`select turnlog.subscription_renew_lease(${OWN_TENANT}, ${this.name}, ${leaseMs / 1000}::float8)`.execute(db)
  }

  /** Records the error that stopped the consumer (best effort: a failure here is ignored). */
  async recordError(db: Kysely<unknown>, error: TurnlogError): Promise<void> {
    const recorded = JSON.stringify({ ...error.toJSON(), at: new Date().toISOString() })
    await sql`select turnlog.subscription_record_error(${OWN_TENANT}, ${this.name}, ${recorded}::json)`.execute(db).catch(() => {})
  }
}
