import {
  EVENT_TYPES,
  GENESIS_HASH,
  TurnlogError,
  canonicalJson,
  contentHash,
  isRedactedPayload,
  isTurnlogError,
  parseChatMessage,
  parseEventId,
  parseMessageId,
  parseSessionId,
  type JsonValue,
  type SessionId,
} from '@turnlog/core'
import { checkSafeJson, checkSafeText, mapDatabaseError, type PostgresStore } from '@turnlog/postgres'
import { sql, type Kysely } from 'kysely'
import { EXPORT_FORMAT, EXPORT_VERSION, exportedChainHash, type ExportEventRecord, type ExportSessionRecord } from './export-sessions.js'

/** Result of {@link importEvents}. */
export interface ImportResult {
  /** Sessions read from the file (written, extended or already present). */
  readonly sessions: number
  /** Events inserted by this call. */
  readonly eventsWritten: number
  /** Events of the file the store already had (same seq, same hash): nothing written for them. */
  readonly eventsSkipped: number
  /** Every session id of the file, in file order. */
  readonly sessionIds: SessionId[]
}

/** Reported after each session of the file. */
export interface ImportProgress {
  /** Sessions done so far. */
  readonly sessions: number
  readonly sessionId: SessionId
  /** Events of this session inserted / already present. */
  readonly written: number
  readonly skipped: number
}

/** Options for {@link importEvents}. */
export interface ImportEventsOptions {
  /** Called after each session is committed (or found already present). */
  readonly onProgress?: (progress: ImportProgress) => void
}

/** A line of input with its 1-based line number. */
export interface NumberedLine {
  readonly line: number
  readonly text: string
}

/**
 * Yields the lines of `source` with 1-based line numbers. Each item is a line (a trailing `\n` or
 * `\r\n` is ignored); an item holding several complete lines is split on `\n`.
 */
export async function* numberedLines(source: AsyncIterable<string> | Iterable<string>): AsyncGenerator<NumberedLine> {
  if (source === null || typeof source !== 'object' || (!(Symbol.asyncIterator in source) && !(Symbol.iterator in source))) {
    throw new TurnlogError('INVALID_INPUT', 'lines must be an iterable or async iterable of strings')
  }
  let line = 0
  for await (const item of source as AsyncIterable<unknown>) {
    if (typeof item !== 'string') {
      throw new TurnlogError('IMPORT_FAILED', `line ${line + 1}: expected a string, got ${typeof item}`, { details: { line: line + 1 } })
    }
    const parts = item.includes('\n') ? item.replace(/\r?\n$/, '').split('\n') : [item]
    for (const part of parts) {
      line++
      yield { line, text: part.endsWith('\r') ? part.slice(0, -1) : part }
    }
  }
}

/**
 * Options must be absent or an object (a default parameter does not replace null), and `onProgress`
 * absent or a function: it is called after a session committed, where a TypeError would escape raw
 * with the import half done. Throws `INVALID_INPUT`.
 * @internal
 */
export function checkOptions(options: unknown, what: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TurnlogError('INVALID_INPUT', `${what} must be an object`)
  const onProgress = (options as { onProgress?: unknown }).onProgress
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new TurnlogError('INVALID_INPUT', 'onProgress must be a function')
}

function fail(line: number, message: string, details: Record<string, unknown> = {}, cause?: unknown): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, { details: { line, ...details }, ...(cause === undefined ? {} : { cause }) })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const HEX64 = /^[0-9a-f]{64}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
const TYPES = new Set<string>(EVENT_TYPES)
const MESSAGE_TYPES = new Set(['message_appended', 'message_revised'])
/** Rows per INSERT statement. */
const CHUNK = 500

function isoField(value: unknown, what: string, line: number): string {
  if (typeof value !== 'string' || !ISO.test(value) || Number.isNaN(Date.parse(value))) {
    throw fail(line, `${what} must be an ISO-8601 timestamp`)
  }
  return value
}

