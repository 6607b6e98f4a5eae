import { isTurnlogError } from '@turnlog/core'

/** The `code` of the TurnlogError `fn` throws, `undefined` when it returns, and a note for any other throw. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (e) {
    return isTurnlogError(e) ? e.code : `not a TurnlogError: ${String(e)}`
  }
  return undefined
}
