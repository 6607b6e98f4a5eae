import { sql, type Kysely } from 'kysely'
import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { checkKysely, checkOptionsObject } from '../check-arguments.js'
import { mapDatabaseError } from '../map-database-error.js'

/** The oldest transaction holding subscription readers back (it has a transaction id and is still open). */
export interface OpenTransactionInfo {
  /** How long the transaction has been open, ms (from `xact_start`, or `prepared` for 2PC). */
  readonly ageMs: number
  /** Backend pid (`pg_terminate_backend` target); null for a prepared (two-phase) transaction. */
  readonly pid: number | null
  /** `pg_stat_activity.state` (`'idle in transaction'` is the usual culprit), or `'prepared'`. */
  readonly state: string | null
  /** Its current or last statement (the 2PC gid for a prepared transaction). Hidden without `pg_read_all_stats`. */
  readonly query: string | null
  /** Its transaction id (`backend_xid`). */
  readonly xid: string
  /** The database it runs in: a transaction in any database of the cluster holds readers back. */
  readonly database: string | null
  readonly applicationName: string | null
}

/** Options of {@link oldestOpenTransaction}. */
export interface OldestOpenTransactionOptions {
  /**
   * `'cluster'` (default): every database, since the visibility horizon is cluster-wide.
   * `'database'`: only the current database.
   */
  readonly scope?: 'cluster' | 'database'
}

interface Row {
  pid: number | null
  state: string | null
  query: string | null
  xid: string
  database: string | null
  application_name: string | null
  age_ms: string | number | null
}

/**
 * The oldest open transaction that has a transaction id (from `pg_stat_activity.backend_xid`, and
 * `pg_prepared_xacts`), or null. Subscriptions deliver only events of transactions older than every
 * open one, so this transaction delays every subscriber for as long as it stays open. Monitor its
 * `ageMs`; set `idle_in_transaction_session_timeout`. A database failure is a `TurnlogError`.
 */
export async function oldestOpenTransaction(
  db: Kysely<unknown>,
  options: OldestOpenTransactionOptions = {},
): Promise<OpenTransactionInfo | null> {
  checkKysely(db, 'db')
  options = checkOptionsObject(options, 'options', ['scope'], 'oldestOpenTransaction')
  const scope = guardInput('options', () => options.scope)
  if (scope !== undefined && scope !== 'cluster' && scope !== 'database') {
    throw new TurnlogError('INVALID_INPUT', "options.scope must be 'cluster' or 'database'", { details: { field: 'options.scope' } })
  }
  const onlyHere = options.scope === 'database'
  const { rows } = await sql<Row>`
    select pid, state, query, xid, database, application_name, age_ms from (
      select a.pid, a.state, a.query, a.backend_xid::text as xid, a.datname::text as database, a.application_name,
             extract(epoch from (clock_timestamp() - a.xact_start)) * 1000 as age_ms, age(a.backend_xid) as xid_age
        from pg_stat_activity a
       where a.backend_xid is not null and (${!onlyHere} or a.datname = current_database())
      union all
      select null, 'prepared', p.gid, p.transaction::text, p.database::text, null,
             extract(epoch from (clock_timestamp() - p.prepared)) * 1000, age(p.transaction)
        from pg_prepared_xacts p
       where ${!onlyHere} or p.database = current_database()
    ) t
    order by xid_age desc
    limit 1`
    .execute(db)
    .catch((error: unknown) => {
      throw mapDatabaseError(error)
    })
  const row = rows[0]
  if (row === undefined) return null
  return {
    ageMs: Math.max(0, Math.round(Number(row.age_ms ?? 0))),
    pid: row.pid === null ? null : Number(row.pid),
    state: row.state,
    query: row.query,
    xid: row.xid,
    database: row.database,
    applicationName: row.application_name,
  }
}