function guard<T>(line: number, what: string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    if (isTurnlogError(error) && error.code === 'IMPORT_FAILED') throw error
    const message = error instanceof Error ? error.message : String(error)
    throw fail(line, `${what}: ${message}`, {}, error)
  }
}

interface ParsedSession {
  readonly line: number
  readonly id: SessionId
  readonly tenantId: string | null
  readonly metadata: JsonValue | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly version: number
  readonly parent: { readonly sessionId: SessionId; readonly version: number; readonly at: string } | null
}

interface ParsedEvent {
  readonly line: number
  readonly record: ExportEventRecord
  readonly payloadText: string | null
  readonly dataText: string
}

function parseSessionRecord(value: Record<string, unknown>, line: number): ParsedSession {
  const r = value as Partial<Record<keyof ExportSessionRecord, unknown>>
  const id = guard(line, 'session id', () => parseSessionId(r.id))
  const tenantId = r.tenantId === null || r.tenantId === undefined ? null : guard(line, 'tenantId', () => checkSafeText(r.tenantId, 'tenantId'))
  const metadata = r.metadata === undefined ? null : (r.metadata as JsonValue | null)
  const version = r.version
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) throw fail(line, 'session version must be a non-negative integer')
  let parent: ParsedSession['parent'] = null
  if (r.parent !== null && r.parent !== undefined) {
    if (!isPlainObject(r.parent)) throw fail(line, 'parent must be an object or null')
    const p = r.parent
    const pv = p['version']
    if (typeof pv !== 'number' || !Number.isSafeInteger(pv) || pv < 0) throw fail(line, 'parent.version must be a non-negative integer')
    parent = {
      sessionId: guard(line, 'parent.sessionId', () => parseSessionId(p['sessionId'])),
      version: pv,
      at: guard(line, 'parent.at', () => parseMessageId(p['at'])),
    }
  }
  return {
    line,
    id,
    tenantId,
    metadata,
    createdAt: isoField(r.createdAt, 'createdAt', line),
    updatedAt: isoField(r.updatedAt, 'updatedAt', line),
    version,
    parent,
  }
}

