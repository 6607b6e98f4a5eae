import { GENESIS_HASH, TurnlogError, canonicalJson, chainHash, type MessageConflictReason } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { customSqlState } from '../custom-sqlstates.js'
import type { PreparedEvent, PreparedSession, PreparedSessionHead } from './prepare-imported-session.js'

/** What {@link writeSessions} did with one session. */
export interface SessionOutcome {
  readonly written: number
  readonly skipped: number
}

/** Separates the values of one column in a `turnlog.import_events` argument (see the function's SQL). */
const SEP = '\u001e'
/** One `turnlog.import_events` call carries at most this many events or characters of payload and data. */
export const BATCH_EVENTS = 2000
export const BATCH_SIZE = 4 << 20

interface SessionRowText {
  tenant_id: string | null
  metadata: string | null
  parent_session_id: string | null
  parent_version: string | number | null
  fork_at: string | null
}

function fail(line: number, message: string, details: Record<string, unknown> = {}): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, { details: { line, ...details } })
}

/** Checks that a session already in the store has the source's attributes; throws `SESSION_EXISTS`. */
function checkSameSession(row: SessionRowText, s: PreparedSessionHead): void {
  const stored = row.metadata === null ? null : canonicalJson(JSON.parse(row.metadata))
  const incoming = s.metadata === null ? null : canonicalJson(s.metadata)
  const storedParent = row.parent_session_id === null ? null : `${row.parent_session_id}/${Number(row.parent_version)}/${row.fork_at ?? ''}`
  const fileParent = s.parent === null ? null : `${s.parent.sessionId}/${s.parent.version}/${s.parent.at}`
  const differs: string[] = []
  if (row.tenant_id !== s.tenantId) differs.push('tenantId')
  if (stored !== incoming) differs.push('metadata')
  if (storedParent !== fileParent) differs.push('parent')
  if (differs.length > 0) {
    throw new TurnlogError(
      'SESSION_EXISTS',
      `line ${s.line}: session ${s.id} exists with another ${differs.join(', ')}; nothing of it was imported`,
      {
        details: { sessionId: s.id, line: s.line, differs },
      },
    )
  }
}

/** Throws `MESSAGE_CONFLICT` (`foreign_session`) for session `s` importing `e`, an original append of `other`. */
function foreignSession(s: PreparedSessionHead, e: PreparedEvent, other: { sessionId: string; contentHash: string | null }): TurnlogError {
  const messageId = e.messageId as string
  return new TurnlogError(
    'MESSAGE_CONFLICT',
    `line ${e.line}: message ${messageId} belongs to session ${other.sessionId}; nothing of session ${s.id} was imported`,
    {
      details: {
        sessionId: s.id,
        messageId,
        reason: 'foreign_session' satisfies MessageConflictReason,
        otherSessionId: other.sessionId,
        storedHash: other.contentHash,
        incomingHash: e.contentHash,
        seq: e.seq,
        line: e.line,
      },
    },
  )
}

/** Writes events through `turnlog.import_events`, in calls of at most a batch's size; maps `TLC02` to `IMPORT_FAILED`. */
async function insertEvents(
  db: Kysely<unknown>,
  rows: readonly { readonly session: PreparedSessionHead; readonly event: PreparedEvent }[],
): Promise<void> {
  for (let from = 0; from < rows.length;) {
    let to = from
    let size = 0
    while (to < rows.length && to - from < BATCH_EVENTS && size < BATCH_SIZE) {
      const e = (rows[to] as { event: PreparedEvent }).event
      size += (e.payloadText?.length ?? 0) + e.dataText.length
      to++
    }
    const chunk = rows.slice(from, to)
    const column = (f: (e: PreparedEvent) => string | null): string => chunk.map((r) => f(r.event) ?? '').join(SEP)
    try {
      await sql`
        select turnlog.import_events(${column((e) => e.sessionId)}, ${column((e) => String(e.seq))}, ${column((e) => e.eventId)},
          ${column((e) => e.type)}, ${column((e) => e.messageId)}, ${column((e) => e.contentHash)}, ${column((e) => e.payloadText)},
          ${column((e) => e.dataText)}, ${column((e) => e.recordedAt)}, ${column((e) => e.payloadDigest)}, ${column((e) => e.hash)})`.execute(
        db,
      )
    } catch (error) {
      if (customSqlState(error) !== 'TLC02') throw error
      let where: { sessionId?: string; seq?: number; computedHash?: string } = {}
      try {
        where = JSON.parse(String((error as { detail?: unknown }).detail)) as typeof where
      } catch {
        // no detail: the message names the event
      }
      const row = chunk.find((r) => r.session.id === where.sessionId && r.event.seq === where.seq)
      if (!row) throw error
      const e = row.event
      throw new TurnlogError(
        'IMPORT_FAILED',
        `line ${e.line}: session ${e.sessionId} seq ${e.seq}: the chain link does not verify (file ${e.hash.slice(0, 12)}…, computed ${String(where.computedHash).slice(0, 12)}…); nothing of the session was imported`,
        {
          details: { line: e.line, sessionId: e.sessionId, seq: e.seq, fileHash: e.hash, computedHash: where.computedHash ?? null },
          cause: error,
        },
      )
    }
    from = to
  }
}

