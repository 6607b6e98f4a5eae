import { sql, type Kysely, type RawBuilder } from 'kysely'

/**
 * The first key of turnlog's subscription advisory locks (`'tlsb'`); the second is `hashtext(name)`.
 * The two-key form lives apart from one-key (`bigint`) locks such as the migrator's. Two names with the
 * same hash share a lock: one then waits for the other, nothing worse.
 */
export const SUBSCRIPTION_LOCK_CLASS = 0x746c7362

function lockKey(name: string): RawBuilder<unknown> {
  return sql`${SUBSCRIPTION_LOCK_CLASS}::int4, hashtext(${name})`
}

/**
 * Takes the subscription's session-level advisory lock on `db`'s (single, dedicated) connection if it
 * is free. Held until released or the session ends, so a consumer that dies frees the name.
 */
export async function tryLockSubscription(db: Kysely<unknown>, name: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${lockKey(name)}) as ok`.execute(db)
  return rows[0]?.ok === true
}

/**
 * Takes the subscription's advisory lock for the rest of the transaction `trx` if no consumer holds it
 * (transaction- and session-level advisory locks conflict), so no consumer starts meanwhile.
 */
export async function tryLockSubscriptionForTransaction(trx: Kysely<unknown>, name: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${lockKey(name)}) as ok`.execute(trx)
  return rows[0]?.ok === true
}

/** Subscription names consumed in this process, per embedded database (PGlite has no other sessions). */
const inProcess = new WeakMap<object, Set<string>>()

/** Claims `name` on the embedded database `owner` for this process; false when already claimed. */
export function claimInProcess(owner: object, name: string): boolean {
  let names = inProcess.get(owner)
  if (names === undefined) {
    names = new Set()
    inProcess.set(owner, names)
  }
  if (names.has(name)) return false
  names.add(name)
  return true
}

/** True when `name` is claimed on `owner` in this process. */
export function isClaimedInProcess(owner: object, name: string): boolean {
  return inProcess.get(owner)?.has(name) === true
}

/** Releases a claim made by {@link claimInProcess}. */
export function releaseInProcess(owner: object, name: string): void {
  inProcess.get(owner)?.delete(name)
}