/** Validates one event line against the session being read and the chain so far; returns its texts. */
function parseEventRecord(value: Record<string, unknown>, line: number, session: ParsedSession, expectedSeq: number, prev: string): ParsedEvent {
  const r = value as Partial<Record<keyof ExportEventRecord, unknown>>
  const sessionId = guard(line, 'event sessionId', () => parseSessionId(r.sessionId))
  if (sessionId !== session.id) throw fail(line, `event of session ${sessionId} inside session ${session.id} (line ${session.line})`, { sessionId })
  if (r.seq !== expectedSeq) {
    throw fail(line, `session ${session.id}: expected seq ${expectedSeq}, found ${JSON.stringify(r.seq)} (the file's log must be contiguous from 1)`, {
      sessionId,
      seq: r.seq,
      expectedSeq,
    })
  }
  const eventId = guard(line, 'eventId', () => parseEventId(r.eventId))
  if (typeof r.type !== 'string' || !TYPES.has(r.type)) throw fail(line, `unknown event type ${JSON.stringify(r.type)}`, { sessionId, seq: expectedSeq })
  const messageId = r.messageId === null || r.messageId === undefined ? null : guard(line, 'messageId', () => parseMessageId(r.messageId))
  const hash = r.contentHash
  if (hash !== null && hash !== undefined && (typeof hash !== 'string' || !HEX64.test(hash))) throw fail(line, 'contentHash must be 64 lower-case hex digits or null')
  const contentHashValue = (hash ?? null) as string | null
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) throw fail(line, 'hash must be 64 lower-case hex digits')
  if (!isPlainObject(r.data)) throw fail(line, 'data must be an object')
  const data = r.data as JsonValue
  guard(line, 'data', () => checkSafeJson(data, 'event data'))
  const payload = r.payload === undefined ? null : r.payload
  if (payload !== null && !isPlainObject(payload)) throw fail(line, 'payload must be an object or null')
  const digest = r.payloadDigest
  if (digest !== undefined && (typeof digest !== 'string' || !HEX64.test(digest))) throw fail(line, 'payloadDigest must be 64 lower-case hex digits')
  if (digest !== undefined && !MESSAGE_TYPES.has(r.type)) throw fail(line, `a ${r.type} event carries no payloadDigest`, { sessionId, seq: expectedSeq })
  if (MESSAGE_TYPES.has(r.type)) {
    if (payload === null || messageId === null || contentHashValue === null) {
      throw fail(line, `a ${r.type} event needs messageId, contentHash and payload`, { sessionId, seq: expectedSeq })
    }
  }
  if (MESSAGE_TYPES.has(r.type) && payload !== null && (digest !== undefined || (r.data as { redacted?: unknown }).redacted === true)) {
    // scrubbed by a redaction (payloadDigest), or a fork's copy of a scrubbed payload (data.redacted): the
    // payload is the placeholder and the content hash still the original's; the chain link covers the rest
    if (!isRedactedPayload(payload)) {
      throw fail(line, `session ${session.id} seq ${expectedSeq}: a redacted event's payload must be a redaction placeholder`, { sessionId, seq: expectedSeq })
    }
  } else if (MESSAGE_TYPES.has(r.type)) {
    const parsed = guard(line, 'payload', () => parseChatMessage(payload))
    const computed = contentHash(parsed)
    if (computed !== contentHashValue) {
      throw fail(line, `session ${session.id} seq ${expectedSeq}: contentHash does not match the payload`, {
        sessionId,
        seq: expectedSeq,
        contentHash: contentHashValue,
        computedHash: computed,
      })
    }
  } else if (payload !== null) {
    throw fail(line, `a ${r.type} event carries no payload`, { sessionId, seq: expectedSeq })
  }
  const record: ExportEventRecord = {
    kind: 'event',
    sessionId,
    seq: expectedSeq,
    eventId,
    type: r.type,
    messageId,
    contentHash: contentHashValue,
    payload: payload as JsonValue | null,
    data,
    recordedAt: isoField(r.recordedAt, 'recordedAt', line),
    hash: r.hash,
    ...(digest === undefined ? {} : { payloadDigest: digest }),
  }
  const link = exportedChainHash(prev, record)
  if (link !== record.hash) {
    throw fail(line, `session ${session.id} seq ${expectedSeq}: the chain link does not verify (file ${record.hash.slice(0, 12)}…, computed ${link.slice(0, 12)}…)`, {
      sessionId,
      seq: expectedSeq,
      fileHash: record.hash,
      computedHash: link,
    })
  }
  return { line, record, payloadText: payload === null ? null : JSON.stringify(payload), dataText: JSON.stringify(data) }
}

interface SessionRowText {
  tenant_id: string | null
  metadata: string | null
  parent_session_id: string | null
  parent_version: string | number | null
  fork_at: string | null
}

/** Checks that a session already in the store has the file's attributes; throws `SESSION_EXISTS`. */
function checkSameSession(row: SessionRowText, s: ParsedSession): void {
  const stored = row.metadata === null ? null : canonicalJson(JSON.parse(row.metadata))
  const incoming = s.metadata === null ? null : canonicalJson(s.metadata)
  const storedParent = row.parent_session_id === null ? null : `${row.parent_session_id}/${Number(row.parent_version)}/${row.fork_at ?? ''}`
  const fileParent = s.parent === null ? null : `${s.parent.sessionId}/${s.parent.version}/${s.parent.at}`
  const differs: string[] = []
  if (row.tenant_id !== s.tenantId) differs.push('tenantId')
  if (stored !== incoming) differs.push('metadata')
  if (storedParent !== fileParent) differs.push('parent')
  if (differs.length > 0) {
    throw new TurnlogError('SESSION_EXISTS', `line ${s.line}: session ${s.id} exists with another ${differs.join(', ')}; nothing of it was imported`, {
      details: { sessionId: s.id, line: s.line, differs },
    })
  }
}