/**
 * Writes complete sessions in the caller's transaction: locks the sessions that exist (in id order),
 * checks them against the source, inserts the new sessions, refuses a message that is an original
 * append of another session, and inserts every event not yet stored through `turnlog.import_events`,
 * which computes and checks each link. Throws at the first session (in source order) that cannot be
 * written; the caller's transaction then writes nothing.
 */
export async function writeSessions(db: Kysely<unknown>, batch: readonly PreparedSession[]): Promise<SessionOutcome[]> {
  const ids = batch.map((b) => b.session.id)
  const { rows: existing } = await sql<SessionRowText & { session_id: string; version: string | number }>`
    select session_id::text, tenant_id, metadata::text as metadata, parent_session_id::text, parent_version, fork_at::text, version
      from turnlog.sessions where session_id = any (string_to_array(${ids.join(',')}, ',')::uuid[])
     order by session_id for update`.execute(db)
  const rowOf = new Map(existing.map((r) => [r.session_id, r]))
  const stored = new Map<string, string[]>()
  if (existing.length > 0) {
    const { rows } = await sql<{ session_id: string; hash: string }>`
      select session_id::text, encode(hash, 'hex') as hash from turnlog.events
       where session_id = any (string_to_array(${existing.map((r) => r.session_id).join(',')}, ',')::uuid[])
       order by session_id, seq`.execute(db)
    for (const r of rows) {
      const list = stored.get(r.session_id)
      if (list) list.push(r.hash)
      else stored.set(r.session_id, [r.hash])
    }
  }

  const outcomes: SessionOutcome[] = []
  const toWrite: { session: PreparedSessionHead; event: PreparedEvent }[] = []
  const extended: { session: PreparedSessionHead; version: number }[] = []
  const created: PreparedSessionHead[] = []
  // original appends of this batch: message id → the first session of the batch appending it
  const origins = new Map<string, { session: PreparedSessionHead; event: PreparedEvent }>()
  for (const { session: s, events } of batch) {
    const row = rowOf.get(s.id)
    const have = stored.get(s.id) ?? []
    const common = Math.min(have.length, events.length)
    // the source's links of the events already stored: the database checks only the links it writes
    let prev = GENESIS_HASH
    for (let i = 0; i < common; i++) {
      const e = events[i] as PreparedEvent
      // a prepared event carries the texts the store writes: its own chain input (the database computes the same link)
      const link = chainHash(prev, e)
      if (link !== e.hash) {
        throw fail(
          e.line,
          `session ${s.id} seq ${i + 1}: the chain link does not verify (file ${e.hash.slice(0, 12)}…, computed ${link.slice(0, 12)}…)`,
          {
            sessionId: s.id,
            seq: i + 1,
            fileHash: e.hash,
            computedHash: link,
          },
        )
      }
      prev = link
    }
    if (row) checkSameSession(row, s)
    else created.push(s)
    for (let i = 0; i < common; i++) {
      const want = events[i] as PreparedEvent
      const got = have[i] as string
      if (got !== want.hash) {
        throw new TurnlogError(
          'MESSAGE_CONFLICT',
          `line ${want.line}: session ${s.id} seq ${i + 1} is stored with another event (stored ${got.slice(0, 12)}…, file ${want.hash.slice(0, 12)}…); nothing of the session was imported`,
          {
            details: {
              sessionId: s.id,
              seq: i + 1,
              line: want.line,
              storedHash: got,
              fileHash: want.hash,
              reason: 'seq_mismatch' satisfies MessageConflictReason,
            },
          },
        )
      }
    }
    outcomes.push({ written: events.length - common, skipped: common })
    if (events.length === common) continue
    if (row) extended.push({ session: s, version: events.length })
    for (let i = common; i < events.length; i++) {
      const e = events[i] as PreparedEvent
      toWrite.push({ session: s, event: e })
      if (!e.originalAppend) continue
      const first = origins.get(e.messageId as string)
      if (first === undefined) origins.set(e.messageId as string, { session: s, event: e })
      else if (first.session.id !== s.id) throw foreignSession(s, e, { sessionId: first.session.id, contentHash: first.event.contentHash })
    }
  }

  // a message originally appended here must not be an original append of another session (fork copies are not)
  if (origins.size > 0) {
    const { rows: found } = await sql<{ message_id: string; session_id: string; content_hash: string }>`
      select message_id::text, session_id::text, encode(content_hash, 'hex') as content_hash
        from turnlog.events
       -- = any (array(…)): an initplan the index can use; "in (select …)" became a sequential scan of the log
       where message_id = any (array(select x::uuid from unnest(string_to_array(${[...origins.keys()].join(',')}, ',')) as x))
         and type = 'message_appended' and (data->>'inheritedFrom') is null`.execute(db)
    const foreign = new Map<string, { sessionId: string; contentHash: string }>()
    for (const r of found) {
      if (r.session_id !== origins.get(r.message_id)?.session.id && !foreign.has(r.message_id))
        foreign.set(r.message_id, { sessionId: r.session_id, contentHash: r.content_hash })
    }
    if (foreign.size > 0) {
      // the first such event in source order
      for (const { session, event } of toWrite) {
        const other = event.originalAppend ? foreign.get(event.messageId as string) : undefined
        if (other) throw foreignSession(session, event, other)
      }
    }
  }

  if (created.length > 0) {
    const versions = new Map(batch.map((b) => [b.session.id, b.events.length]))
    const column = (f: (s: PreparedSessionHead) => string | number | null): string => JSON.stringify(created.map(f))
    // metadata through json_array_elements, which keeps each element's text (no de-escaping: it may hold
    // \u0000 or a lone surrogate, which json_to_recordset and the text functions refuse)
    await sql`
      insert into turnlog.sessions (session_id, tenant_id, version, created_at, updated_at, metadata, parent_session_id, parent_version, fork_at)
      select t.id::uuid, t.tenant, t.version::bigint, t.created::timestamptz, t.updated::timestamptz, nullif(t.metadata::text, 'null')::json,
             t.parent::uuid, t.parent_version::bigint, t.fork_at::uuid
        from rows from (json_array_elements_text(${column((s) => s.id)}::json), json_array_elements_text(${column((s) => s.tenantId)}::json),
                        json_array_elements_text(${column((s) => versions.get(s.id) ?? 0)}::json),
                        json_array_elements_text(${column((s) => s.createdAt)}::json), json_array_elements_text(${column((s) => s.updatedAt)}::json),
                        json_array_elements(${`[${created.map((s) => (s.metadata === null ? 'null' : JSON.stringify(s.metadata))).join(',')}]`}::json),
                        json_array_elements_text(${column((s) => s.parent?.sessionId ?? null)}::json),
                        json_array_elements_text(${column((s) => s.parent?.version ?? null)}::json),
                        json_array_elements_text(${column((s) => s.parent?.at ?? null)}::json))
             as t(id, tenant, version, created, updated, metadata, parent, parent_version, fork_at)`.execute(db)
  }
  await insertEvents(db, toWrite)
  if (extended.length > 0) {
    await sql`
      update turnlog.sessions s
         set version = t.version, updated_at = greatest(s.updated_at, t.updated::timestamptz)
        from json_to_recordset(${JSON.stringify(extended.map((x) => ({ id: x.session.id, version: x.version, updated: x.session.updatedAt })))}::json)
             as t(id uuid, version bigint, updated text)
       where s.session_id = t.id`.execute(db)
  }
  return outcomes
}
