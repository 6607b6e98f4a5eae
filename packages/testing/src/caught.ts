import { isTurnlogError, type TurnlogError } from '@turnlog/core'

/**
 * What a call threw or rejected with, or `undefined` when it settled: for tests that compare the
 * outcomes of many calls side by side. Takes a promise or a function (sync or async) to call.
 */
export async function caught(work: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof work === 'function' ? work() : work)
    return undefined
  } catch (e) {
    return e
  }
}

/**
 * What a refusal says, for tables of refused calls compared in one assertion: the `code`,
 * `details.field` and `details.suggestion` of a {@link TurnlogError}, the text of any other error, and
 * `undefined` for no error.
 */
export function refusalOf(error: unknown): unknown {
  if (error === undefined) return undefined
  return isTurnlogError(error)
    ? { code: error.code, field: error.details['field'], suggestion: error.details['suggestion'] }
    : String(error)
}

/** {@link refusalOf} what `work` (a promise, or a function to call) threw or rejected with; `undefined` when it settled. */
export async function refusal(work: Promise<unknown> | (() => unknown)): Promise<unknown> {
  return refusalOf(await caught(work))
}

/** What `promise` rejected with; throws when it fulfils (the caller expected the call to fail). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection, but the call succeeded')
}

/**
 * The {@link TurnlogError} `promise` rejected with; throws when it fulfils or rejects with anything
 * else (the caller expected a typed refusal).
 */
export async function turnlogRejection(promise: Promise<unknown>): Promise<TurnlogError> {
  const error = await promise.then(
    (value: unknown) => ({ resolved: value }),
    (e: unknown) => e,
  )
  if (!isTurnlogError(error)) throw new Error(`expected a TurnlogError, got ${JSON.stringify(error)}`)
  return error
}

/** A JSON value nested `levels` deep: `{ a: { a: … 'leaf' } }` (for depth-limit tests). */
export function nestedObject(levels: number): unknown {
  let v: unknown = 'leaf'
  for (let i = 0; i < levels; i++) v = { a: v }
  return v
}
