import type { ErrorCode } from '@turnlog/core'

/**
 * turnlog's own SQLSTATEs (class `TL`), raised by its SQL functions with `raise … using errcode`, and
 * the {@link ErrorCode} each one means. The one table: {@link mapDatabaseError} maps through it, and a
 * call site that builds a richer error (a `MESSAGE_CONFLICT` with its evidence, an `IMPORT_FAILED`
 * naming the line) recognises the state with {@link customSqlState}. A test pins it to the SQL: every
 * `TL` state a migration raises is a key here, and every key is raised.
 *
 * - `TLS01`: no such session (or not visible to the caller's tenant).
 * - `TLV01`: version conflict; the detail is the actual version.
 * - `TLM01`: message conflict; the detail is a JSON list of the conflicting messages.
 * - `TLC01`: the stored log breaks an invariant (a missing predecessor).
 * - `TLC02`: an imported event's chain link does not verify; the detail names session, seq and link.
 * - `TLU01`: a message is not in the session (redaction).
 * - `TLP01`: a message new in the session came without its content (payload and data JSON `null`: the
 *   store sends a message it saw stored that way; it then sends the batch again in full).
 * - `TLA01`: an event breaks a rule of message ids the claim's key does not guard (since 0006): a fork's
 *   copy that does not name the session's fork parent, or an id the session already holds. Only a raw
 *   writer or a malformed import reaches it (an import refuses both first, naming the line).
 * @example
 * ```ts
 * if (customSqlState(error) === 'TLM01') throw await conflictWithEvidence(error)
 * ```
 */
export const CUSTOM_SQLSTATES = {
  TLS01: 'SESSION_NOT_FOUND',
  TLV01: 'VERSION_CONFLICT',
  TLM01: 'MESSAGE_CONFLICT',
  TLC01: 'CORRUPT_LOG',
  TLC02: 'IMPORT_FAILED',
  TLU01: 'UNKNOWN_MESSAGE',
  TLP01: 'INVALID_INPUT',
  TLA01: 'INVALID_INPUT',
} as const satisfies Readonly<Record<string, ErrorCode>>

/** One of turnlog's own SQLSTATEs (a key of {@link CUSTOM_SQLSTATES}). */
export type CustomSqlState = keyof typeof CUSTOM_SQLSTATES

/** True when `state` is one of turnlog's own SQLSTATEs. */
export function isCustomSqlState(state: string | undefined): state is CustomSqlState {
  return state !== undefined && Object.hasOwn(CUSTOM_SQLSTATES, state)
}

/** The SQLSTATE of a driver error when it is one of turnlog's own ({@link CUSTOM_SQLSTATES}), else undefined. */
export function customSqlState(error: unknown): CustomSqlState | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && isCustomSqlState(code) ? code : undefined
}
