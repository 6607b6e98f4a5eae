import { checkKnownKeys } from './check-known-keys.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/**
 * Checks the options argument of a long-running call (an import, an audit): it must be an object (a
 * default parameter does not replace `null`), and its `onProgress` absent or a function, since
 * `onProgress` is called after a session committed, where a TypeError would escape raw with the work half
 * done. Throws `INVALID_INPUT` naming `what` in its message, and the option at fault in `details.field`
 * (`options`, `options.onProgress`). Given `known` (every option the call takes), a key outside it is
 * `INVALID_INPUT` too, naming it (`options.onProgres`, see {@link checkKnownKeys}); without it other
 * keys are not looked at.
 *
 * @example
 * ```ts
 * export async function importThing(store: SessionStore, options: { onProgress?: () => void } = {}) {
 *   checkOptions(options, 'importThing options') // INVALID_INPUT for null, [] or { onProgress: 1 }
 * }
 * ```
 */
export function checkOptions(options: unknown, what: string, known?: readonly string[]): void {
  what = typeof what === 'string' ? what : 'options'
  if (typeof options !== 'object' || options === null || guardInput(what, () => Array.isArray(options)))
    throw new TurnlogError('INVALID_INPUT', `${what} must be an object`, { details: { field: 'options' } })
  // a throwing getter or revoked Proxy is the caller's input: INVALID_INPUT, not a raw error
  const onProgress = guardInput(what, () => (options as { onProgress?: unknown }).onProgress)
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new TurnlogError('INVALID_INPUT', 'onProgress must be a function', { details: { field: 'options.onProgress' } })
  if (known !== undefined) checkKnownKeys(options, known, 'options', what)
}
