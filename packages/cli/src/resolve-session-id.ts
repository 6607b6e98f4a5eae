import { TurnlogError, parseSessionId, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { CliError } from './cli-error.js'

/** The fewest hex digits a shortened id may have (the CLI prints the last 8, as `…9c67eeb6`). */
export const MIN_ID_FRAGMENT_DIGITS = 6

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** How many matches of an ambiguous fragment the error lists. */
const SHOWN_MATCHES = 5

/**
 * The hex-and-hyphen fragment of a shortened id as the CLI prints it (`…9c67eeb6`, `...9c67eeb6`,
 * `0190c5e2…`), lower-cased; undefined when it is not one (other characters, fewer than
 * {@link MIN_ID_FRAGMENT_DIGITS} hex digits).
 */
export function idFragment(text: string): string | undefined {
  const fragment = text
    .trim()
    .replace(/^(…|\.\.\.)/, '')
    .replace(/(…|\.\.\.)$/, '')
    .toLowerCase()
  if (!/^[0-9a-f-]+$/.test(fragment)) return undefined
  return fragment.replace(/-/g, '').length >= MIN_ID_FRAGMENT_DIGITS ? fragment : undefined
}

/**
 * Resolves a session id given on the command line: a full UUID as it is, or a unique start or end
 * of one (at least {@link MIN_ID_FRAGMENT_DIGITS} hex digits; the `…` the CLI prints may stay). Throws
 * `SESSION_NOT_FOUND` when no session matches, `AMBIGUOUS_ID` (listing matches) when several do, and
 * `INVALID_INPUT` for text that is neither.
 */
export async function resolveSessionId(store: PostgresStore, text: string, option = 'session id'): Promise<SessionId> {
  const trimmed = text.trim()
  if (UUID.test(trimmed)) return parseSessionId(trimmed.toLowerCase())
  const fragment = idFragment(trimmed)
  if (fragment === undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `${option} ${JSON.stringify(text.slice(0, 80))} is neither a UUID nor a shortened one: give the full id, or at least ${MIN_ID_FRAGMENT_DIGITS} hex digits of its start or end (as printed: …9c67eeb6)`,
      { details: { value: text.slice(0, 80) } },
    )
  }
  const ids = await store.findSessionIds(fragment, { limit: SHOWN_MATCHES + 1 })
  if (ids.length === 0) {
    throw new TurnlogError('SESSION_NOT_FOUND', `no session id starts or ends with ${fragment}`, { details: { fragment } })
  }
  if (ids.length > 1) {
    const shown = ids.slice(0, SHOWN_MATCHES).join(', ')
    throw new CliError(
      'AMBIGUOUS_ID',
      `${fragment} matches ${ids.length > SHOWN_MATCHES ? `more than ${SHOWN_MATCHES}` : ids.length} sessions: ${shown}${ids.length > SHOWN_MATCHES ? ', …' : ''}`,
      {
        hint: 'Give more digits, or the full id.',
      },
    )
  }
  return ids[0] as SessionId
}
