import {
  TurnlogError,
  newEventId,
  redactedPayload,
  type ChatMessage,
  type RedactOptions,
  type RedactResult,
  type SessionId,
} from '@turnlog/core'
import { parseMessageIdArgument, parseSessionIdArgument } from '@turnlog/core/internal'
import { sql } from 'kysely'
import { checkCallOptions, optionKeys } from '../check-arguments.js'
import { customSqlState } from '../custom-sqlstates.js'
import { sqlState } from '../map-database-error.js'
import { checkSafeText } from '../safe-text.js'
import type { StoreContext } from './store-context.js'

/** The options of `redact` (any other key is refused, naming it). */
const REDACT_OPTIONS = optionKeys<RedactOptions>({ reason: true })

/**
 * `redact` (see `SessionStore.redact`): a message's content scrubbed from every session of its tenant
 * (`turnlog.redact_message`). The transaction runs again (at most 5 times) when it lost a race: a
 * deadlock between two redactions locking overlapping sessions (40P01), or targets changed under it
 * (40001). A redaction is idempotent, so a retry scrubs only what is still unscrubbed. Inside a
 * caller's transaction the error goes to the caller (the transaction is aborted).
 */
export async function redactMessage(
  ctx: StoreContext,
  sessionId: string,
  messageId: string,
  options: RedactOptions = {},
): Promise<RedactResult> {
  ctx.assertOpen()
  const id = parseSessionIdArgument(sessionId, 'sessionId')
  const mid = parseMessageIdArgument(messageId, 'messageId')
  if (typeof options !== 'object' || options === null)
    throw new TurnlogError('INVALID_INPUT', 'redact options must be an object', { details: { field: 'options' } })
  options = checkCallOptions(options, 'redact options', REDACT_OPTIONS)
  if (options.reason !== undefined) checkSafeText(options.reason, 'options.reason')
  const reason = options.reason
  const lostRace = (error: unknown): boolean => {
    const state = sqlState((error as { cause?: unknown } | null)?.cause) ?? sqlState(error)
    return state === '40P01' || state === '40001'
  }
  const result = await ctx.retry(5, lostRace, () =>
    ctx.tx(async (db) => {
      await ctx.lock(db, id)
      // every session of the tenant holding the message, locked, forks committed meanwhile included: a
      // fork copies only under its parent's lock, so what is read below is every copy there will be
      await sql`select turnlog.lock_message_sessions(${id}::uuid, ${mid}::uuid)`.execute(db)
      // what turnlog.redact_message scrubs: the unscrubbed content events and the conflict evidence of
      // the message in every session of this session's tenant; it checks that this is exactly the set
      const sameTenant = sql`(select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from
                               (select t.tenant_id from turnlog.sessions t where t.session_id = ${id}))`
      const events = await sql<{ session_id: string; seq: string | number; payload: ChatMessage; format: string | null }>`
        select e.session_id::text, e.seq, e.payload, e.data->>'format' as format from turnlog.events e
         where e.message_id = ${mid} and e.content_hash is not null and e.payload_digest is null
           and (e.data->>'redacted') is null and e.session_id in ${sameTenant}`.execute(db)
      const conflicts = await sql<{ session_id: string; conflict_id: string; incoming_payload: ChatMessage }>`
        select c.session_id::text, c.conflict_id::text, c.incoming_payload from turnlog.conflicts c
         where c.message_id = ${mid} and c.session_id in ${sameTenant}`.execute(db)
      // placeholders go apart from the keys: they may keep pairing ids with NUL or lone surrogates, which
      // Postgres JSON operators refuse (the function only ever splits them with json_array_elements)
      const targets = events.rows.map((r) => ({ sessionId: r.session_id, seq: Number(r.seq) }))
      // each placeholder is a payload of its event's format (data.format; absent: openai-chat), keeping
      // its pairing ids; conflict evidence has no format of its own: it takes the message's
      const placeholders = `[${events.rows.map((r) => JSON.stringify(redactedPayload(r.payload, r.format ?? undefined))).join(',')}]`
      const evidenceFormat =
        events.rows[0]?.format ??
        (
          await sql<{ format: string | null }>`
        select e.data->>'format' as format from turnlog.events e
         where e.session_id = ${id} and e.message_id = ${mid} and e.content_hash is not null order by e.seq limit 1`.execute(db)
        ).rows[0]?.format ??
        undefined
      const evidence = conflicts.rows.map((r) => ({ sessionId: r.session_id, conflictId: r.conflict_id }))
      const evidencePlaceholders = `[${conflicts.rows.map((r) => JSON.stringify(redactedPayload(r.incoming_payload, evidenceFormat))).join(',')}]`
      const eventIds = Object.fromEntries([...new Set([id as string, ...targets.map((t) => t.sessionId)])].map((s) => [s, newEventId()]))
      try {
        const { rows } = await sql<{ session_id: string; version: string | number; scrubbed: number }>`
          select session_id::text, version, scrubbed
            from turnlog.redact_message(${id}::uuid, ${mid}::uuid, ${JSON.stringify(targets)}::json, ${placeholders}::json,
                                        ${JSON.stringify(evidence)}::json, ${evidencePlaceholders}::json,
                                        ${JSON.stringify(eventIds)}::json, ${reason === undefined ? null : JSON.stringify(reason)}::json)`.execute(
          db,
        )
        return rows.map((r) => ({ sessionId: r.session_id as SessionId, version: Number(r.version), scrubbed: Number(r.scrubbed) }))
      } catch (error) {
        if (customSqlState(error) === 'TLU01') {
          throw new TurnlogError('UNKNOWN_MESSAGE', `message ${mid} is not in session ${id}`, {
            details: { sessionId: id, messageId: mid },
            cause: error,
          })
        }
        throw error
      }
    }),
  )
  for (const s of result) ctx.observe(s.sessionId, s.version)
  const own = result.find((s) => s.sessionId === id)
  if (!own) throw new TurnlogError('DB_ERROR', 'redact_message did not report the session')
  return { version: own.version, sessions: result }
}
