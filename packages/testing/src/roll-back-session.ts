import type { PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'

/**
 * Rolls session `sessionId` back to `version` behind every store's back, as a restore of a backup taken
 * then (or a failover to a replica that missed commits) would leave it: its later events, live rows and
 * message id claims removed, its version set back. Through `store`'s own connection, which must be the
 * superuser's: triggers are off for the transaction (the log refuses deletes).
 * @example
 * ```ts
 * await rollBackSession(store, sessionId, 2)
 * ```
 */
export async function rollBackSession(store: PostgresStore, sessionId: string, version: number): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await sql`delete from turnlog.live_messages where session_id = ${sessionId} and event_seq > ${version}`.execute(trx)
    await sql`delete from turnlog.message_ids where session_id = ${sessionId}
                 and message_id in (select message_id from turnlog.events where session_id = ${sessionId} and seq > ${version})`.execute(
      trx,
    )
    await sql`delete from turnlog.events where session_id = ${sessionId} and seq > ${version}`.execute(trx)
    await sql`update turnlog.sessions set version = ${version} where session_id = ${sessionId}`.execute(trx)
  })
}
