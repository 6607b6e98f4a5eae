import { TurnlogError, type WriteOptions } from '@turnlog/core'
import { checkKnownKeys, guardInput } from '@turnlog/core/internal'

/** The option names of an options type (core's `optionKeys`), for the store's calls. */
export { optionKeys } from '@turnlog/core/internal'

/**
 * True when `value` has every method in `methods` (by shape: the caller's copy of a library may not be
 * ours). A Proxy or throwing getter counts as not having them.
 */
function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false
  try {
    return methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  } catch {
    return false
  }
}

/** Checks that `value` is a Kysely instance (or transaction); `INVALID_INPUT` naming `field` otherwise. */
export function checkKysely(value: unknown, field: string): void {
  if (!hasMethods(value, ['executeQuery', 'getExecutor'])) {
    throw new TurnlogError('INVALID_INPUT', `${field} must be a Kysely instance`, { details: { field } })
  }
}

/** Checks that `value` is a function; `INVALID_INPUT` naming `field` otherwise. */
export function checkFunction(value: unknown, field: string): void {
  if (typeof value !== 'function') throw new TurnlogError('INVALID_INPUT', `${field} must be a function`, { details: { field } })
}

/** Checks that `value` is an object with these methods; `INVALID_INPUT` naming `field` otherwise. */
export function checkMethods(value: unknown, field: string, what: string, methods: readonly string[]): void {
  if (!hasMethods(value, methods)) throw new TurnlogError('INVALID_INPUT', `${field} must be ${what}`, { details: { field } })
}

/**
 * Checks that `value` is absent or an object (an options argument) holding only the options in `known`
 * (a misspelt one is `INVALID_INPUT` naming it, see `checkKnownKeys`); returns it or `{}`.
 */
export function checkOptionsObject<T extends object>(
  value: T | undefined,
  field: string,
  known: readonly (keyof T & string)[],
  what = field,
): T {
  if (value === undefined) return {} as T
  if (typeof value !== 'object' || value === null || guardInput(field, () => Array.isArray(value))) {
    throw new TurnlogError('INVALID_INPUT', `${field} must be an object`, { details: { field } })
  }
  checkKnownKeys(value, known, field, what)
  return value
}

/**
 * Refuses a key of `value` outside `known` (`checkKnownKeys`) when `value` is an object; anything else
 * (absent, `null`, an array, a number) is left to the function the argument is passed on to, whose own
 * check names it.
 */
export function checkKeysOfObject(value: unknown, known: readonly string[], field: string, what: string): void {
  if (typeof value === 'object' && value !== null && !guardInput(field, () => Array.isArray(value)))
    checkKnownKeys(value, known, field, what)
}

/**
 * A short description of an untrusted value for an error message. Never throws: `String()` does, on
 * an object without a prototype or with a throwing `toString`.
 */
export function preview(value: unknown): string {
  if (typeof value === 'object') {
    if (value === null) return 'null'
    try {
      return Array.isArray(value) ? 'an array' : 'an object'
    } catch {
      return 'an unreadable object' // a revoked Proxy (found by the hostile-value property)
    }
  }
  if (typeof value === 'function' || typeof value === 'symbol') return `a ${typeof value}`
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)
}

/**
 * The `expectedVersion` of write options: absent, or a non-negative integer (`INVALID_INPUT` otherwise,
 * `details.field` naming it under `field`, the options argument's name: `options.expectedVersion`).
 */
export function checkExpectedVersion(options: WriteOptions | undefined, field = 'options'): number | undefined {
  const v = options?.expectedVersion
  if (v === undefined) return undefined
  if (!Number.isSafeInteger(v) || v < 0) {
    throw new TurnlogError('INVALID_INPUT', `expectedVersion must be a non-negative integer, got ${preview(v)}`, {
      details: { field: `${field}.expectedVersion` },
    })
  }
  return v
}

/**
 * An options argument must be absent or an object: a default parameter (`options = {}`) does not
 * replace `null`, and reading a field of `null` or calling a non-function would escape as a raw
 * TypeError instead of `INVALID_INPUT`. Every key it holds must be one of `known`: a misspelt option
 * (`expectedVerison`) is `INVALID_INPUT` with `details.field` naming it (`options.expectedVerison`,
 * under `field`), never a call run without it (`checkKnownKeys`). Returns a shallow copy.
 */
export function checkCallOptions<T>(value: T, what: string, known: readonly (keyof NonNullable<T> & string)[], field = 'options'): T {
  if (value !== undefined && (typeof value !== 'object' || value === null || guardInput(what, () => Array.isArray(value)))) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `${what} must be an object, got ${value === null ? 'null' : guardInput(what, () => Array.isArray(value)) ? 'an array' : typeof value}`,
      { details: { field: what } },
    )
  }
  if (value === undefined) return value
  const copy = copyOf(value as T & object, what)
  checkKnownKeys(copy, known, field, what)
  return copy
}

/**
 * A shallow copy of a caller's options object, its fields read once: a throwing getter or Proxy trap is
 * `INVALID_INPUT` here, instead of a raw error wherever a field is read later.
 */
export function copyOf<T extends object>(value: T, what: string): T {
  return guardInput(what, () => ({ ...value }))
}
