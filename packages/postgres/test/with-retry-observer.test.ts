/**
 * `withRetry`'s `onRetry` is an observer (a log line, a metric): it must not change the outcome. Before,
 * an `onRetry` that threw replaced the retry with its own error: a transient failure the next attempt
 * would have survived became the observer's error, and a write whose outcome was unknown (`DB_TRANSIENT`)
 * was reported as something else. Now a throwing (or rejecting) observer is ignored: the retries go on
 * and the call settles as it would without it (docs/guarantees.md, "Retry safety").
 */
import { describe, expect, it } from '@jest/globals'
import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { withRetry } from '@turnlog/postgres'

/** A call that fails with `DB_TRANSIENT` `failures` times, then returns 'done'; counts its attempts. */
function flaky(failures: number): { fn: () => Promise<string>; attempts: () => number } {
  let n = 0
  return {
    fn: async () => {
      n++
      if (n <= failures) throw new TurnlogError('DB_TRANSIENT', `connection lost (attempt ${String(n)})`, { details: { attempt: n } })
      return 'done'
    },
    attempts: () => n,
  }
}

describe('withRetry with an onRetry that throws', () => {
  it('retries as if onRetry had not thrown, and returns the result', async () => {
    // given
    const call = flaky(2)
    const seen: number[] = []

    // when
    const result = await withRetry(call.fn, {
      baseDelayMs: 0,
      onRetry: (_error, attempt) => {
        seen.push(attempt)
        throw new Error('the logger is broken')
      },
    })

    // then
    expect(result).toBe('done')
    expect(call.attempts()).toBe(3)
    expect(seen).toEqual([1, 2])
  })

  it('still throws the last attempt’s own error when every attempt fails', async () => {
    // given
    const call = flaky(10)

    // when
    const error = await withRetry(call.fn, {
      attempts: 3,
      baseDelayMs: 0,
      onRetry: () => {
        throw new Error('the logger is broken')
      },
    }).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(error, 'DB_TRANSIENT')).toBe(true)
    expect((error as TurnlogError).details).toEqual({ attempt: 3 })
    expect(call.attempts()).toBe(3)
  })

  it('ignores an onRetry that returns a rejected promise, leaving no unhandled rejection', async () => {
    // given an async observer that rejects
    const call = flaky(1)
    const unhandled: unknown[] = []
    const listener = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', listener)
    try {
      // when
      const result = await withRetry(call.fn, {
        baseDelayMs: 0,
        onRetry: (async () => {
          throw new Error('the async logger is broken')
        }) as () => void,
      })
      await new Promise((resolve) => setTimeout(resolve, 10))

      // then
      expect(result).toBe('done')
      expect(call.attempts()).toBe(2)
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', listener)
    }
  })
})
