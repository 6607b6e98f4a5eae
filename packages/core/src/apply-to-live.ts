import type { ChatMessage } from './chat-message.js'
import type { Message } from './message.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/*
 * Keeping the caller's in-memory live list in step with a write the store made (rewind, compact,
 * revise, finalize). Each function is pure: it returns a new array and never changes `live`. Messages
 * the store does not know about (ephemeral scaffolding, messages not flushed yet) are kept where they
 * are, except after a rewind point (see {@link applyRewind}). When `live` held exactly the store's live
 * list (plus scaffolding), the result holds exactly what `store.load()` returns (plus that scaffolding).
 */

function checkList<M extends { readonly id: string }>(live: readonly M[]): readonly M[] {
  if (!Array.isArray(live)) throw new TurnlogError('INVALID_INPUT', 'live must be an array of messages', { details: { field: 'live' } })
  for (const m of live as readonly unknown[]) {
    if (typeof m !== 'object' || m === null || typeof (m as { id?: unknown }).id !== 'string') {
      throw new TurnlogError('INVALID_INPUT', 'live must hold messages (objects with an id)', { details: { field: 'live' } })
    }
  }
  return live
}

function checkIds(ids: unknown, field: string): ReadonlySet<string> {
  // Array.from: every slot, holes included (every() skips a sparse array's holes)
  if (!Array.isArray(ids) || !Array.from(ids as readonly unknown[]).every((id) => typeof id === 'string')) {
    throw new TurnlogError('INVALID_INPUT', `${field} must be an array of message ids`, { details: { field } })
  }
  return new Set(ids as readonly string[])
}

/**
 * The caller's live list after `store.rewind` retracted `retracted` (the result's list). A rewind
 * drops the tail of the conversation, so the caller's list is cut at its first retracted message:
 * that message and everything after it go, including scaffolding and messages not flushed yet (they
 * belonged to the attempt being undone). Retracted ids found earlier are removed too. A list holding
 * none of them comes back unchanged (a copy).
 */
export function applyRewind<M extends Message<unknown> = Message<ChatMessage>>(
  live: readonly M[],
  result: { readonly retracted: readonly string[] },
): M[] {
  return guardInput('applyRewind', () => rewindList(live, result))
}

function rewindList<M extends Message<unknown>>(live: readonly M[], result: { readonly retracted: readonly string[] }): M[] {
  const list = checkList(live)
  if (typeof result !== 'object' || result === null)
    throw new TurnlogError('INVALID_INPUT', 'applyRewind needs the rewind result', { details: { field: 'result' } })
  const gone = checkIds(result.retracted, 'retracted')
  const cut = list.findIndex((m) => gone.has(m.id))
  return (cut < 0 ? list : list.slice(0, cut)).filter((m) => !gone.has(m.id))
}

/**
 * The caller's live list after `store.compact(session, { covered, summary })`: the covered messages
 * leave, and the summary message(s) take the place of the first covered one in the caller's list (the
 * store's placement rule; at the end when the list holds none of them). Scaffolding and messages not
 * flushed yet keep their places. Summary messages already in the list are not repeated.
 */
export function applyCompact<M extends Message<unknown> = Message<ChatMessage>, S extends Message<unknown> = M>(
  live: readonly M[],
  input: { readonly covered: readonly string[]; readonly summary: S | readonly S[] },
): (M | S)[] {
  return guardInput('applyCompact', () => compactList(live, input))
}

/**
 * {@link applyCompact} unguarded, for any list of objects with an id (the placement rule once: the
 * compaction pairing check builds the list after a compaction with it). Not exported from the package.
 */
export function compactList<M extends { readonly id: string }, S extends { readonly id: string }>(
  live: readonly M[],
  input: { readonly covered: readonly string[]; readonly summary: S | readonly S[] },
): (M | S)[] {
  const list = checkList<M | S>(live)
  if (typeof input !== 'object' || input === null)
    throw new TurnlogError('INVALID_INPUT', 'applyCompact needs { covered, summary }', { details: { field: 'input' } })
  const covered = checkIds(input.covered, 'covered')
  const summary = checkList<S>(Array.isArray(input.summary) ? (input.summary as readonly S[]) : [input.summary as S])
  const summaryIds = new Set(summary.map((m) => m.id))
  const out: (M | S)[] = []
  let placed = false
  for (const m of list) {
    if (covered.has(m.id)) {
      if (!placed) out.push(...summary)
      placed = true
    } else if (!summaryIds.has(m.id)) {
      out.push(m)
    }
  }
  if (!placed) out.push(...summary)
  return out
}

/**
 * The caller's live list after `store.revise` / `store.finalize`: every copy of the message is
 * replaced by `result.message` (its new content and status). A list without it comes back unchanged.
 */
export function applyRevision<M extends Message<unknown> = Message<ChatMessage>>(
  live: readonly M[],
  result: { readonly message: Message<unknown> },
): M[] {
  return guardInput('applyRevision', () => reviseList(live, result))
}

function reviseList<M extends Message<unknown>>(live: readonly M[], result: { readonly message: Message<unknown> }): M[] {
  const list = checkList(live)
  const message = typeof result === 'object' && result !== null ? (result as { message?: unknown }).message : undefined
  if (typeof message !== 'object' || message === null || typeof (message as { id?: unknown }).id !== 'string') {
    throw new TurnlogError('INVALID_INPUT', 'applyRevision needs a result with the revised message', { details: { field: 'result' } })
  }
  // same id, new content of the same message: the caller's payload type still describes it
  const revised = message as M
  return list.map((m) => (m.id === revised.id ? revised : m))
}

/**
 * Gives a write's result its `applyTo(live)` (a non-enumerable property: results stay plain data for
 * comparisons and JSON). Used by stores.
 */
export function withApplyTo<T extends object, S = never>(result: T, applyTo: ApplyTo<S>): T & { readonly applyTo: ApplyTo<S> } {
  if (typeof result !== 'object' || result === null || typeof applyTo !== 'function') {
    throw new TurnlogError('INVALID_INPUT', 'withApplyTo needs a result object and a function', {
      details: { field: typeof applyTo === 'function' ? 'result' : 'applyTo' },
    })
  }
  guardInput('withApplyTo', () =>
    Object.defineProperty(result, 'applyTo', { value: applyTo, enumerable: false, writable: false, configurable: false }),
  )
  return result as T & { readonly applyTo: ApplyTo<S> }
}

/**
 * A write result's `applyTo(live)`: the caller's live list after the write, of the caller's own
 * message type (a list of `Message<P>` comes back as one).
 * @typeParam S - what the write adds to the list: a compaction's summary message type; `never` for the others.
 */
export type ApplyTo<S = never> = <M extends Message<unknown> = Message<ChatMessage>>(live: readonly M[]) => (M | S)[]
