/**
 * The registry of stable error codes. Codes are never renamed or reused; docs/errors.md lists them.
 * The {@link ErrorCode} union is derived from this object, so the list and the type cannot drift.
 */
export const ERROR_CODES = {
  INVALID_MESSAGE: 'A message or payload failed validation; details.issues says where.',
  INVALID_INPUT: 'An argument other than a message is malformed (an id, an option, a limit).',
  MESSAGE_TOO_LARGE: 'A message payload exceeds the configured maximum size.',
  BATCH_TOO_LARGE: 'The messages of one call together exceed the configured maximum batch size (maxBatchBytes); nothing was written.',
  MESSAGE_CONFLICT: 'A message id is already stored with different content, or belongs to another session.',
  VERSION_CONFLICT: 'expectedVersion did not match the session version; details.actualVersion has it.',
  SESSION_NOT_FOUND: 'No session with that id (for this tenant).',
  SESSION_EXISTS: 'A session with that id exists with other attributes (tenant).',
  UNKNOWN_MESSAGE: 'A message id named by an operation is not in the session, or not live.',
  STORE_CLOSED: 'The store was closed; open a new one.',
  DB_TRANSIENT:
    'A transient database failure (connection lost, serialization failure, deadlock, shutdown); safe to retry idempotent calls.',
  DB_TIMEOUT: 'A statement or connection acquisition timed out.',
  DB_ERROR: 'A database error that is not transient; the cause has the SQLSTATE.',
  MIGRATION_FAILED: 'A schema migration failed; the database is left at the previous version.',
  CORRUPT_LOG: 'The stored log violates an invariant (broken chain, unreadable row, impossible event).',
  IMPORT_FAILED: 'An import file is malformed or does not verify.',
  PERMISSION_DENIED: 'The database role may not perform this operation.',
  SUBSCRIPTION_FAILED: 'A subscription handler kept failing after its retries; the subscription stopped before that event.',
  SUBSCRIPTION_LOCKED: 'Another consumer holds the subscription name (it is active elsewhere).',
  SUBSCRIPTION_CONFLICT: 'A subscription checkpoint moved under its consumer (compare-and-set failed); the consumer stopped.',
  SUBSCRIPTION_NOT_FOUND: 'No subscription with that name.',
  SUBSCRIPTION_REBASE_REQUIRED: 'The log or a checkpoint carries transaction ids from another cluster (a logical restore); rebase first.',
  DATA_DIR_LOCKED: 'Another live process (or this one) has the embedded data directory open; details.holder names it.',
  DATA_DIR_INVALID: 'The embedded data directory is not one: a file, a non-empty directory without a database, or a damaged database.',
  SUBSCRIPTION_STOPPED: 'The subscription was stopped before the operation (catchUp) finished.',
} as const

/** A stable, machine-readable error code. */
export type ErrorCode = keyof typeof ERROR_CODES

/**
 * The values of `details.reason` on a `MESSAGE_CONFLICT` error:
 * - `content_mismatch`: the id is stored with other content (`storedHash`, `incomingHash`);
 * - `foreign_session`: the id belongs to another session (`otherSessionId`);
 * - `seq_mismatch`: `importEvents` found another event stored at a seq of the file (`seq`, `line`,
 *   `storedHash`, `fileHash`).
 * The first two are also recorded in `turnlog.conflicts` ({@link ConflictReason}). docs/errors.md
 * names each one (a test checks it).
 * @example
 * ```ts
 * if (isTurnlogError(e, 'MESSAGE_CONFLICT') && e.details['reason'] === 'foreign_session') { … }
 * ```
 */
export const MESSAGE_CONFLICT_REASONS = ['content_mismatch', 'foreign_session', 'seq_mismatch'] as const

/** A `details.reason` of a `MESSAGE_CONFLICT` error (see {@link MESSAGE_CONFLICT_REASONS}). */
export type MessageConflictReason = (typeof MESSAGE_CONFLICT_REASONS)[number]

/** The reason of a conflict recorded in `turnlog.conflicts` (an append's, not an import's). */
export type ConflictReason = Exclude<MessageConflictReason, 'seq_mismatch'>
