import { sqlState } from './map-database-error.js'

/**
 * True when a statement's error proves that nothing of it was committed: the server refused the
 * statement itself (a serialization failure or deadlock, turnlog's own refusals, bad data, a constraint)
 * and its transaction rolled back. Connection losses, server shutdowns and terminated backends are not
 * such proof (the commit may have happened before the error), nor is an error without a SQLSTATE.
 */
export function statementRolledBack(error: unknown): boolean {
  const state = sqlState(error)
  if (state === undefined) return false
  if (state.startsWith('TL')) return true
  // refusals raised while the statement ran, never at or after its commit; a cancel (57014) is not in
  // the list: it can arrive as the statement finishes
  return ['40', '22', '23', '42', '55'].some((prefix) => state.startsWith(prefix))
}
