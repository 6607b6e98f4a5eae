import { sql } from 'kysely'
import { checkSafeText } from '../safe-text.js'
import { withSubscriptionsIdle, type SubscriptionAdminStore } from './rebase-subscription.js'

/**
 * Removes a subscription's checkpoint row while no consumer runs (`SUBSCRIPTION_LOCKED` otherwise):
 * true when it was there, false for an unknown name. A later subscription of the name starts afresh
 * (its `from`). Use it for throw-away consumers (`turnlog tail` without `--name` removes its own) and
 * to retire a projection; a stopped subscription's row holds nobody back, so there is no hurry.
 */
export async function dropSubscription(store: SubscriptionAdminStore, name: string): Promise<boolean> {
  checkSafeText(name, 'subscription name')
  return withSubscriptionsIdle(
    store,
    async () => [name],
    async (trx) => {
      const result = await sql`delete from turnlog.subscriptions where name = ${name}`.execute(trx)
      return Number(result.numAffectedRows ?? 0n) > 0
    },
  )
}
