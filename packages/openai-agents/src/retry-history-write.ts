import { isTurnlogError } from '@turnlog/core'
import type { RetryOptions } from '@turnlog/postgres'
import { retryWhile } from '@turnlog/postgres/internal'

/** Errors a history write raises itself: final, never retried (a stale suffix, a reused operation id). */
const finalErrors = new WeakSet<object>()

/** Marks `error` as final for {@link retryHistoryWrite} and returns it. */
export function finalError<E extends object>(error: E): E {
  finalErrors.add(error)
  return error
}

/**
 * Runs a read-decide-write `attempt` again while it loses a race or its commit is ambiguous: on
 * `DB_TRANSIENT` (the connection died, perhaps after the commit) and on a store `VERSION_CONFLICT`
 * (another writer moved the session between the attempt's read and its write). Each attempt reads the
 * session again, so a retry after a commit that did land sees it and writes nothing. Exponential
 * back-off with full jitter, as `withRetry`; the last error is thrown as it is.
 */
export async function retryHistoryWrite<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const retryable = (error: unknown): boolean =>
    (isTurnlogError(error, 'DB_TRANSIENT') || isTurnlogError(error, 'VERSION_CONFLICT')) && !finalErrors.has(error as object)
  return retryWhile(attempt, retryable, options)
}
