import { isTurnlogError } from '@turnlog/core'

/** How a write that may lose a race ended, tagged with `who` made it: done, or refused with a TurnlogError. */
export type WriteOutcome<W> =
  { readonly ok: true; readonly who: W } | { readonly ok: false; readonly who: W; readonly code: string; readonly reason: unknown }

/**
 * Runs a racing write and says how it ended: `ok`, or the TurnlogError's code and `details.reason`
 * (any other error is rethrown: a race may refuse a write, never break it).
 */
export async function writeOutcome<W>(who: W, run: () => Promise<unknown>): Promise<WriteOutcome<W>> {
  try {
    await run()
    return { ok: true, who }
  } catch (error) {
    if (!isTurnlogError(error)) throw error
    return { ok: false, who, code: error.code, reason: error.details['reason'] }
  }
}
