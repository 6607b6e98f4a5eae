import { TurnlogError, parseSessionId, type SessionId } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'

/** Options for `PostgresStore.findSessionIds`. */
export interface FindSessionIdsOptions {
  /** The most ids to return, 1–1000; default 100. */
  readonly limit?: number
}

const FRAGMENT = /^[0-9a-f-]{1,1000}$/

/**
 * The ids of the sessions whose id (as text, lower case) starts or ends with `fragment`, in id order,
 * at most `limit`: how a shortened id (`…9c67eeb6`) is resolved. `fragment` is hex digits and hyphens
 * (1–1000 characters, any case; longer than an id matches nothing); `INVALID_INPUT` otherwise. Sessions of other tenants stay invisible
 * where row level security applies.
 */
export async function findSessionIds(db: Kysely<unknown>, fragment: unknown, options: FindSessionIdsOptions = {}): Promise<SessionId[]> {
  if (typeof fragment !== 'string' || !FRAGMENT.test(fragment.toLowerCase())) {
    throw new TurnlogError('INVALID_INPUT', 'fragment must be 1 to 1000 hex digits and hyphens (part of a session id)', {
      details: { field: 'fragment' },
    })
  }
  if (typeof options !== 'object' || options === null || guardInput('findSessionIds options', () => Array.isArray(options))) {
    throw new TurnlogError('INVALID_INPUT', 'findSessionIds options must be an object', { details: { field: 'options' } })
  }
  const limit = guardInput('findSessionIds options', () => options.limit) ?? 100
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
    throw new TurnlogError('INVALID_INPUT', 'limit must be an integer from 1 to 1000', { details: { field: 'limit' } })
  }
  const text = fragment.toLowerCase()
  try {
    // the fragment holds only hex digits and hyphens, so it has no LIKE wildcard; bound all the same
    const { rows } = await sql<{ id: string }>`
      select session_id::text as id from turnlog.sessions
       where session_id::text like ${`${text}%`} or session_id::text like ${`%${text}`}
       order by session_id limit ${limit}`.execute(db)
    return rows.map((r) => parseSessionId(r.id))
  } catch (error) {
    throw mapDatabaseError(error)
  }
}
