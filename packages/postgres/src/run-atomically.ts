import { TurnlogError } from '@turnlog/core'
import type { Kysely, Transaction } from 'kysely'
import { mapDatabaseError } from './map-database-error.js'

/**
 * `SessionStore.atomically` on Postgres and PGlite: runs `work` against a store bound to one new
 * transaction of `db` (`bind`), or, when `db` already is the caller's transaction, against `current`
 * in it. What `work` throws is rethrown as it is (the transaction rolls back); a failure of the
 * transaction itself (begin, commit) is mapped to a turnlog error.
 */
export async function runAtomically<S, T>(
  db: Kysely<unknown>,
  current: S,
  bind: (trx: Transaction<unknown>) => S,
  work: (store: S) => Promise<T>,
): Promise<T> {
  if (typeof work !== 'function')
    throw new TurnlogError('INVALID_INPUT', 'atomically needs a function (store => Promise)', { details: { field: 'work' } })
  if (db.isTransaction) return await work(current)
  const failed: { error?: unknown } = {}
  try {
    return await db.transaction().execute(async (trx) => {
      try {
        return await work(bind(trx))
      } catch (error) {
        failed.error = error
        throw error
      }
    })
  } catch (error) {
    if ('error' in failed && error === failed.error) throw error
    throw mapDatabaseError(error)
  }
}
