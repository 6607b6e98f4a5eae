import {
  TurnlogError,
  contentHash,
  isTurnlogError,
  newSessionId,
  parseSessionId,
  sessionIdFromExternal,
  splitByBatchBytes,
  type JsonValue,
  type Message,
  type OpenAIAgentsItem,
  type SessionId,
  type SessionStore,
} from '@turnlog/core'
import { checkKnownKeys, optionKeys } from '@turnlog/core/internal'
import { withRetry, type RetryOptions } from '@turnlog/postgres'
import { checkRetryOptions } from '@turnlog/postgres/internal'
import type {
  AgentInputItem,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents-core'
import { agentItemMessage, agentItemOf, type AgentItemMessage } from './agent-item-message.js'
import { HistoryLedger, type LedgerRecord } from './history-ledger.js'
import { snapshotHistoryTransaction, type HistoryTransactionSnapshot } from './history-transaction-snapshot.js'
import { planCompaction, sameItem } from './plan-compaction.js'
import { finalError, retryHistoryWrite } from './retry-history-write.js'

/** Configuration of a {@link TurnlogSession}. */
export interface TurnlogSessionConfig {
  /**
   * The turnlog store (`openStore(...)` of `turnlog` / `@turnlog/postgres`). It must offer `atomically`
   * (Postgres and PGlite stores do): history transactions, clears and large appends are one transaction.
   */
  readonly store: SessionStore
  /**
   * The conversation's key, returned by `getSessionId()`. A UUID is used as the turnlog session id
   * itself; any other string gets a derived one (`sessionIdFromExternal('openai-agents:' + key)`), so
   * the same key always opens the same conversation. Default: a new UUIDv7.
   */
  readonly sessionId?: string
  /** The tenant both sessions (the conversation and its operation ledger) belong to. */
  readonly tenantId?: string
  /** Session metadata, stored when the session is created (first use). */
  readonly metadata?: JsonValue
  /** Retries of `DB_TRANSIENT` (and of lost races, for read-decide-write calls). Default: 5 attempts. */
  readonly retry?: RetryOptions
}

/** `reason` of the turnlog events this session writes, as they appear in the log. */
export const TURNLOG_SESSION_REASONS = {
  popItem: 'openai-agents:popItem',
  clearSession: 'openai-agents:clearSession',
  replaceSuffix: 'openai-agents:applyHistoryTransaction:replace_suffix',
  /** The retraction of an operation's record from the ledger's live list, in the operation's transaction. */
  historyTransaction: 'openai-agents:applyHistoryTransaction',
  compaction: 'openai-agents:replaceHistoryWithCompaction',
} as const

const invalid = (message: string, field: string): TurnlogError => new TurnlogError('INVALID_INPUT', message, { details: { field } })

/** Every key of a {@link TurnlogSessionConfig}: a misspelt `sessionId` would open a new conversation. */
const CONFIG_KEYS = optionKeys<TurnlogSessionConfig>({ store: true, sessionId: true, tenantId: true, metadata: true, retry: true })
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * An OpenAI Agents SDK `Session` (`@openai/agents-core` 0.20) stored in turnlog: every history item is
 * one message in the built-in `openai-agents` format, in one turnlog session, and every change is an
 * appended event. Nothing is deleted: `popItem` and `clearSession` are rewinds (`messages_retracted`
 * events naming the ids they remove from the live view), rewrites are revisions, compaction is a
 * turnlog compaction; `store.redact` erases content.
 *
 * Implements the SDK's optional capabilities too: `applyHistoryTransaction`
 * (`SessionHistoryTransactionAwareSession`: idempotent by operation id, atomic),
 * `applyHistoryMutations` (`SessionHistoryRewriteAwareSession`) and `replaceHistoryWithCompaction`.
 * @example
 * ```ts
 * const store = await openStore({ connectionString: process.env.DATABASE_URL })
 * const session = new TurnlogSession({ store, sessionId: 'user-42' })
 * const result = await run(agent, 'What is the weather in Paris?', { session })
 * ```
 */
export class TurnlogSession implements SessionHistoryTransactionAwareSession, SessionHistoryRewriteAwareSession {
  /** The turnlog session holding the items (`store.load(session.turnlogSessionId)`). */
  readonly turnlogSessionId: SessionId
  /** The companion session recording applied history operations (see `HistoryLedger`). */
  readonly ledgerSessionId: SessionId
  readonly #key: string
  readonly #store: SessionStore
  readonly #tenantId: string | undefined
  readonly #metadata: JsonValue | undefined
  readonly #retry: RetryOptions
  #ready: Promise<void> | undefined
  /**
   * A write that threw after an attempt that may have committed (a lost connection after the retries, a
   * client-side `query_timeout`): a `popItem`'s pop, or an `addItems` call's messages (ids minted once).
   * The next call settles it if it is the same call again (a retry: `popItem`, or `addItems` of the same
   * items); any other call ends it, so that call's write is a new one.
   */
  #unsettled: { readonly pop: PopAttempt } | { readonly add: readonly AgentItemMessage[] } | undefined

  /**
   * Throws `INVALID_INPUT` for a malformed config, a store without `atomically`, or a key that is not
   * one of the config's or of `retry`'s (`details.field` naming it: `config.sesionId`,
   * `config.retry.atempts`, with `details.suggestion` when one is near).
   */
  constructor(config: TurnlogSessionConfig) {
    if (typeof config !== 'object' || config === null) throw invalid('TurnlogSession needs a config object { store }', 'config')
    checkKnownKeys(config, CONFIG_KEYS, 'config', 'TurnlogSession')
    const { store, sessionId, tenantId, metadata, retry } = config
    if (typeof store !== 'object' || store === null || typeof store.load !== 'function') {
      throw invalid('TurnlogSession needs a turnlog store (openStore(...))', 'store')
    }
    if (typeof store.atomically !== 'function') {
      throw invalid('TurnlogSession needs a store with atomically (the Postgres and PGlite stores have it)', 'store')
    }
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
      throw invalid('sessionId must be a non-empty string', 'sessionId')
    }
    if (tenantId !== undefined && (typeof tenantId !== 'string' || tenantId === ''))
      throw invalid('tenantId must be a non-empty string', 'tenantId')
    if (retry !== undefined && (typeof retry !== 'object' || retry === null)) throw invalid('retry must be an object', 'retry')
    // values too, here: a bad `attempts` met at the first retry would fail a write that had only lost a race
    if (retry !== undefined) checkRetryOptions(retry, 'config.retry', 'TurnlogSession')
    this.#store = store
    this.#key = sessionId ?? newSessionId()
    this.turnlogSessionId = UUID.test(this.#key)
      ? parseSessionId(this.#key.toLowerCase())
      : sessionIdFromExternal(`openai-agents:${this.#key}`)
    this.ledgerSessionId = HistoryLedger.sessionId(this.turnlogSessionId)
    this.#tenantId = tenantId
    this.#metadata = metadata
    this.#retry = retry ?? {}
  }

  /** The conversation's key (the `sessionId` given, or the minted id); creates the sessions on first use. */
  async getSessionId(): Promise<string> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    await this.#ensure()
    return this.#key
  }

  /**
   * The live items in order, as fresh copies; with `limit`, the latest `limit` of them, still in
   * chronological order, for every number exactly as the SDK's `MemorySession`: none for `limit <= 0`,
   * else `items.slice(Math.max(items.length - limit, 0))`, so `Infinity` and `NaN` give every item and
   * `1.5` the latest two. A `limit` that is not a number (nor `undefined`) is `INVALID_INPUT`
   * (`details.field: 'limit'`), where `MemorySession` would coerce it.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    if (limit !== undefined && typeof limit !== 'number') throw invalid('limit must be a number', 'limit')
    const messages = await this.#live()
    if (limit === undefined) return messages.map(agentItemOf)
    // MemorySession's arithmetic, as it is: NaN fails `<= 0` and makes the start NaN, which slice reads as 0
    if (limit <= 0) return []
    return messages.slice(Math.max(messages.length - limit, 0)).map(agentItemOf)
  }

  /**
   * Appends the items in one transaction, each a new message (a UUIDv7 minted here, once: a retry after
   * an ambiguous commit re-sends the same ids and writes nothing twice). Throws `INVALID_MESSAGE` for an
   * item the `openai-agents` format refuses (nothing written).
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const earlier = this.#unsettled
    this.#unsettled = undefined
    const unsettled = earlier !== undefined && 'add' in earlier ? earlier.add : undefined
    if (!Array.isArray(items)) throw invalid('items must be an array', 'items')
    if (items.length === 0) return
    const fresh = items.map((item) => agentItemMessage(item))
    // a retry of a call that threw after its append may have committed: the same items again, in the same
    // order, go under that call's ids, so a commit that did land is a duplicate and not a second copy
    const messages = unsettled !== undefined && sameContents(unsettled, fresh) ? unsettled : fresh
    await this.#ensure()
    try {
      await this.#append(messages)
    } catch (error) {
      this.#unsettled = { add: messages }
      throw error
    }
  }

  /**
   * Retracts the newest item (a turnlog rewind, `reason: 'openai-agents:popItem'`) and returns it;
   * `undefined` when the history is empty. The item stays in the log (`transcript` shows it retracted).
   *
   * One call pops at most one item, also when a commit is ambiguous (the connection died after the
   * server committed): the rewind is written in one transaction with a ledger record whose id is minted
   * once per call (`HistoryLedger.popRecord`), and an attempt that finds that record already stored rolls
   * back and returns the item the earlier attempt popped. When the call throws after an attempt that may
   * have committed, the next call of this instance, if it is `popItem` again (a retry: the caller's
   * `withRetry`), uses the same record: it returns the item if that pop committed, and pops afresh if
   * it did not. Any other call of the instance in between (`getItems` to look, `addItems`, ...) ends
   * that: the next `popItem` is a new pop.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    await this.#ensure()
    const earlier = this.#unsettled
    this.#unsettled = undefined
    const pop = (earlier !== undefined && 'pop' in earlier ? earlier.pop : undefined) ?? {
      record: HistoryLedger.popRecord(),
      popped: undefined,
    }
    try {
      return await retryHistoryWrite(() => this.#atomically((store) => this.#pop(store, pop)), this.#retry)
    } catch (error) {
      if (error instanceof PopSettled) return error.item
      if (pop.popped !== undefined) this.#unsettled = { pop }
      throw error
    }
  }

  /**
   * Retracts every item (one rewind, `reason: 'openai-agents:clearSession'`) and resets the applied
   * operation ids (a new ledger generation), in one transaction. The items stay in the log.
   */
  async clearSession(): Promise<void> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    await this.#ensure()
    await retryHistoryWrite(
      () =>
        this.#atomically(async (store) => {
          const reason = TURNLOG_SESSION_REASONS.clearSession
          // the ledger first, then the conversation (the order every call of this class locks them in)
          const ledger = await store.load(this.ledgerSessionId)
          const head = ledger.messages[0]
          if (head !== undefined) await store.rewind(this.ledgerSessionId, { from: head.id }, { expectedVersion: ledger.version, reason })
          await store.append(this.ledgerSessionId, [HistoryLedger.generationRecord()])
          const live = await store.load(this.turnlogSessionId)
          const first = live.messages[0]
          if (first !== undefined) await store.rewind(this.turnlogSessionId, { from: first.id }, { expectedVersion: live.version, reason })
        }),
      this.#retry,
    )
  }

  /**
   * `SessionHistoryRewriteAwareSession`: applies `replace_function_call` mutations as the SDK's
   * `applySessionHistoryMutations` does (the first `function_call` with the `callId` takes the
   * replacement; later ones with that `callId` go), written by one turnlog `sync`: the replaced call is
   * a revision of its message (same id), a dropped duplicate a retraction.
   */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    const mutations = mutationsOf(args)
    if (mutations.length === 0) return
    await this.#ensure()
    await retryHistoryWrite(async () => {
      const live = await this.#store.load(this.turnlogSessionId)
      let list: readonly Message<unknown>[] = live.messages
      for (const { callId, replacement } of mutations) {
        let replaced = false
        list = list.flatMap((message) => {
          const item = message.payload as OpenAIAgentsItem
          if (item.type !== 'function_call' || item.callId !== callId) return [message]
          if (replaced) return []
          replaced = true
          return [sameItem(item, replacement) ? message : agentItemMessage(replacement, message.id)]
        })
      }
      const unchanged = list.length === live.messages.length && list.every((message, i) => message === live.messages[i])
      if (!unchanged) await this.#store.sync(this.turnlogSessionId, list, { expectedVersion: live.version })
    }, this.#retry)
  }

  /**
   * `SessionHistoryTransactionAwareSession`: applies an `append_items` or `replace_suffix` transaction
   * and records its operation id in the same database transaction. The same operation id with the same
   * transaction again (a retry, however many operations later, until `clearSession`) writes nothing;
   * with another transaction it throws `MESSAGE_CONFLICT` (`details.operationId`), and a
   * `replace_suffix` whose `expectedSuffix` is not the history's end throws `VERSION_CONFLICT`
   * (`details.reason: 'stale_suffix'`); both change nothing and record nothing (turnlog keeps the
   * refused record as conflict evidence of the ledger: `store.conflicts(ledgerSessionId)`). Items get
   * ids derived from the operation id and their index (scoped to the session and its ledger
   * generation). Invalid arguments throw `INVALID_INPUT` before anything is written. The record is
   * retracted from the ledger's live list in the same transaction (see `#applyTransaction`), so what
   * each call reads of the ledger does not grow with the operations applied.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    const transaction = snapshotHistoryTransaction(args)
    await this.#ensure()
    await retryHistoryWrite(() => this.#atomically((store) => this.#applyTransaction(store, transaction)), this.#retry)
  }

  /**
   * Replaces the history with `items` (a compaction marker and the retained suffix) by one turnlog
   * compaction (`reason: 'openai-agents:replaceHistoryWithCompaction'`): the retained items still in
   * the history keep their messages and ids, the ones before them are covered, the marker and any
   * other new item become the summary (see `planCompaction`). A no-op when the history already is
   * `items`, so a retry writes nothing twice.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    this.#unsettled = undefined // another call: a write that threw is not retried by the next one
    if (!Array.isArray(items)) throw invalid('items must be an array', 'items')
    const payloads = items.map((item) => agentItemMessage(item).payload)
    await this.#ensure()
    await retryHistoryWrite(async () => {
      const live = await this.#store.load(this.turnlogSessionId)
      const plan = planCompaction(live.messages, payloads)
      const expectedVersion = live.version
      const reason = TURNLOG_SESSION_REASONS.compaction
      if (plan.kind === 'append')
        await this.#store.append(
          this.turnlogSessionId,
          plan.items.map((item) => agentItemMessage(item)),
          { expectedVersion },
        )
      else if (plan.kind === 'retract_all') {
        const first = live.messages[0]
        if (first !== undefined) await this.#store.rewind(this.turnlogSessionId, { from: first.id }, { expectedVersion, reason })
      } else if (plan.kind === 'compact') {
        const summary = plan.summary.map((item) => agentItemMessage(item))
        // a mirror of the SDK's own compaction: what it kept is recorded as it is, split tool pairs too
        await this.#store.compact(this.turnlogSessionId, {
          covered: plan.covered,
          summary,
          reason,
          expectedVersion,
          allowSplitToolPairs: true,
        })
      }
    }, this.#retry)
  }

  /**
   * One attempt of `applyHistoryTransaction`, in one transaction. The operation's record is appended
   * first, on the ledger as read (its `expectedVersion`: a concurrent clear or operation makes this
   * attempt lose the race and read again). turnlog answers from every id the ledger ever stored, retracted
   * or not: a duplicate (same id, same transaction hash) means the operation was applied before, and
   * nothing is written; another hash is `MESSAGE_CONFLICT`. A new record is retracted again at the end
   * (with any record an earlier version of this package left live), so the ledger's live list, read by
   * every operation, holds only the generation however many operations were applied; the id stays
   * claimed, which is all a replay needs. Ledger first, then the conversation, as every call of this
   * class locks them.
   */
  async #applyTransaction(store: SessionStore, transaction: HistoryTransactionSnapshot): Promise<void> {
    const { operationId } = transaction
    const ledger = await store.load(this.ledgerSessionId)
    const generation = HistoryLedger.generation(ledger.messages)
    const record = HistoryLedger.operationRecord(this.turnlogSessionId, generation, transaction)
    let appended: readonly string[]
    try {
      ;({ appended } = await store.append(this.ledgerSessionId, [record], { expectedVersion: ledger.version }))
    } catch (error) {
      if (!isTurnlogError(error, 'MESSAGE_CONFLICT')) throw error
      throw finalError(
        new TurnlogError('MESSAGE_CONFLICT', 'session history operation was already applied with a different transaction', {
          details: { operationId, messageId: record.id, reason: 'content_mismatch', sessionId: this.turnlogSessionId },
          cause: error,
        }),
      )
    }
    if (appended.length === 0) return // applied before (a retry, or a concurrent writer of it won): nothing written
    const live = await store.load(this.turnlogSessionId)
    let kept = 0
    let rewound = false
    if (transaction.type === 'replace_suffix') {
      const start = live.messages.length - transaction.expectedSuffix.length
      const matches = start >= 0 && transaction.expectedSuffix.every((item, i) => sameItem(live.messages[start + i]?.payload, item))
      if (!matches) {
        throw finalError(
          new TurnlogError('VERSION_CONFLICT', 'session history suffix no longer matches the transaction precondition', {
            details: { operationId, reason: 'stale_suffix', actualVersion: live.version, sessionId: this.turnlogSessionId },
          }),
        )
      }
      // the replacement's leading items equal to the suffix's stay as they are (same messages, same ids)
      while (
        kept < transaction.items.length &&
        kept < transaction.expectedSuffix.length &&
        sameItem(transaction.expectedSuffix[kept], transaction.items[kept])
      )
        kept++
      const cut = live.messages[start + kept]
      if (cut !== undefined) {
        const reason = TURNLOG_SESSION_REASONS.replaceSuffix
        await store.rewind(this.turnlogSessionId, { from: cut.id }, { expectedVersion: live.version, reason })
        rewound = true
      }
    }
    const messages = transaction.items
      .slice(kept)
      .map((item, i) => agentItemMessage(item, HistoryLedger.itemId(this.turnlogSessionId, generation, operationId, kept + i)))
    if (messages.length > 0) {
      const conditional = transaction.type === 'replace_suffix' && !rewound
      await store.append(this.turnlogSessionId, messages, conditional ? { expectedVersion: live.version } : {})
    }
    // the ledger's live list as read, then this record: from the first record on (this one, or one an
    // earlier version of this package left live), retracted; the generation stays
    const oldest = ledger.messages.find((message) => (message.payload as unknown as LedgerRecord).kind !== 'generation') ?? record
    await store.rewind(this.ledgerSessionId, { from: oldest.id }, { reason: TURNLOG_SESSION_REASONS.historyTransaction })
  }

  /** The live messages, read with retries. */
  async #live(): Promise<readonly Message<unknown>[]> {
    await this.#ensure()
    const live = await withRetry(() => this.#store.load(this.turnlogSessionId), this.#retry)
    return live.messages
  }

  /** Appends in one call, or in several calls inside one transaction when the batch is over the store's limit. */
  async #append(messages: readonly AgentItemMessage[]): Promise<void> {
    const limit = this.#store.maxBatchBytes
    const runs = limit === undefined ? [messages] : splitByBatchBytes(messages, limit)
    if (runs.length <= 1) {
      await withRetry(() => this.#store.append(this.turnlogSessionId, messages), this.#retry)
      return
    }
    await withRetry(
      () =>
        this.#atomically(async (store) => {
          for (const run of runs) await store.append(this.turnlogSessionId, run)
        }),
      this.#retry,
    )
  }

  /**
   * One attempt of `popItem`, in one transaction: the call's ledger record, then the rewind of the newest
   * item, then the record retracted from the ledger's live list (ledger first, conversation second, as
   * every call of this class locks them). The record already stored (live or retracted) means an earlier
   * attempt of the call committed: this one is rolled back (`PopSettled`) and that attempt's item
   * returned. With nothing to pop and no earlier attempt, nothing is written.
   */
  async #pop(store: SessionStore, pop: PopAttempt): Promise<AgentInputItem | undefined> {
    const live = await store.load(this.turnlogSessionId)
    const last = live.messages.at(-1)
    if (last === undefined && pop.popped === undefined) return undefined
    const reason = TURNLOG_SESSION_REASONS.popItem
    const { appended } = await store.append(this.ledgerSessionId, [pop.record])
    if (appended.length === 0) throw new PopSettled(pop.popped === undefined ? undefined : agentItemOf(pop.popped))
    if (last === undefined) throw new PopSettled(undefined) // the earlier attempt did not commit: roll the record back
    await store.rewind(this.turnlogSessionId, { from: last.id }, { expectedVersion: live.version, reason })
    // The ledger stays bounded: the record leaves the ledger's live list in this same transaction. That
    // is safe because no one reads a pop record from the live list: the only question ever asked about
    // it is the append above ("is this id stored?"), which the store answers from every id the session
    // ever stored, retracted or not (a known id with the same content is a duplicate: the id's claim in
    // turnlog.message_ids is never removed, docs/guarantees.md "Idempotency and conflicts"). So a later
    // attempt of this call still finds it, and what history transactions and clears read whole (the
    // live list) holds only the generation, however often the session pops (operation records go the same way).
    // (The record is the ledger's last message: this transaction holds the ledger's lock since the append.)
    await store.rewind(this.ledgerSessionId, { from: pop.record.id }, { reason })
    pop.popped = last // before the commit, which may be ambiguous in turn
    return agentItemOf(last)
  }

  #atomically<T>(work: (store: SessionStore) => Promise<T>): Promise<T> {
    const store = this.#store
    if (store.atomically === undefined) throw invalid('the store has no atomically', 'store')
    return store.atomically<T>(work)
  }

  /** Creates the conversation's session and its ledger once per instance (idempotent; retried on failure next time). */
  #ensure(): Promise<void> {
    this.#ready ??= this.#create().catch((error: unknown) => {
      this.#ready = undefined
      throw error
    })
    return this.#ready
  }

  async #create(): Promise<void> {
    const tenant = this.#tenantId === undefined ? {} : { tenantId: this.#tenantId }
    const metadata = this.#metadata === undefined ? {} : { metadata: this.#metadata }
    await withRetry(() => this.#store.createSession({ id: this.turnlogSessionId, ...tenant, ...metadata }), this.#retry)
    const ledgerMetadata = { kind: 'openai-agents-operations', sessionId: this.turnlogSessionId }
    await withRetry(() => this.#store.createSession({ id: this.ledgerSessionId, ...tenant, metadata: ledgerMetadata }), this.#retry)
  }
}

