import { parseMessageId, parseSessionId, type MessageId, type SessionId } from './ids.js'
import { TurnlogError } from './turnlog-error.js'

/**
 * Runs `parse` (a parser of one argument or option); its `INVALID_INPUT` names that argument in
 * `details.field` (docs/errors.md: "`details.field` names the argument or option at fault"), its message
 * prefixed with it, its other details and its cause kept. Any other error passes through as it is.
 */
export function withField<T>(field: string, parse: () => T): T {
  if (typeof parse !== 'function')
    throw new TurnlogError('INVALID_INPUT', 'withField needs a parse function', { details: { field: 'parse' } })
  try {
    return parse()
  } catch (error) {
    // a field that is not a string (garbage from a caller of this internal helper) names nothing
    if (!(error instanceof TurnlogError) || error.code !== 'INVALID_INPUT' || typeof field !== 'string') throw error
    throw new TurnlogError('INVALID_INPUT', `${field}: ${error.message}`, {
      details: { ...error.details, field },
      ...(error.cause === undefined ? {} : { cause: error.cause }),
    })
  }
}

/**
 * {@link parseSessionId} of an argument or option named `field` (`'sessionId'`, `'options.id'`): the
 * public parser keeps its one parameter, so `ids.map(parseSessionId)` stays what it was.
 */
export function parseSessionIdArgument(value: unknown, field: string): SessionId {
  return withField(field, () => parseSessionId(value))
}

/** {@link parseMessageId} of an argument or option named `field` (`'messageId'`, `'options.at'`). */
export function parseMessageIdArgument(value: unknown, field: string): MessageId {
  return withField(field, () => parseMessageId(value))
}
