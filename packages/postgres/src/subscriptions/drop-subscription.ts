import { sql } from 'kysely'
import { checkSafeText } from '../safe-text.js'
import { ownCheckpoint, withSubscriptionsIdle, type SubscriptionAdminStore } from './rebase-subscription.js'

/**
 * Removes the checkpoint row of a subscription name of the caller's tenant while no consumer runs
 * (`SUBSCRIPTION_LOCKED` otherwise): true when it was there, false for an unknown name (or one only
 * another tenant has). A later subscription of the name starts afresh
 * (its `from`). Use it for throw-away consumers (`turnlog tail` without `--name` removes its own) and
 * to retire a projection; a stopped subscription's row holds nobody back, so there is no hurry.
 */
export async function dropSubscription(store: SubscriptionAdminStore, name: string): Promise<boolean> {
  checkSafeText(name, 'name')
  return withSubscriptionsIdle(
    store,
    async (trx) => [await ownCheckpoint(trx, name)],
    async (trx, [key]) => {
      const { rows } = await sql<{ dropped: boolean }>`
        select turnlog.subscription_drop(${key?.tenant ?? null}::text, ${name}) as dropped`.execute(trx)
      return rows[0]?.dropped === true
    },
  )
}
