import type { BaseMessage } from '@langchain/core/messages'
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { TurnlogError, contentHash, isTurnlogError, messageIdFromExternal, type JsonValue, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { encodeLangChainMessage, turnlogMessageFor } from './langchain-message-codec.js'
import { recordBranchSession, rootSessionOf, type MessagesRef } from './thread-sessions.js'

/** The reason recorded with the rewind that a `REMOVE_ALL_MESSAGES` (every live message removed) becomes. */
export const REMOVE_ALL_REASON = 'langgraph: REMOVE_ALL_MESSAGES'

/** What {@link mirrorMessages} needs. */
export interface MirrorMessagesInput {
  readonly threadId: string
  /** The parent checkpoint's messages (null: none yet; the thread's root session at version 0). */
  readonly parent: MessagesRef | null
  /** The channel's new value. */
  readonly messages: readonly BaseMessage[]
  readonly serde: SerializerProtocol
  readonly tenantId: string | undefined
}

/** The scope of the ids of messages first written to `sessionId` (its `attempt`-th try, see {@link mirrorMessages}). */
export function messageScope(sessionId: string, attempt = 0): string {
  return attempt === 0 ? `langgraph:${sessionId}` : `langgraph:${sessionId}:${attempt}`
}

/** The attempt of a {@link messageScope} of `sessionId`; undefined for a scope of another session. */
function scopeAttempt(sessionId: string, scope: string): number | undefined {
  const prefix = messageScope(sessionId)
  if (scope === prefix) return 0
  if (!scope.startsWith(`${prefix}:`)) return undefined
  const n = Number(scope.slice(prefix.length + 1))
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

/**
 * Makes a turnlog session hold `messages` (ids kept) and returns where: the session and its new
 * version. Runs inside the caller's transaction (`store` bound to it).
 *
 * - The parent checkpoint's session is continued when its version is still the session's head
 *   (nothing was written after it): `sync` appends, revises (a message replaced by id) and retracts
 *   (a `RemoveMessage`) in one event per change. When no message of the parent survives (a
 *   `REMOVE_ALL_MESSAGES`), the retraction is a `rewind` from the first message, reason
 *   {@link REMOVE_ALL_REASON}, then the new messages are appended.
 * - A live message the list moves (before another live one, or after a new one: a reducer that
 *   reorders, `REMOVE_ALL_MESSAGES` followed by a summary and kept messages) is retracted and written
 *   again at its new place under the next id scope (the live list keeps log order; `sync` refuses a
 *   reorder). The messages before the first moved one keep their ids.
 * - When the session moved on after the parent (a past checkpoint continued: `updateState` on an
 *   old config, a replay), the branch is a turnlog `fork` of it at the last message the parent's
 *   list shares with the head (a new session when it shares none), recorded as the thread's; then the
 *   same sync.
 *
 * Returns undefined when a message does not serialize to JSON (the caller stores the channel as a blob).
 * A message's turnlog id is derived from its LangChain id in the scope of the session it was first
 * written to (`messageScope`); when `sync` refuses one because that id was retracted from this session
 * before (the same LangChain id removed, then added again, with the same content or another), the
 * message is written under the next scope of the session and the whole transaction is retried by the
 * caller (`attempts`); the retry folds the session's history once, so every id the list adds takes the
 * first scope it was never used in.
 */
export async function mirrorMessages(
  store: PostgresStore,
  input: MirrorMessagesInput,
  attempts: Map<string, number>,
  cache: MirrorCache,
): Promise<MirrorResult | undefined> {
  const texts: string[] = []
  for (const m of input.messages) {
    const payload = await encodeLangChainMessage(input.serde, m)
    if (payload === undefined) return undefined
    texts.push(JSON.stringify(payload))
  }
  const parent = input.parent ?? { sessionId: await rootSessionOf(store, input.threadId, input.tenantId), version: 0 }
  let target: string
  let base: readonly Message<unknown>[]
  let version: number
  const known = cache.head(parent.sessionId)
  // this saver wrote the parent's version last: the session's live list is known (a stale belief fails
  // the sync's expectedVersion, and the put runs again without it)
  const optimistic = known !== undefined && known.version === parent.version
  if (optimistic) {
    target = parent.sessionId
    base = known.messages
    version = known.version
  } else {
    const head = (await store.getSession(parent.sessionId)).version
    if (head === parent.version) {
      target = parent.sessionId
      base = head === 0 ? [] : (await store.load(target)).messages
      version = head
    } else {
      const at = parent.version === 0 ? [] : (await store.load(parent.sessionId, { at: parent.version })).messages
      const live = (await store.load(parent.sessionId)).messages
      let shared = 0
      while (shared < at.length && shared < live.length && at[shared]?.id === live[shared]?.id) shared++
      const metadata: JsonValue = {
        langgraph: { threadId: input.threadId, branchOf: { sessionId: parent.sessionId, version: parent.version } },
      }
      const last = live[shared - 1]
      target =
        last === undefined
          ? await store.createSession({ ...(input.tenantId === undefined ? {} : { tenantId: input.tenantId }), metadata })
          : await store.fork(parent.sessionId, { at: last.id, metadata })
      await recordBranchSession(store, target, parent.sessionId)
      const forked = await store.load(target)
      base = forked.messages
      version = forked.version
    }
  }
  const scopes = new Map<string, string>()
  for (const m of base) if (m.externalId !== undefined && m.externalScope !== undefined) scopes.set(m.externalId, m.externalScope)
  // after a refused re-add (this put runs again), the session's history is folded once, so that every id
  // the list adds takes at once the first scope its turnlog id was never used in: one retry, however many
  // of the list's ids were removed and added again, and how often, by a process this saver did not see
  const used = [...attempts.keys()].some((key) => key.startsWith(`${target}\u0000`)) ? (await store.state(target)).messages : undefined
  const nextScope = (key: string, at = 0): string => {
    let n = Math.max(attempts.get(key) ?? 0, cache.nextScope(key), at)
    const langchainId = key.slice(target.length + 1)
    while (used?.has(messageIdFromExternal(langchainId, messageScope(target, n))) === true) n++
    return messageScope(target, n)
  }
  const list = input.messages.map((m, i) => {
    const langchainId = m.id as string
    const scope = scopes.get(langchainId) ?? nextScope(`${target}\u0000${langchainId}`)
    return cache.message(texts[i] as string, langchainId, scope)
  })
  // turnlog's live list keeps log order (sync refuses a reorder): a live message the list moves before
  // another one, or places after a new message (a reducer that reorders, `REMOVE_ALL_MESSAGES` followed
  // by a summary and the kept messages) is retracted and written again under its next scope, as a
  // removed id added again is; the messages before the first such place keep their ids
  const at = new Map(base.map((m, i) => [m.id, i]))
  let ordered = 0
  for (let last = -1; ordered < list.length; ordered++) {
    const i = at.get((list[ordered] as Message<unknown>).id)
    if (i === undefined || i < last) break
    last = i
  }
  for (let i = ordered; i < list.length; i++) {
    const m = list[i] as Message<unknown>
    const live = at.get(m.id)
    if (live === undefined || m.externalId === undefined) continue
    const own = scopeAttempt(target, (base[live] as Message<unknown>).externalScope ?? '')
    list[i] = cache.message(texts[i] as string, m.externalId, nextScope(`${target}\u0000${m.externalId}`, own === undefined ? 0 : own + 1))
  }
  const kept = new Set(list.map((m) => m.id))
  const first = base[0]
  // the common step (the known live list, grown): an append under expectedVersion, one statement, is
  // what the sync would write; anything else, or an id the session already holds, goes through sync
  const grown = optimistic ? appendedTo(base, list) : undefined
  try {
    if (grown !== undefined) {
      const appended = await store.append(target, grown, { expectedVersion: version })
      if (appended.appended.length !== grown.length) {
        cache.forget(target)
        throw new RetryMirror(new TurnlogError('INVALID_INPUT', `session ${target} already holds a message the list adds`))
      }
      version = appended.version
    } else {
      if (first !== undefined && !base.some((m) => kept.has(m.id))) {
        version = (await store.rewind(target, { from: first.id }, { reason: REMOVE_ALL_REASON, expectedVersion: version })).version
      }
      version = (await store.sync(target, list, { expectedVersion: version })).version
    }
  } catch (error) {
    if (error instanceof RetryMirror) throw error
    // another writer moved the session after this put read it (from the saver's memory, or from the
    // store: a concurrent put continuing the same checkpoint): the put runs again and reads it again
    if (isTurnlogError(error, 'VERSION_CONFLICT')) {
      cache.forget(target)
      throw new RetryMirror(error)
    }
    // a new message whose id the session held before (retracted): the same content (not_live) or
    // another (a conflict with the retracted copy) is written under the next scope
    const readded =
      (isTurnlogError(error, 'INVALID_INPUT') && error.details?.['reason'] === 'not_live') ||
      (isTurnlogError(error, 'MESSAGE_CONFLICT') && error.details?.['reason'] === 'content_mismatch')
    if (readded) {
      const again = list.find((m) => m.id === (error as TurnlogError).details?.['messageId'] && !base.some((b) => b.id === m.id))
      if (again?.externalId !== undefined) {
        const key = `${target}\u0000${again.externalId}`
        const used = again.externalScope === undefined ? undefined : scopeAttempt(target, again.externalScope)
        attempts.set(key, (used ?? attempts.get(key) ?? 0) + 1)
        throw new RetryMirror(error)
      }
    }
    throw error
  }
  const textOf = new Map<string, string>()
  input.messages.forEach((m, i) => textOf.set(m.id as string, texts[i] as string))
  // the LangChain ids this write retracted from the scope of this session: added again, they take the next one
  const retired = new Map<string, number>()
  for (const m of base) {
    if (kept.has(m.id) || m.externalId === undefined || m.externalScope === undefined) continue
    const n = scopeAttempt(target, m.externalScope)
    if (n !== undefined) retired.set(`${target}\u0000${m.externalId}`, n + 1)
  }
  return { ref: { sessionId: target, version }, messages: list, texts: textOf, retired }
}

/**
 * The messages `list` adds to the live list `base` when it is `base` unchanged (same ids, content and
 * status, in order) followed by at least one message whose id neither holds twice: what a `sync` of
 * `list` would append and nothing else. Undefined otherwise.
 */
function appendedTo(base: readonly Message<unknown>[], list: readonly Message<unknown>[]): Message<unknown>[] | undefined {
  if (list.length <= base.length) return undefined
  for (let i = 0; i < base.length; i++) {
    const a = base[i] as Message<unknown>
    const b = list[i] as Message<unknown>
    if (a !== b && (a.id !== b.id || a.status !== b.status || contentHash(a) !== contentHash(b))) return undefined
  }
  const rest = list.slice(base.length)
  const ids = new Set(base.map((m) => m.id))
  for (const m of rest) {
    if (ids.has(m.id)) return undefined
    ids.add(m.id)
  }
  return rest
}

/** What {@link mirrorMessages} wrote: where, and the session's live list after it. */
export interface MirrorResult {
  readonly ref: MessagesRef
  readonly messages: readonly Message<unknown>[]
  /** The stored JSON text of each message of the list, by LangChain id. */
  readonly texts: ReadonlyMap<string, string>
  /** The next scope attempt of each LangChain id the write retracted from its own session's scope (key: session and LangChain id). */
  readonly retired: ReadonlyMap<string, number>
}

/**
 * What a saver remembers between puts, to skip work the common step repeats: the turnlog message of
 * each serialized LangChain message it wrote recently (no new hash or validation for an unchanged
 * message), and the live list of each session at the version it last wrote (no `load` before the
 * next step's sync). Bounded; only committed writes are remembered (`remember` after the commit).
 */
export class MirrorCache {
  readonly #messages = new Map<string, Message<Record<string, unknown>>>()
  readonly #heads = new Map<string, { readonly version: number; readonly messages: readonly Message<unknown>[] }>()
  readonly #retired = new Map<string, number>()
  readonly #limit: number

  constructor(limit = 20_000) {
    this.#limit = limit
  }

  /** The turnlog message for a serialized LangChain message (`text`), made once. */
  message(text: string, langchainId: string, scope: string): Message<Record<string, unknown>> {
    const key = `${scope}\u0000${langchainId}\u0000${text}`
    const found = this.#messages.get(key)
    if (found !== undefined) return found
    const made = turnlogMessageFor(JSON.parse(text) as Record<string, unknown>, langchainId, scope)
    if (this.#messages.size >= this.#limit) this.#messages.delete(this.#messages.keys().next().value as string)
    this.#messages.set(key, made)
    return made
  }

  /**
   * The scope attempt a LangChain id added to a session takes: past the scopes it was retracted from
   * by this saver (0 when it remembers none; a retraction by another process is learnt from the
   * refused write, see {@link mirrorMessages}).
   */
  nextScope(key: string): number {
    return this.#retired.get(key) ?? 0
  }

  /** The live list of `sessionId` at the version this saver last wrote, if it remembers one. */
  head(sessionId: string): { readonly version: number; readonly messages: readonly Message<unknown>[] } | undefined {
    return this.#heads.get(sessionId)
  }

  /** Remembers a committed write. */
  remember(result: MirrorResult): void {
    this.#heads.delete(result.ref.sessionId)
    if (this.#heads.size >= 1000) this.#heads.delete(this.#heads.keys().next().value as string)
    this.#heads.set(result.ref.sessionId, { version: result.ref.version, messages: result.messages })
    for (const [key, n] of result.retired) {
      this.#retired.delete(key)
      if (this.#retired.size >= this.#limit) this.#retired.delete(this.#retired.keys().next().value as string)
      this.#retired.set(key, n)
    }
  }

  /** Forgets what it believed of a session. */
  forget(sessionId: string): void {
    this.#heads.delete(sessionId)
  }
}

/** Thrown by {@link mirrorMessages} when the transaction must run again with a message under a new scope. */
export class RetryMirror extends Error {
  constructor(cause: unknown) {
    super('a re-added message needs a new turnlog id', { cause })
    this.name = 'RetryMirror'
  }
}
