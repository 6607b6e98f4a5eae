import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { CUSTOM_SQLSTATES, customSqlState } from './custom-sqlstates.js'

/** SQLSTATEs after which the same call may succeed: connection loss, serialization, deadlock, shutdown. */
const TRANSIENT_SQLSTATES = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
  '08P01', // connection exceptions
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '58000', // system_error
])

/** Node and node-postgres errors (no SQLSTATE) that mean the connection broke. */
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
/** Error messages (no SQLSTATE) that mean the connection broke under a statement. */
const TRANSIENT_MESSAGE =
  /Connection terminated|connection is closed|Client has encountered a connection error|Client was closed and is not queryable|terminating connection|server closed the connection unexpectedly/

interface DriverError {
  code?: unknown
  message?: unknown
  detail?: unknown
  constraint?: unknown
}

/** The SQLSTATE of a driver error, if it has one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  try {
    const code = (error as DriverError).code
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
  } catch {
    // a Proxy or throwing getter has no SQLSTATE
    return undefined
  }
}

/** The constraint a driver error names (a unique or foreign key violation), if any. */
function constraintOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const constraint = (error as DriverError).constraint
  return typeof constraint === 'string' ? constraint : undefined
}

/**
 * True when a statement lost the race for a message id: another transaction stored the
 * same new id in another session (or the same one) after this statement classified it as new, and
 * `turnlog.message_ids`'s primary key refused the second claim. Nothing of the statement was written;
 * run it again and the id classifies as a duplicate or a `MESSAGE_CONFLICT`.
 */
export function lostMessageIdRace(error: unknown): boolean {
  return sqlState(error) === '23505' && constraintOf(error) === 'message_ids_pkey'
}

/**
 * Maps any error from the driver to a {@link TurnlogError}, in one place: turnlog's own SQLSTATEs
 * through the one table {@link CUSTOM_SQLSTATES} (`TLS01` no session, `TLV01` version conflict,
 * `TLC01` broken chain, …), the unique keys a write can
 * meet (a session id taken: `SESSION_EXISTS`; a message id taken by a concurrent writer:
 * `DB_TRANSIENT`, see {@link lostMessageIdRace}), transient failures
 * (`DB_TRANSIENT`), timeouts (`DB_TIMEOUT`), privileges (`PERMISSION_DENIED`), else `DB_ERROR`.
 * The original error is kept as `cause`.
 */
export function mapDatabaseError(error: unknown): TurnlogError {
  try {
    return mapReadable(error)
  } catch {
    // an error value that cannot be read (a Proxy, a throwing getter, no prototype): never a raw TypeError
    return new TurnlogError('DB_ERROR', 'database error (the error value could not be read)', { cause: error })
  }
}

function mapReadable(error: unknown): TurnlogError {
  if (isTurnlogError(error)) return error
  const e = (typeof error === 'object' && error !== null ? error : {}) as DriverError
  const message = typeof e.message === 'string' ? e.message : String(error)
  const state = sqlState(error)
  const details = state === undefined ? {} : { sqlState: state }
  const custom = customSqlState(error)
  if (custom !== undefined) {
    const code = CUSTOM_SQLSTATES[custom]
    switch (code) {
      case 'VERSION_CONFLICT': {
        const actual = Number(e.detail)
        return new TurnlogError(code, `version conflict: the session is at version ${actual}`, {
          details: { ...details, actualVersion: actual },
          cause: error,
        })
      }
      default:
        return new TurnlogError(code, message, { details, cause: error })
    }
  }
  switch (state) {
    case '23505': {
      const constraint = constraintOf(error)
      // a session id is global (another tenant's session hides behind row level security): taken is taken
      if (constraint === 'sessions_pkey') {
        return new TurnlogError('SESSION_EXISTS', `a session with this id already exists: ${message}`, {
          details: { ...details, constraint },
          cause: error,
        })
      }
      if (constraint === 'message_ids_pkey') {
        return new TurnlogError(
          'DB_TRANSIENT',
          `a concurrent writer stored the same message id; retry (it is then a duplicate or a conflict): ${message}`,
          {
            details: { ...details, constraint },
            cause: error,
          },
        )
      }
      break
    }
    case '57014':
      return new TurnlogError('DB_TIMEOUT', `statement timed out: ${message}`, { details, cause: error })
    case '42501':
      return new TurnlogError('PERMISSION_DENIED', message, { details, cause: error })
    default:
      break
  }
  if (state !== undefined && TRANSIENT_SQLSTATES.has(state)) {
    return new TurnlogError('DB_TRANSIENT', `transient database failure: ${message}`, { details, cause: error })
  }
  if (state === undefined) {
    if (typeof e.code === 'string' && TRANSIENT_NODE_CODES.has(e.code)) {
      return new TurnlogError('DB_TRANSIENT', `connection failure: ${message}`, { details: { nodeCode: e.code }, cause: error })
    }
    if (/timeout exceeded when trying to connect/i.test(message)) {
      return new TurnlogError('DB_TIMEOUT', `no database connection available in time (pool exhausted?): ${message}`, { cause: error })
    }
    // node-postgres' client-side `query_timeout`: the client stopped waiting, the server may still run
    // (and commit) the statement, so the outcome is unknown, as after a lost connection
    if (message === 'Query read timeout') {
      return new TurnlogError(
        'DB_TIMEOUT',
        `no answer from the database in time (query_timeout); the statement may still complete: ${message}`,
        { cause: error },
      )
    }
    if (TRANSIENT_MESSAGE.test(message)) {
      return new TurnlogError('DB_TRANSIENT', `connection failure: ${message}`, { cause: error })
    }
  }
  // a turnlog table or function that is not there: the schema was never migrated (`migrate: false`)
  if ((state === '42P01' || state === '42883' || state === '3F000') && /\bturnlog\b/.test(message)) {
    return new TurnlogError(
      'DB_ERROR',
      `database error: ${message} (the database has no turnlog schema, or an older one: run \`turnlog migrate\`, or open the store without \`migrate: false\`)`,
      { details, cause: error },
    )
  }
  return new TurnlogError('DB_ERROR', `database error: ${message}`, { details, cause: error })
}
