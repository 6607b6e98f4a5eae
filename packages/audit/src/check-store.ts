import { TurnlogError } from '@turnlog/core'

/**
 * Checks that `store` is a session store with the methods a call uses (by shape: any `SessionStore`
 * implementation, any copy of the package); `INVALID_INPUT` naming `store` otherwise, before anything
 * is read or written. A Proxy or throwing getter counts as not a store.
 */
export function checkStore(store: unknown, methods: readonly string[]): void {
  let ok = typeof store === 'object' && store !== null
  if (ok) {
    try {
      ok = methods.every((m) => typeof (store as Record<string, unknown>)[m] === 'function')
    } catch {
      ok = false
    }
  }
  if (!ok) {
    throw new TurnlogError('INVALID_INPUT', `store must be a turnlog SessionStore (with ${methods.join(', ')})`, {
      details: { field: 'store' },
    })
  }
}
