import {
  TurnlogError,
  isTurnlogError,
  type ImportSessionsOptions,
  type ImportSessionsResult,
  type ImportedSession,
  type SessionId,
} from '@turnlog/core'
import { checkOptions, guardInput } from '@turnlog/core/internal'
import type { Kysely } from 'kysely'
import { prepareImportedSession } from './prepare-imported-session.js'
import { SessionWriter } from './session-writer.js'

type Source = AsyncIterable<ImportedSession> | Iterable<ImportedSession>

/** The source's own failure (a read error, a throwing iterator): `IMPORT_FAILED`, unless it is already a turnlog error. */
function sourceFailure(cause: unknown): TurnlogError {
  if (isTurnlogError(cause)) return cause
  let reason: string = typeof cause
  try {
    if (cause instanceof Error) reason = cause.message
  } catch {
    // a revoked Proxy thrown as an error
  }
  return new TurnlogError('IMPORT_FAILED', `the import source failed (${reason})`, { details: { field: 'sessions' }, cause })
}

/** An iterator over `source` whose failures (a throwing getter, trap or `next`) are turnlog errors. */
function iteratorOf(source: Source): { next(): Promise<IteratorResult<unknown>>; close(): Promise<void> } {
  const ok =
    typeof source === 'object' &&
    source !== null &&
    guardInput('sessions', () => Symbol.asyncIterator in source || Symbol.iterator in source)
  if (!ok)
    throw new TurnlogError('INVALID_INPUT', 'sessions must be an iterable or async iterable of sessions', {
      details: { field: 'sessions' },
    })
  const asyncItems = guardInput('sessions', () => (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator]?.())
  const syncItems = asyncItems === undefined ? guardInput('sessions', () => (source as Iterable<unknown>)[Symbol.iterator]()) : undefined
  return {
    async next() {
      try {
        return asyncItems !== undefined ? await asyncItems.next() : (syncItems as Iterator<unknown>).next()
      } catch (cause) {
        throw sourceFailure(cause)
      }
    },
    async close() {
      await Promise.resolve(asyncItems?.return?.() ?? syncItems?.return?.()).catch(() => {})
    },
  }
}

/**
 * `SessionStore.importSessions` on Postgres and PGlite (see the port's description): takes complete
 * sessions from `source` in order, checks each, and writes them in batches through
 * `turnlog.import_events` (one transaction per batch, one batch in flight while the next is taken),
 * in the caller's transaction when `db` is one (then one session per batch).
 */
export async function importSessions(
  db: Kysely<unknown>,
  source: Source,
  options: ImportSessionsOptions = {},
): Promise<ImportSessionsResult> {
  // checked before anything is written: onSession runs after a session has committed
  checkOptions(options, 'importSessions options', ['onSession'])
  const onSession = guardInput('importSessions options', () => (options as { onSession?: unknown }).onSession) as
    ImportSessionsOptions['onSession'] | undefined
  if (onSession !== undefined && typeof onSession !== 'function') {
    throw new TurnlogError('INVALID_INPUT', 'onSession must be a function', { details: { field: 'onSession' } })
  }
  const items = iteratorOf(source)
  const sessionIds: SessionId[] = []
  let eventsWritten = 0
  let eventsSkipped = 0
  const writer = new SessionWriter(db, (session, { written, skipped }) => {
    eventsWritten += written
    eventsSkipped += skipped
    sessionIds.push(session.id)
    onSession?.({ sessionId: session.id, written, skipped })
  })
  const seen = new Set<string>()
  let finished = false
  try {
    for (;;) {
      const next = await items.next()
      if (next.done === true) {
        finished = true
        break
      }
      const prepared = prepareImportedSession(next.value)
      const { id, line } = prepared.session
      if (seen.has(id))
        throw new TurnlogError('IMPORT_FAILED', `line ${line}: session ${id} appears twice in the import`, {
          details: { line, sessionId: id },
        })
      seen.add(id)
      await writer.add(prepared)
      const paused = writer.pause(prepared.events.length + 1)
      if (paused) await paused
    }
    await writer.flush()
  } catch (error) {
    // stopped early: close the source (its own cleanup runs), commit what came before, throw the earliest error
    if (!finished) await items.close()
    return await writer.abort(error)
  }
  return { sessions: sessionIds.length, eventsWritten, eventsSkipped, sessionIds }
}