async function writeSession(db: Kysely<unknown>, s: ParsedSession, events: readonly ParsedEvent[]): Promise<{ written: number; skipped: number }> {
  const existing = await sql<SessionRowText & { version: string | number }>`
    select tenant_id, metadata::text as metadata, parent_session_id::text, parent_version, fork_at::text, version
      from turnlog.sessions where session_id = ${s.id} for update`.execute(db)
  const row = existing.rows[0]
  if (row) checkSameSession(row, s)
  else {
    await sql`
      insert into turnlog.sessions (session_id, tenant_id, version, created_at, updated_at, metadata, parent_session_id, parent_version, fork_at)
      values (${s.id}, ${s.tenantId}, 0, ${s.createdAt}::timestamptz, ${s.updatedAt}::timestamptz,
              ${s.metadata === null ? null : JSON.stringify(s.metadata)}::json,
              ${s.parent?.sessionId ?? null}::uuid, ${s.parent?.version ?? null}::bigint, ${s.parent?.at ?? null}::uuid)`.execute(db)
  }
  const stored = row ? (await sql<{ seq: string | number; hash: string }>`
    select seq, encode(hash, 'hex') as hash from turnlog.events where session_id = ${s.id} order by seq`.execute(db)).rows : []
  const common = Math.min(stored.length, events.length)
  for (let i = 0; i < common; i++) {
    const have = stored[i]
    const want = events[i]
    if (!have || !want) continue
    if (Number(have.seq) !== i + 1 || have.hash !== want.record.hash) {
      throw new TurnlogError('MESSAGE_CONFLICT', `line ${want.line}: session ${s.id} seq ${i + 1} is stored with another event (stored ${have.hash.slice(0, 12)}…, file ${want.record.hash.slice(0, 12)}…); nothing of the session was imported`, {
        details: { sessionId: s.id, seq: i + 1, line: want.line, storedHash: have.hash, fileHash: want.record.hash, reason: 'seq_mismatch' },
      })
    }
  }
  const toWrite = events.slice(common)
  if (toWrite.length === 0) return { written: 0, skipped: common }

  // a message originally appended here must not be an original append of another session (fork copies are not)
  const originals = toWrite.filter((e) => e.record.type === 'message_appended' && isPlainObject(e.record.data) && e.record.data['inheritedFrom'] === undefined)
  if (originals.length > 0) {
    const ids = [...new Set(originals.map((e) => e.record.messageId as string))]
    const { rows: foreign } = await sql<{ message_id: string; session_id: string; content_hash: string }>`
      select message_id::text, session_id::text, encode(content_hash, 'hex') as content_hash
        from turnlog.events
       -- = any (array(…)): an initplan the index can use; "in (select …)" became a sequential scan of the log
       where message_id = any (array(select value::uuid from json_array_elements_text(${JSON.stringify(ids)}::json)))
         and session_id <> ${s.id} and type = 'message_appended' and (data->>'inheritedFrom') is null
       limit 1`.execute(db)
    const other = foreign[0]
    if (other) {
      const e = originals.find((o) => o.record.messageId === other.message_id)
      throw new TurnlogError('MESSAGE_CONFLICT', `line ${e?.line ?? s.line}: message ${other.message_id} belongs to session ${other.session_id}; nothing of session ${s.id} was imported`, {
        details: {
          sessionId: s.id,
          messageId: other.message_id,
          reason: 'foreign_session',
          otherSessionId: other.session_id,
          storedHash: other.content_hash,
          incomingHash: e?.record.contentHash ?? null,
          seq: e?.record.seq ?? null,
          line: e?.line ?? s.line,
        },
      })
    }
  }

  for (let from = 0; from < toWrite.length; from += CHUNK) {
    const chunk = toWrite.slice(from, from + CHUNK)
    // payload_digest only when a scrubbed event needs it: turnlog_writer may not insert that column
    const scrubbed = chunk.some((e) => e.record.payloadDigest !== undefined)
    const { rows } = await sql<{ seq: string | number; hash: string }>`
      insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at${scrubbed ? sql`, payload_digest` : sql``})
      select ${s.id}::uuid, t.seq::bigint, t.event_id::uuid, t.type, nullif(t.message_id, '')::uuid,
             decode(nullif(t.content_hash, ''), 'hex'), nullif(t.payload::text, 'null')::json, t.data, t.recorded_at::timestamptz
             ${scrubbed ? sql`, decode(nullif(t.payload_digest, ''), 'hex')` : sql``}
        from rows from (
               json_array_elements_text(${JSON.stringify(chunk.map((e) => String(e.record.seq)))}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.eventId))}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.type))}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.messageId ?? ''))}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.contentHash ?? ''))}::json),
               json_array_elements(${`[${chunk.map((e) => e.payloadText ?? 'null').join(',')}]`}::json),
               json_array_elements(${`[${chunk.map((e) => e.dataText).join(',')}]`}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.recordedAt))}::json),
               json_array_elements_text(${JSON.stringify(chunk.map((e) => e.record.payloadDigest ?? ''))}::json)
             ) with ordinality as t(seq, event_id, type, message_id, content_hash, payload, data, recorded_at, payload_digest, ord)
       order by t.ord
      returning seq, encode(hash, 'hex') as hash`.execute(db)
    const computed = new Map(rows.map((r) => [Number(r.seq), r.hash]))
    for (const e of chunk) {
      const got = computed.get(e.record.seq)
      if (got !== e.record.hash) {
        throw new TurnlogError('IMPORT_FAILED', `line ${e.line}: session ${s.id} seq ${e.record.seq}: the database computed chain link ${String(got).slice(0, 12)}… but the file says ${e.record.hash.slice(0, 12)}…; nothing of the session was imported`, {
          details: { sessionId: s.id, seq: e.record.seq, line: e.line, fileHash: e.record.hash, databaseHash: got ?? null },
        })
      }
    }
  }
  const version = events.length
  await sql`
    update turnlog.sessions
       set version = ${version}, updated_at = greatest(updated_at, ${s.updatedAt}::timestamptz)
     where session_id = ${s.id}`.execute(db)
  return { written: toWrite.length, skipped: common }
}

