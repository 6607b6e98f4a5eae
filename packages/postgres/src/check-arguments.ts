import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'

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

/** Checks that `value` is absent or an object (an options argument); returns it or `{}`. */
export function checkOptionsObject<T extends object>(value: T | undefined, field: string): T {
  if (value === undefined) return {} as T
  if (typeof value !== 'object' || value === null || guardInput(field, () => Array.isArray(value))) {
    throw new TurnlogError('INVALID_INPUT', `${field} must be an object`, { details: { field } })
  }
  return value
}
