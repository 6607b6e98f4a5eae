import { TurnlogError } from '@turnlog/core'
import { checkCallOptions, preview } from '../check-arguments.js'
import { oldestOpenTransaction, type OldestOpenTransactionOptions, type OpenTransactionInfo } from '../subscriptions/oldest-open-transaction.js'
import { subscribe, type SubscribeOptions, type SubscriptionConfig } from '../subscriptions/subscribe.js'
import type { Subscription, SubscriptionHandler } from '../subscriptions/subscription.js'
import type { StoreContext } from './store-context.js'

/** The store's subscriptions (docs/subscriptions.md) and what holds their readers back. */
export class AdminOperations {
  readonly #ctx: StoreContext
  readonly #subscriptions = new Set<Subscription>()

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
    ctx.onClose(async () => {
      await Promise.all([...this.#subscriptions].map((s) => s.stop()))
    })
  }

  /** See `PostgresStore.subscribe`; `close()` stops the subscriptions started here. */
  subscribe(config: SubscriptionConfig, handler: SubscriptionHandler, options: SubscribeOptions = {}): Subscription {
    this.#ctx.assertOpen()
    const subscription = subscribe(this.#ctx.subscriptionHost(), config, handler, options)
    this.#subscriptions.add(subscription)
    void subscription.done.catch(() => {}).finally(() => this.#subscriptions.delete(subscription))
    return subscription
  }

  /** See `PostgresStore.oldestOpenTransaction`. */
  async oldestOpenTransaction(options: OldestOpenTransactionOptions = {}): Promise<OpenTransactionInfo | null> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'oldestOpenTransaction options')
    if (options.scope !== undefined && options.scope !== 'cluster' && options.scope !== 'database') {
      throw new TurnlogError('INVALID_INPUT', `scope must be 'cluster' or 'database', got ${preview(options.scope)}`)
    }
    return this.#ctx.run((db) => oldestOpenTransaction(db, options))
  }
}
