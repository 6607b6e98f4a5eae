import { ERROR_CODES, type ErrorCode } from './error-codes.js'

/** Machine-readable details attached to an error; JSON-serialisable. */
export type ErrorDetails = Readonly<Record<string, unknown>>

/** Options accepted by the {@link TurnlogError} constructor. */
export interface TurnlogErrorOptions {
  /** Machine-readable context, e.g. `{ messageId, storedHash, incomingHash }`. */
  readonly details?: ErrorDetails
  /** The underlying error (a driver error, a zod error), kept for debugging. */
  readonly cause?: unknown
}

/**
 * The one error class turnlog throws. Guard on {@link TurnlogError.code} (see {@link isTurnlogError}),
 * never on the message text or `instanceof` across package copies.
 */
export class TurnlogError extends Error {
  /** Stable code from the registry in `error-codes.ts`. */
  readonly code: ErrorCode
  /** Machine-readable context. */
  readonly details: ErrorDetails

  /**
   * Throws `INVALID_INPUT` (a TurnlogError itself) for a `code` that is not in the registry; a message
   * that is not a string and options that cannot be read are replaced, never a raw TypeError.
   */
  constructor(code: ErrorCode, message: string, options: TurnlogErrorOptions = {}) {
    const { cause, details } = readOptions(options)
    super(typeof message === 'string' ? message : '(no message)', cause === undefined ? undefined : { cause })
    this.name = 'TurnlogError'
    if (typeof code !== 'string' || !Object.hasOwn(ERROR_CODES, code)) {
      throw new TurnlogError('INVALID_INPUT', 'a TurnlogError needs a code from the registry (ERROR_CODES)', { details: { field: 'code' } })
    }
    this.code = code
    this.details = details
  }

  /** A JSON form for logs and CLI output. */
  toJSON(): { name: string; code: ErrorCode; message: string; details: ErrorDetails } {
    return { name: this.name, code: this.code, message: this.message, details: this.details }
  }
}

/** The cause and details of constructor options; anything unreadable counts as absent. */
function readOptions(options: unknown): { cause: unknown; details: ErrorDetails } {
  try {
    if (typeof options !== 'object' || options === null) return { cause: undefined, details: {} }
    const o = options as { cause?: unknown; details?: unknown }
    const details = typeof o.details === 'object' && o.details !== null ? (o.details as ErrorDetails) : {}
    return { cause: o.cause, details }
  } catch {
    return { cause: undefined, details: {} }
  }
}

/**
 * True when `error` is a turnlog error (by shape, so it works across duplicated package copies),
 * optionally with the given code.
 * @example
 * ```ts
 * try {
 *   await store.append(session, batch, { expectedVersion })
 * } catch (e) {
 *   if (isTurnlogError(e, 'VERSION_CONFLICT')) console.log(e.details['actualVersion'])
 *   else throw e
 * }
 * ```
 */
export function isTurnlogError<C extends ErrorCode>(error: unknown, code?: C): error is TurnlogError & { readonly code: C } {
  if (typeof error !== 'object' || error === null) return false
  try {
    const e = error as { name?: unknown; code?: unknown }
    if (e.name !== 'TurnlogError' || typeof e.code !== 'string') return false
    return code === undefined || e.code === code
  } catch {
    // a Proxy or a throwing getter is not a turnlog error
    return false
  }
}
