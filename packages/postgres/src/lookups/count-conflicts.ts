import { sql, type Kysely } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'

/**
 * How many `MESSAGE_CONFLICT` attempts the store has recorded, in every session it can see (the
 * evidence `conflicts(sessionId)` lists one session at a time).
 */
export async function countConflicts(db: Kysely<unknown>): Promise<number> {
  try {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from turnlog.conflicts`.execute(db)
    return Number(rows[0]?.n ?? 0)
  } catch (error) {
    throw mapDatabaseError(error)
  }
}