/** The mutations of `applyHistoryMutations`, validated (replacements as checked item copies). */
function mutationsOf(args: SessionHistoryRewriteArgs): readonly { readonly callId: string; readonly replacement: OpenAIAgentsItem }[] {
  const list: unknown = typeof args === 'object' && args !== null ? (args as { mutations?: unknown }).mutations : undefined
  if (!Array.isArray(list)) throw invalid('applyHistoryMutations needs { mutations: [...] }', 'mutations')
  return list.map((mutation: unknown, i) => {
    const m = mutation as { type?: unknown; callId?: unknown; replacement?: unknown } | null
    if (typeof m !== 'object' || m === null || m.type !== 'replace_function_call') {
      throw invalid('unsupported session history mutation (only replace_function_call)', `mutations.${i}.type`)
    }
    if (typeof m.callId !== 'string' || m.callId === '') throw invalid('callId must be a non-empty string', `mutations.${i}.callId`)
    const replacement = agentItemMessage(m.replacement as OpenAIAgentsItem).payload
    if (replacement.type !== 'function_call') throw invalid('the replacement must be a function_call item', `mutations.${i}.replacement`)
    return { callId: m.callId, replacement }
  })
}

/** The state of one `popItem` call across its attempts: its ledger record and the item its latest writing attempt popped. */
interface PopAttempt {
  readonly record: Message<LedgerRecord>
  popped: Message<unknown> | undefined
}

/** Thrown inside a pop's transaction to roll it back with the call's answer (see `TurnlogSession.#pop`). */
class PopSettled {
  constructor(readonly item: AgentInputItem | undefined) {}
}

/** Whether two lists of messages hold the same payloads in the same order (content hashes). */
function sameContents(a: readonly AgentItemMessage[], b: readonly AgentItemMessage[]): boolean {
  return a.length === b.length && a.every((m, i) => contentHash(m) === contentHash(b[i] as AgentItemMessage))
}
