import { TurnlogError } from '@turnlog/core'

/** Throws `VERSION_CONFLICT` when the caller expected another version than the session's `actual`. */
export function checkVersion(expected: number | undefined, actual: number): void {
  if (expected !== undefined && expected !== actual) {
    throw new TurnlogError('VERSION_CONFLICT', `expected version ${expected}, but the session is at ${actual}`, {
      details: { expectedVersion: expected, actualVersion: actual },
    })
  }
}
