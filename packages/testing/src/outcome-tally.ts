import { expect } from '@jest/globals'
import { ERROR_CODES, isTurnlogError, type ErrorCode, type TurnlogError } from '@turnlog/core'
import { describeThrown } from './bad-input-kit.js'

/** The codes bad input to an importer (`importEvents`, `importHermes`, …) may get. Anything else (DB_ERROR above all) is a finding. */
export const IMPORT_INPUT_CODES: readonly ErrorCode[] = [
  'INVALID_INPUT',
  'INVALID_MESSAGE',
  'MESSAGE_TOO_LARGE',
  'MESSAGE_CONFLICT',
  'SESSION_NOT_FOUND',
  'SESSION_EXISTS',
  'IMPORT_FAILED',
]

/**
 * The outcomes of a bad-input property's calls, counted by `call result` and printed after the run,
 * and the check each rejection must pass: a TurnlogError with a registry code that is one of `allowed`.
 */
export class OutcomeTally {
  readonly #counts = new Map<string, number>()
  readonly #allowed: readonly ErrorCode[]

  constructor(allowed: readonly ErrorCode[]) {
    this.#allowed = allowed
  }

  /** Counts one outcome (`importEvents ok`, `audit INVALID_INPUT`, …). */
  count(key: string): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1)
  }

  /** A rejection of `method` must be a TurnlogError with an allowed code; counts it as `method code`. */
  checkRejection(method: string, error: unknown, allowed: readonly ErrorCode[] = this.#allowed): asserts error is TurnlogError {
    if (!isTurnlogError(error)) throw new Error(`${method} threw a raw ${describeThrown(error)}`, { cause: error })
    this.count(`${method} ${error.code}`)
    expect(Object.hasOwn(ERROR_CODES, error.code)).toBe(true)
    if (!allowed.includes(error.code))
      throw new Error(`${method} answered bad input with ${error.code}: ${error.message}`, { cause: error })
  }

  /** The counts under `title`, one `call result: count` line each, sorted. */
  report(title: string): string {
    const lines = [...this.#counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`)
    return `${title} outcomes (call result: count)\n  ${lines.join('\n  ')}`
  }
}
