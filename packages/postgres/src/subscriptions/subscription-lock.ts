import { sql, type Kysely, type RawBuilder } from 'kysely'

/**
 * The first key of turnlog's subscription advisory locks (`'tlsb'`); the second is
 * {@link subscriptionLockKey}. The two-key form lives apart from one-key (`bigint`) locks such as the
 * migrator's. Two checkpoints whose keys collide share a lock: one then waits for the other, nothing worse.
 */
export const SUBSCRIPTION_LOCK_CLASS = 0x746c7362

/**
 * The caller's own tenant, as the row policies compute it (`bound_tenant(current_user)`): the tenant
 * of every checkpoint the store creates and names (docs/security.md).
 */
export const OWN_TENANT: RawBuilder<string | null> = sql<string | null>`turnlog.bound_tenant(current_user)`

/**
 * The second key of the lock of checkpoint (`tenant`, `name`): `hashtext(name)` without a tenant (the
 * key of every checkpoint before 0005), else `hashtext(tenant || chr(31) || name)`, so two tenants'
 * consumers of the same name do not exclude each other. The one place the key is written (the locks
 * below and `listSubscriptions`' holder lookup use it).
 */
export function subscriptionLockKey(tenant: RawBuilder<unknown>, name: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`hashtext(case when ${tenant} is null then ${name} else ${tenant} || chr(31) || ${name} end)`
}

function lockKey(tenant: RawBuilder<unknown>, name: string): RawBuilder<unknown> {
  return sql`${SUBSCRIPTION_LOCK_CLASS}::int4, ${subscriptionLockKey(tenant, sql`${name}::text`)}`
}

/**
 * Takes the session-level advisory lock of the caller's own checkpoint `name` on `db`'s (single,
 * dedicated) connection if it is free. Held until released or the session ends, so a consumer that
 * dies frees the name.
 */
export async function tryLockSubscription(db: Kysely<unknown>, name: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${lockKey(OWN_TENANT, name)}) as ok`.execute(db)
  return rows[0]?.ok === true
}

/**
 * Takes the advisory lock of checkpoint (`tenant`, `name`) for the rest of the transaction `trx` if no
 * consumer holds it (transaction- and session-level advisory locks conflict), so no consumer starts
 * meanwhile.
 */
export async function tryLockSubscriptionForTransaction(trx: Kysely<unknown>, tenant: string | null, name: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${lockKey(sql`${tenant}::text`, name)}) as ok`.execute(trx)
  return rows[0]?.ok === true
}

/** Subscription names consumed in this process, per embedded database (PGlite has no other sessions). */
const inProcess = new WeakMap<object, Set<string>>()

/** The PGlite instance behind a store's Kysely instance (see {@link registerEmbeddedDatabase}). */
const embeddedDatabases = new WeakMap<object, object>()

/**
 * Records that Kysely instance `db` runs on PGlite instance `instance`: the in-process claims of every
 * store on one instance (several `openStore({ pglite })` calls) are then one set, so two stores on one
 * database cannot consume one name at once (before, each store's Kysely instance had its own set).
 */
export function registerEmbeddedDatabase(db: object, instance: object): void {
  embeddedDatabases.set(db, instance)
}

/**
 * The embedded database behind Kysely instance `owner`: the PGlite instance it was registered with
 * ({@link registerEmbeddedDatabase}), else `owner` itself. What in-process claims, and the mark of a
 * transaction holding the one connection (`StoreContext.holdingConnection`), are kept per.
 */
export function embeddedDatabaseOf(owner: object): object {
  return embeddedDatabases.get(owner) ?? owner
}

/** Claims `name` on the embedded database `owner` for this process; false when already claimed. */
export function claimInProcess(owner: object, name: string): boolean {
  let names = inProcess.get(embeddedDatabaseOf(owner))
  if (names === undefined) {
    names = new Set()
    inProcess.set(embeddedDatabaseOf(owner), names)
  }
  if (names.has(name)) return false
  names.add(name)
  return true
}

/** True when `name` is claimed on `owner` in this process. */
export function isClaimedInProcess(owner: object, name: string): boolean {
  return inProcess.get(embeddedDatabaseOf(owner))?.has(name) === true
}

/** Releases a claim made by {@link claimInProcess}. */
export function releaseInProcess(owner: object, name: string): void {
  inProcess.get(embeddedDatabaseOf(owner))?.delete(name)
}
