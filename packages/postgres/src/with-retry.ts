import { isTurnlogError } from '@turnlog/core'
import { checkKnownKeys, parseInput } from '@turnlog/core/internal'
import { z } from 'zod'
import { checkFunction } from './check-arguments.js'

const RetryOptionsSchema = z.looseObject({
  attempts: z.number().int().positive().max(1000).optional(),
  baseDelayMs: z.number().finite().nonnegative().optional(),
  maxDelayMs: z.number().finite().nonnegative().optional(),
  onRetry: z
    .custom<(error: unknown, attempt: number) => void>((v) => typeof v === 'function', { message: 'must be a function' })
    .optional(),
})

/** Retry policy for {@link withRetry}. */
export interface RetryOptions {
  /** Total attempts including the first; default 5. */
  readonly attempts?: number
  /** First back-off delay in ms; doubles each time, with full jitter. Default 50. */
  readonly baseDelayMs?: number
  /** Cap on one delay in ms; default 2000. */
  readonly maxDelayMs?: number
  /**
   * Called before each retry with the error of the attempt that failed and its number (1 for the first).
   * An observer (a log line, a metric): what it throws, or a promise it returns rejecting, is ignored,
   * and the retries go on as without it; it never replaces the call's result or error.
   */
  readonly onRetry?: (error: unknown, attempt: number) => void
}

/**
 * Runs `fn`, retrying with exponential back-off while it fails with `DB_TRANSIENT`. Use it only around
 * calls that are safe to repeat after an ambiguous commit (see docs/guarantees.md): `append`,
 * `flush`, `createSession` with an id, `fork` with an id, `revise`, `compact` (same summary ids),
 * and every read. Throws `INVALID_INPUT` for a non-function `fn` or bad options (`details.field`); the
 * error `fn` throws is passed through unchanged. `options.onRetry` only observes: an error it throws
 * is ignored (the retries go on, and the call ends with `fn`'s own result or last error).
 * @example
 * ```ts
 * // append is idempotent (message ids): retrying after a lost connection stores each message once
 * const result = await withRetry(() => store.append(session, batch), { attempts: 5 })
 * ```
 */
export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  checkFunction(fn, 'fn')
  options = checkRetryOptions(options, 'options', 'withRetry')
  return retryWhile(fn, (error) => isTurnlogError(error, 'DB_TRANSIENT'), options)
}

/**
 * `options` as {@link withRetry} takes them, or `INVALID_INPUT` naming the value at fault
 * (`details.field`: `${field}.attempts`, …) or a key that is none of them (with a suggestion when one
 * is near). For a caller that keeps a retry policy to use later (checked when it is given, not at the
 * first retry). `where` names the caller in the message.
 */
export function checkRetryOptions(options: unknown, field: string, where: string): RetryOptions {
  const parsed = parseInput(RetryOptionsSchema, options, field) as RetryOptions
  // a misspelt `attempts` would retry five times where one was meant (or the other way round)
  checkKnownKeys(parsed, Object.keys(RetryOptionsSchema.shape), field, where)
  return parsed
}

/**
 * Runs `fn` again (at most `options.attempts` times in all) while its error satisfies `retryable`,
 * with exponential back-off and full jitter; the last error is thrown as it is. The loop of
 * {@link withRetry}, for callers that retry on more than `DB_TRANSIENT` (options are not checked here).
 * `onRetry` is observed as there: what it throws or rejects with is ignored.
 */
export async function retryWhile<T>(fn: () => Promise<T>, retryable: (error: unknown) => boolean, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5
  const base = options.baseDelayMs ?? 50
  const max = options.maxDelayMs ?? 2000
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn()
    } catch (error) {
      if (attempt >= attempts || !retryable(error)) throw error
      observe(options.onRetry, error, attempt)
      const delay = Math.random() * Math.min(max, base * 2 ** (attempt - 1))
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}

/**
 * Calls the observer `onRetry`, if any: what it throws is ignored, and so is a promise it returns that
 * rejects (caught here, so it is never an unhandled rejection). An observer never changes the outcome.
 */
function observe(onRetry: RetryOptions['onRetry'], error: unknown, attempt: number): void {
  if (typeof onRetry !== 'function') return
  try {
    const returned: unknown = onRetry(error, attempt)
    if (typeof returned === 'object' && returned !== null && typeof (returned as { then?: unknown }).then === 'function')
      (returned as PromiseLike<unknown>).then(undefined, () => {})
  } catch {
    // an observer's failure is not the call's
  }
}
