import { TurnlogError, type ImportSessionsOptions, type ImportSessionsResult, type ImportedSession, type SessionId } from '@turnlog/core'
import { importSessions } from '../import/import-sessions.js'
import { countConflicts } from '../lookups/count-conflicts.js'
import { findSessionIds, type FindSessionIdsOptions } from '../lookups/find-session-ids.js'
import { checkCallOptions, checkKeysOfObject, optionKeys, preview } from '../check-arguments.js'
import {
  oldestOpenTransaction,
  type OldestOpenTransactionOptions,
  type OpenTransactionInfo,
} from '../subscriptions/oldest-open-transaction.js'
import { subscribe, type SubscribeOptions, type SubscriptionConfig } from '../subscriptions/subscribe.js'
import type { Subscription, SubscriptionHandler } from '../subscriptions/subscription.js'
import type { StoreContext } from './store-context.js'

/**
 * The options of the calls here (any other key is refused, naming it). The free functions behind them
 * check the values; the keys of an argument that is not an object are left to them.
 */
const OLDEST_OPEN_TRANSACTION_OPTIONS = optionKeys<OldestOpenTransactionOptions>({ scope: true })
const IMPORT_SESSIONS_OPTIONS = optionKeys<ImportSessionsOptions>({ onSession: true })
const FIND_SESSION_IDS_OPTIONS = optionKeys<FindSessionIdsOptions>({ limit: true })

/** The store's subscriptions (docs/subscriptions.md) and what holds their readers back; import and lookups. */
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
    options = checkCallOptions(options, 'oldestOpenTransaction options', OLDEST_OPEN_TRANSACTION_OPTIONS)
    if (options.scope !== undefined && options.scope !== 'cluster' && options.scope !== 'database') {
      throw new TurnlogError('INVALID_INPUT', `scope must be 'cluster' or 'database', got ${preview(options.scope)}`, {
        details: { field: 'options.scope' },
      })
    }
    return this.#ctx.run((db) => oldestOpenTransaction(db, options))
  }

  /** See `PostgresStore.importSessions`. */
  async importSessions(
    sessions: AsyncIterable<ImportedSession> | Iterable<ImportedSession>,
    options: ImportSessionsOptions = {},
  ): Promise<ImportSessionsResult> {
    checkKeysOfObject(options, IMPORT_SESSIONS_OPTIONS, 'options', 'importSessions')
    return this.#ctx.track(() => importSessions(this.#ctx.db, sessions, options))
  }

  /** See `PostgresStore.findSessionIds`. */
  async findSessionIds(fragment: string, options: FindSessionIdsOptions = {}): Promise<SessionId[]> {
    checkKeysOfObject(options, FIND_SESSION_IDS_OPTIONS, 'options', 'findSessionIds')
    return this.#ctx.track(() => findSessionIds(this.#ctx.db, fragment, options))
  }

  /** See `PostgresStore.countConflicts`. */
  async countConflicts(): Promise<number> {
    return this.#ctx.track(() => countConflicts(this.#ctx.db))
  }
}