async function inTransaction<T>(db: Kysely<unknown>, fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
  try {
    if (db.isTransaction) return await fn(db)
    return await db.transaction().execute(fn)
  } catch (error) {
    throw mapDatabaseError(error)
  }
}

/**
 * Imports a file written by `exportSessions` into a Postgres (or PGlite) store, exactly: session ids,
 * seqs, event ids, types, message ids, content hashes, payload and data texts and `recordedAt` are
 * kept; the database recomputes every chain link and the import refuses (`IMPORT_FAILED`, naming the
 * line and seq) any that differs from the file's. The file is verified first (header, contiguous seqs
 * from 1, every link, content hashes, one session's events after its session line, an end line).
 *
 * Each session is one transaction: all of it or none of it. Idempotent: events the store already has
 * (same seq, same link) are skipped, so importing a file twice changes nothing, and a longer export of
 * a session extends it. A session whose stored events differ from the file's, or whose original
 * messages belong to another session, is refused with `MESSAGE_CONFLICT` and nothing of it is written
 * (sessions before it stay committed); other attributes that differ give `SESSION_EXISTS`.
 * Malformed lines give `IMPORT_FAILED` with `details.line`. One session's events are held in memory at
 * a time.
 */
export async function importEvents(
  store: PostgresStore,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportEventsOptions = {},
): Promise<ImportResult> {
  if (typeof store !== 'object' || store === null || typeof (store as { db?: unknown }).db !== 'object') {
    throw new TurnlogError('INVALID_INPUT', 'importEvents needs a PostgresStore (it writes through store.db)')
  }
  // checked before anything is written: onProgress runs after a session has committed
  checkOptions(options, 'importEvents options')
  const sessionIds: SessionId[] = []
  let eventsWritten = 0
  let eventsSkipped = 0
  let totalEvents = 0
  let headerSeen = false
  let ended = false
  let lastLine = 0
  let current: { session: ParsedSession; events: ParsedEvent[]; prev: string } | null = null
  const seen = new Set<string>()

  const finish = async (endLine: number): Promise<void> => {
    if (!current) return
    const { session, events } = current
    current = null
    if (events.length !== session.version) {
      throw fail(endLine, `session ${session.id} (line ${session.line}) announces ${session.version} event(s) but the file has ${events.length}`, {
        sessionId: session.id,
        version: session.version,
        events: events.length,
      })
    }
    let outcome: { written: number; skipped: number }
    try {
      outcome = await inTransaction(store.db, (db) => writeSession(db, session, events))
    } catch (error) {
      // a data exception (SQLSTATE class 22: a timestamp Postgres cannot hold, an id in event data that
      // is not a UUID, …) is the file's fault, like every other malformed line
      const state = isTurnlogError(error, 'DB_ERROR') ? error.details['sqlState'] : undefined
      if (typeof state === 'string' && state.startsWith('22')) {
        throw fail(session.line, `session ${session.id}: the database refused the file's data: ${error instanceof Error ? error.message : ''}; nothing of the session was imported`, {
          sessionId: session.id,
          sqlState: state,
        }, error)
      }
      throw error
    }
    const { written, skipped } = outcome
    eventsWritten += written
    eventsSkipped += skipped
    sessionIds.push(session.id)
    options.onProgress?.({ sessions: sessionIds.length, sessionId: session.id, written, skipped })
  }

  for await (const { line, text } of numberedLines(lines)) {
    lastLine = line
    if (text.trim() === '') continue
    if (ended) throw fail(line, 'content after the end line')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (cause) {
      throw fail(line, 'not valid JSON', {}, cause)
    }
    if (!isPlainObject(value)) throw fail(line, 'each line must be a JSON object')
    if (!headerSeen) {
      if (value['format'] !== EXPORT_FORMAT) throw fail(line, `not a turnlog export (the first line must have format "${EXPORT_FORMAT}")`)
      if (value['version'] !== EXPORT_VERSION) {
        throw fail(line, `unsupported export version ${JSON.stringify(value['version'])}; this importer reads version ${EXPORT_VERSION}`)
      }
      headerSeen = true
      continue
    }
    switch (value['kind']) {
      case 'session': {
        await finish(line)
        const session = parseSessionRecord(value, line)
        if (seen.has(session.id)) throw fail(line, `session ${session.id} appears twice in the file`, { sessionId: session.id })
        seen.add(session.id)
        current = { session, events: [], prev: GENESIS_HASH }
        break
      }
      case 'event': {
        if (!current) throw fail(line, 'an event line before any session line')
        const active: { session: ParsedSession; events: ParsedEvent[]; prev: string } = current
        const event = parseEventRecord(value, line, active.session, active.events.length + 1, active.prev)
        active.events.push(event)
        active.prev = event.record.hash
        totalEvents++
        break
      }
      case 'end': {
        await finish(line)
        if (value['sessions'] !== seen.size || value['events'] !== totalEvents) {
          throw fail(line, `the end line counts ${String(value['sessions'])} session(s) and ${String(value['events'])} event(s) but the file has ${seen.size} and ${totalEvents}`)
        }
        ended = true
        break
      }
      default:
        throw fail(line, `unknown record kind ${JSON.stringify(value['kind'])}`)
    }
  }
  if (!headerSeen) throw fail(Math.max(lastLine, 1), 'empty input: no header line')
  if (!ended) {
    await finish(lastLine + 1)
    throw fail(lastLine + 1, 'the file ends without its end line (truncated?); the complete sessions before this point were imported', {
      sessionIds,
      eventsWritten,
      eventsSkipped,
    })
  }
  return { sessions: sessionIds.length, eventsWritten, eventsSkipped, sessionIds }
}
