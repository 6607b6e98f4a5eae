import {
  EVENT_TYPES,
  GENESIS_HASH,
  MAX_JSON_DEPTH,
  TurnlogError,
  canonicalJson,
  jsonDepth,
  isRedactedPayload,
  isTurnlogError,
  parseFormatPayload,
  parseEventId,
  parseMessageId,
  parseSessionId,
  checkOptions,
  type JsonValue,
  type SessionId,
  type MessageConflictReason,
  type StoredEvent,
  guardInput,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { checkSafeJson, checkSafeText, customSqlState, lostMessageIdRace, mapDatabaseError, sqlState } from '@turnlog/postgres/internal'
import { sql, type Kysely } from 'kysely'
import { hash as nodeHash } from 'node:crypto'
import { EXPORT_FORMAT, EXPORT_VERSION, exportedChainHash, type ExportEventRecord, type ExportSessionRecord } from './export-sessions.js'
import { ChainVerifier } from './verify-chain.js'

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

function checkSource(source: unknown): void {
  if (source === null || typeof source !== 'object' || !guardInput('lines', () => Symbol.asyncIterator in source || Symbol.iterator in source)) {
    throw new TurnlogError('INVALID_INPUT', 'lines must be an iterable or async iterable of strings')
  }
}

/** The lines of one item of a source: a trailing `\n` or `\r\n` is ignored, several complete lines are split on `\n`. */
function* itemLines(item: unknown, first: number): Generator<NumberedLine> {
  if (typeof item !== 'string') {
    throw new TurnlogError('IMPORT_FAILED', `line ${first}: expected a string, got ${typeof item}`, { details: { line: first } })
  }
  if (!item.includes('\n')) {
    yield { line: first, text: item.endsWith('\r') ? item.slice(0, -1) : item }
    return
  }
  let line = first
  for (const part of item.replace(/\r?\n$/, '').split('\n')) yield { line: line++, text: part.endsWith('\r') ? part.slice(0, -1) : part }
}

/**
 * Yields the lines of `source` with 1-based line numbers. Each item is a line (a trailing `\n` or
 * `\r\n` is ignored); an item holding several complete lines is split on `\n`.
 */
export async function* numberedLines(source: AsyncIterable<string> | Iterable<string>): AsyncGenerator<NumberedLine> {
  checkSource(source)
  let line = 0
  const asyncItems = guardInput('lines', () => (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator]?.())
  const syncItems = asyncItems === undefined ? guardInput('lines', () => (source as Iterable<unknown>)[Symbol.iterator]()) : undefined
  let finished = false
  try {
    for (;;) {
      let next: IteratorResult<unknown>
      try {
        if (asyncItems !== undefined) next = await asyncItems.next()
        else {
          next = (syncItems as Iterator<unknown>).next()
          // as `for await` did: a promise item is awaited (a thenable that is not a promise stays an item)
          if (next.done !== true && next.value instanceof Promise) next = { done: false, value: await next.value }
        }
      } catch (cause) {
        // the source itself failed (a read error, a throwing iterator or item): the import's input is at fault
        if (isTurnlogError(cause)) throw cause
        let reason: string = typeof cause
        try {
          if (cause instanceof Error) reason = cause.message
        } catch {
          // a revoked Proxy thrown as an error
        }
        throw new TurnlogError('IMPORT_FAILED', `line ${line + 1}: the lines could not be read (${reason})`, { details: { line: line + 1 }, cause })
      }
      if (next.done === true) {
        finished = true
        return
      }
      for (const numbered of itemLines(next.value, line + 1)) {
        line = numbered.line
        yield numbered
      }
    }
  } finally {
    // stopped early (the consumer failed or broke off): close the source, as `for await` did
    if (!finished) await Promise.resolve(asyncItems?.return?.() ?? syncItems?.return?.()).catch(() => {})
  }
}

/** {@link numberedLines} of a source that is not async: no promise per line. */
function* numberedLinesSync(source: Iterable<unknown>): Generator<NumberedLine> {
  let line = 0
  for (const item of source) {
    for (const numbered of itemLines(item, line + 1)) {
      line = numbered.line
      yield numbered
    }
  }
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
  if (jsonDepth(metadata) > MAX_JSON_DEPTH) throw fail(line, `session metadata is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`, { limit: MAX_JSON_DEPTH })
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

/**
 * Validates one event line against the session being read; returns its texts. The chain link is not
 * checked here: the database checks every link it writes (`turnlog.import_events`), and
 * {@link writeSessions} checks the file's links of events the store already has.
 */
function parseEventRecord(value: Record<string, unknown>, line: number, session: ParsedSession, expectedSeq: number): ParsedEvent {
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
    // validated with the event's format (data.format; absent: openai-chat), which this process must know
    const format = (r.data as { format?: unknown }).format
    if (format !== undefined && typeof format !== 'string') throw fail(line, 'data.format must be a string', { sessionId, seq: expectedSeq })
    const parsed = guard(line, 'payload', () => parseFormatPayload(payload, format))
    // contentHash (core) hashes the same canonical text with a portable SHA-256; node's is ~3× faster
    const computed = nodeHash('sha256', canonicalJson(parsed), 'hex')
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

/** A complete session of the file: its session line and its events. */
interface FileSession {
  readonly session: ParsedSession
  readonly events: readonly ParsedEvent[]
  /** Payload and data text of its events, in UTF-16 code units. */
  readonly size: number
}

/** What {@link writeSessions} did with one session. */
interface SessionOutcome {
  readonly written: number
  readonly skipped: number
}

/** Separates the values of one column in a `turnlog.import_events` argument (see migration 0007). */
const SEP = '\u001e'
/** A batch (one transaction) closes at this many events, payload bytes or sessions, whichever comes first. */
const BATCH_EVENTS = 2000
const BATCH_SIZE = 4 << 20
const BATCH_SESSIONS = 200
/** Deepest nesting of a line: a record (1) around event data (2) around compaction metadata. */
const LINE_DEPTH = MAX_JSON_DEPTH + 2
/** Lines read between two turns of the event loop while a batch is being written. */
const YIELD_EVERY = 32

function isOriginalAppend(e: ParsedEvent): boolean {
  return e.record.type === 'message_appended' && isPlainObject(e.record.data) && e.record.data['inheritedFrom'] === undefined
}

/** Throws `MESSAGE_CONFLICT` (`foreign_session`) for session `s` importing `e`, an original append of `other`. */
function foreignSession(s: ParsedSession, e: ParsedEvent, other: { sessionId: string; contentHash: string | null }): TurnlogError {
  const messageId = e.record.messageId as string
  return new TurnlogError('MESSAGE_CONFLICT', `line ${e.line}: message ${messageId} belongs to session ${other.sessionId}; nothing of session ${s.id} was imported`, {
    details: {
      sessionId: s.id,
      messageId,
      reason: 'foreign_session' satisfies MessageConflictReason,
      otherSessionId: other.sessionId,
      storedHash: other.contentHash,
      incomingHash: e.record.contentHash,
      seq: e.record.seq,
      line: e.line,
    },
  })
}

/**
 * Refuses (`IMPORT_FAILED`, naming the line and seq) a session whose scrubbed events are not exactly
 * what its chained `message_redacted` records say: a placeholder rewritten in the file (another role,
 * other pairing ids), a scrub no record confirms, a record without its placeholder digest. The database
 * links a scrubbed event over its digest, so this is the check that covers the placeholder itself
 * (the same rule as `verifyChain`). Only sessions holding a scrubbed event pay for it.
 */
function checkScrubs(s: ParsedSession, events: readonly ParsedEvent[]): void {
  if (!events.some((e) => e.record.payloadDigest !== undefined)) return
  const verifier = new ChainVerifier(s.id)
  for (const e of events) verifier.push(e.record as unknown as StoredEvent)
  const found = verifier.finish(events.length).breaks.find((b) => b.kind === 'redaction_mismatch')
  if (found === undefined) return
  const line = events.find((e) => e.record.seq === found.seq)?.line ?? s.line
  throw fail(line, `session ${s.id} seq ${found.seq}: ${found.explanation}; nothing of the session was imported`, {
    sessionId: s.id,
    seq: found.seq,
    reason: 'redaction_mismatch',
  })
}

/** Writes events through `turnlog.import_events`, in calls of at most a batch's size; maps `TLC02` to `IMPORT_FAILED`. */
async function insertEvents(db: Kysely<unknown>, rows: readonly { readonly session: ParsedSession; readonly event: ParsedEvent }[]): Promise<void> {
  for (let from = 0; from < rows.length; ) {
    let to = from
    let size = 0
    while (to < rows.length && to - from < BATCH_EVENTS && size < BATCH_SIZE) {
      const e = (rows[to] as { event: ParsedEvent }).event
      size += (e.payloadText?.length ?? 0) + e.dataText.length
      to++
    }
    const chunk = rows.slice(from, to)
    const column = (f: (e: ExportEventRecord, p: ParsedEvent) => string | null): string => chunk.map((r) => f(r.event.record, r.event) ?? '').join(SEP)
    try {
      await sql`
        select turnlog.import_events(${column((e) => e.sessionId)}, ${column((e) => String(e.seq))}, ${column((e) => e.eventId)},
          ${column((e) => e.type)}, ${column((e) => e.messageId)}, ${column((e) => e.contentHash)}, ${column((_, p) => p.payloadText)},
          ${column((_, p) => p.dataText)}, ${column((e) => e.recordedAt)}, ${column((e) => e.payloadDigest ?? null)}, ${column((e) => e.hash)})`.execute(db)
    } catch (error) {
      if (customSqlState(error) !== 'TLC02') throw error
      let where: { sessionId?: string; seq?: number; computedHash?: string } = {}
      try {
        where = JSON.parse(String((error as { detail?: unknown }).detail)) as typeof where
      } catch {
        // no detail: the message names the event
      }
      const row = chunk.find((r) => r.session.id === where.sessionId && r.event.record.seq === where.seq)
      if (!row) throw error
      const { line, record } = row.event
      throw new TurnlogError('IMPORT_FAILED', `line ${line}: session ${record.sessionId} seq ${record.seq}: the chain link does not verify (file ${record.hash.slice(0, 12)}…, computed ${String(where.computedHash).slice(0, 12)}…); nothing of the session was imported`, {
        details: { line, sessionId: record.sessionId, seq: record.seq, fileHash: record.hash, computedHash: where.computedHash ?? null },
        cause: error,
      })
    }
    from = to
  }
}

/**
 * Writes complete sessions of the file in the caller's transaction: locks the sessions that exist (in id
 * order), checks them against the file, inserts the new sessions, refuses a message that is an original
 * append of another session, and inserts every event not yet stored through `turnlog.import_events`,
 * which computes and checks each link. Throws at the first session (in file order) that cannot be
 * written; the caller's transaction then writes nothing.
 */
async function writeSessions(db: Kysely<unknown>, batch: readonly FileSession[]): Promise<SessionOutcome[]> {
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
  const toWrite: { session: ParsedSession; event: ParsedEvent }[] = []
  const extended: { session: ParsedSession; version: number }[] = []
  const created: ParsedSession[] = []
  // original appends of this batch: message id → the first session of the batch appending it
  const origins = new Map<string, { session: ParsedSession; event: ParsedEvent }>()
  for (const { session: s, events } of batch) {
    checkScrubs(s, events)
    const row = rowOf.get(s.id)
    const have = stored.get(s.id) ?? []
    const common = Math.min(have.length, events.length)
    // the file's links of the events already stored: the database checks only the links it writes
    let prev = GENESIS_HASH
    for (let i = 0; i < common; i++) {
      const e = events[i] as ParsedEvent
      const link = exportedChainHash(prev, e.record)
      if (link !== e.record.hash) {
        throw fail(e.line, `session ${s.id} seq ${i + 1}: the chain link does not verify (file ${e.record.hash.slice(0, 12)}…, computed ${link.slice(0, 12)}…)`, {
          sessionId: s.id,
          seq: i + 1,
          fileHash: e.record.hash,
          computedHash: link,
        })
      }
      prev = link
    }
    if (row) checkSameSession(row, s)
    else created.push(s)
    for (let i = 0; i < common; i++) {
      const want = events[i] as ParsedEvent
      const got = have[i] as string
      if (got !== want.record.hash) {
        throw new TurnlogError('MESSAGE_CONFLICT', `line ${want.line}: session ${s.id} seq ${i + 1} is stored with another event (stored ${got.slice(0, 12)}…, file ${want.record.hash.slice(0, 12)}…); nothing of the session was imported`, {
          details: { sessionId: s.id, seq: i + 1, line: want.line, storedHash: got, fileHash: want.record.hash, reason: 'seq_mismatch' satisfies MessageConflictReason },
        })
      }
    }
    outcomes.push({ written: events.length - common, skipped: common })
    if (events.length === common) continue
    if (row) extended.push({ session: s, version: events.length })
    for (let i = common; i < events.length; i++) {
      const e = events[i] as ParsedEvent
      toWrite.push({ session: s, event: e })
      if (!isOriginalAppend(e)) continue
      const first = origins.get(e.record.messageId as string)
      if (first === undefined) origins.set(e.record.messageId as string, { session: s, event: e })
      else if (first.session.id !== s.id) throw foreignSession(s, e, { sessionId: first.session.id, contentHash: first.event.record.contentHash })
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
      if (r.session_id !== origins.get(r.message_id)?.session.id && !foreign.has(r.message_id)) foreign.set(r.message_id, { sessionId: r.session_id, contentHash: r.content_hash })
    }
    if (foreign.size > 0) {
      // the first such event in file order
      for (const { session, event } of toWrite) {
        const other = isOriginalAppend(event) ? foreign.get(event.record.messageId as string) : undefined
        if (other) throw foreignSession(session, event, other)
      }
    }
  }

  if (created.length > 0) {
    const versions = new Map(batch.map((b) => [b.session.id, b.events.length]))
    const column = (f: (s: ParsedSession) => string | number | null): string => JSON.stringify(created.map(f))
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

/**
 * Runs `fn` in a transaction (or the caller's). A write that lost a race for a key it found free (a
 * concurrent writer stored one of the file's new message ids, or created one of its sessions, after
 * `fn` read the store) wrote nothing and runs again, once or twice: it then finds what the other
 * writer stored and skips it, extends it or refuses it (`MESSAGE_CONFLICT`, `SESSION_EXISTS`). A
 * session id another tenant holds stays invisible and ends as `SESSION_EXISTS`.
 */
async function inTransaction<T>(db: Kysely<unknown>, fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (db.isTransaction) return await fn(db)
      return await db.transaction().execute(fn)
    } catch (error) {
      const mapped = mapDatabaseError(error)
      const lostRace = lostMessageIdRace(error) || (sqlState(error) === '23505' && mapped.code === 'SESSION_EXISTS')
      if (lostRace && !db.isTransaction && attempt < 3) continue
      throw mapped
    }
  }
}

/**
 * A data exception (SQLSTATE class 22: a timestamp Postgres cannot hold, an id in event data that is
 * not a UUID, …) while writing one session is the file's fault, like every other malformed line.
 */
function fileFault(error: unknown, session: ParsedSession): unknown {
  const state = isTurnlogError(error, 'DB_ERROR') ? error.details['sqlState'] : undefined
  if (typeof state === 'string' && state.startsWith('22')) {
    return fail(session.line, `session ${session.id}: the database refused the file's data: ${error instanceof Error ? error.message : ''}; nothing of the session was imported`, {
      sessionId: session.id,
      sqlState: state,
    }, error)
  }
  return error
}

/**
 * Writes the file's complete sessions in batches, one transaction each, one batch in flight while the
 * next is read. A batch that fails is written again one session per transaction, so the sessions
 * before the failing one are committed and the failing one raises its own error, exactly as when
 * every session is its own transaction; nothing after it is written.
 */
class SessionWriter {
  readonly #db: Kysely<unknown>
  readonly #done: (s: ParsedSession, outcome: SessionOutcome) => void
  /** In the caller's transaction a failed statement aborts it: one session per batch, so the error names it. */
  readonly #maxSessions: number
  #pending: FileSession[] = []
  #events = 0
  #size = 0
  #inflight: Promise<void> | null = null
  #failed = false
  #read = 0

  constructor(db: Kysely<unknown>, done: (s: ParsedSession, outcome: SessionOutcome) => void) {
    this.#db = db
    this.#done = done
    this.#maxSessions = db.isTransaction ? 1 : BATCH_SESSIONS
  }

  /** Queues a complete session; starts writing the batch when it is full (after the previous one committed). */
  async add(s: FileSession): Promise<void> {
    if (this.#pending.length > 0 && (this.#events + s.events.length > BATCH_EVENTS || this.#size + s.size > BATCH_SIZE)) await this.#dispatch()
    this.#pending.push(s)
    this.#events += s.events.length
    this.#size += s.size
    if (this.#pending.length >= this.#maxSessions || this.#events >= BATCH_EVENTS || this.#size >= BATCH_SIZE) await this.#dispatch()
  }

  /**
   * Called for every line read. Reading a file already in memory runs on microtasks only, which would
   * starve the socket of the batch being written until the next batch is full: while a write is in
   * flight, lets I/O callbacks run every few lines (the promise to await), else returns nothing.
   */
  pause(): Promise<void> | undefined {
    if (this.#inflight === null || ++this.#read % YIELD_EVERY !== 0) return undefined
    return new Promise((resolve) => setImmediate(resolve))
  }

  /** Writes every queued session and waits for every write; throws the first write's error. */
  async flush(): Promise<void> {
    await this.#dispatch()
    await this.#settle()
  }

  /**
   * After `error` stopped the reading: commits the complete sessions read before it (unless a write
   * failed: then nothing after the failing session is written), then throws the earliest error in file
   * order: a write's, else `error`.
   */
  async abort(error: unknown): Promise<never> {
    if (!this.#failed) await this.flush()
    else this.#pending = []
    throw error
  }

  async #settle(): Promise<void> {
    const inflight = this.#inflight
    this.#inflight = null
    if (inflight) await inflight
  }

  async #dispatch(): Promise<void> {
    const batch = this.#pending
    this.#pending = []
    this.#events = 0
    this.#size = 0
    await this.#settle()
    if (batch.length === 0) return
    const write = this.#write(batch)
    // observed by #settle; meanwhile the next batch is read
    write.catch(() => undefined)
    this.#inflight = write
  }

  async #write(batch: readonly FileSession[]): Promise<void> {
    try {
      let outcomes: SessionOutcome[]
      try {
        outcomes = await inTransaction(this.#db, (db) => writeSessions(db, batch))
      } catch (error) {
        if (batch.length === 1 || this.#db.isTransaction) throw fileFault(error, (batch[0] as FileSession).session)
        // find the failing session: one transaction per session, in file order
        for (const one of batch) {
          let outcome: SessionOutcome | undefined
          try {
            outcome = (await inTransaction(this.#db, (db) => writeSessions(db, [one])))[0]
          } catch (e) {
            throw fileFault(e, one.session)
          }
          if (outcome) this.#done(one.session, outcome)
        }
        return
      }
      batch.forEach((one, i) => this.#done(one.session, outcomes[i] as SessionOutcome))
    } catch (error) {
      this.#failed = true
      throw error
    }
  }
}

/**
 * Imports a file written by `exportSessions` into a Postgres (or PGlite) store, exactly: session ids,
 * seqs, event ids, types, message ids, content hashes, payload and data texts and `recordedAt` are
 * kept. The database computes every chain link it writes (`turnlog.import_events`, migration 0007) and
 * the import refuses (`IMPORT_FAILED`, naming the line and seq) any that differs from the file's; the
 * links of events the store already has are checked here. The file is checked as it is read (header,
 * contiguous seqs from 1, content hashes, one session's events after its session line, an end line).
 *
 * Each session is all or nothing: sessions are written in batches (one transaction of up to 2,000
 * events or 200 sessions, while the next batch is read), and a batch that fails is written again one
 * session per transaction, so every session before the failing one is committed and nothing after it
 * is. Idempotent: events the store already has (same seq, same link) are skipped, so importing a file
 * twice changes nothing, and a longer export of a session extends it. A session whose stored events
 * differ from the file's, or whose original messages belong to another session, is refused with
 * `MESSAGE_CONFLICT` and nothing of it is written (sessions before it stay committed); other
 * attributes that differ give `SESSION_EXISTS`. Malformed lines give `IMPORT_FAILED` with
 * `details.line` (the complete sessions before the line are committed). Up to two batches are held in
 * memory (a session is never split: a larger session is held whole).
 */
export async function importEvents(
  store: PostgresStore,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportEventsOptions = {},
): Promise<ImportResult> {
  if (typeof store !== 'object' || store === null || !guardInput('store', () => typeof (store as { db?: unknown }).db === 'object')) {
    throw new TurnlogError('INVALID_INPUT', 'importEvents needs a PostgresStore (it writes through store.db)')
  }
  // checked before anything is written: onProgress runs after a session has committed
  checkOptions(options, 'importEvents options')
  const sessionIds: SessionId[] = []
  let eventsWritten = 0
  let eventsSkipped = 0
  const writer = new SessionWriter(store.db, (session, { written, skipped }) => {
    eventsWritten += written
    eventsSkipped += skipped
    sessionIds.push(session.id)
    options.onProgress?.({ sessions: sessionIds.length, sessionId: session.id, written, skipped })
  })
  let totalEvents = 0
  let headerSeen = false
  let ended = false
  let lastLine = 0
  let current: { session: ParsedSession; events: ParsedEvent[]; size: number } | null = null
  const seen = new Set<string>()

  const finish = async (endLine: number): Promise<void> => {
    if (!current) return
    const { session, events, size } = current
    current = null
    if (events.length !== session.version) {
      throw fail(endLine, `session ${session.id} (line ${session.line}) announces ${session.version} event(s) but the file has ${events.length}`, {
        sessionId: session.id,
        version: session.version,
        events: events.length,
      })
    }
    await writer.add({ session, events, size })
  }

  /** Reads one line; returns a promise only when it has to wait (a session or the file ends). */
  const read = (line: number, text: string): Promise<void> | undefined => {
    lastLine = line
    if (text.trim() === '') return undefined
    if (ended) throw fail(line, 'content after the end line')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (cause) {
      throw fail(line, 'not valid JSON', {}, cause)
    }
    if (!isPlainObject(value)) throw fail(line, 'each line must be a JSON object')
    // before anything walks the line (hashing, stringifying and checking recurse): no stack overflow
    // whatever the nesting. A record holds payloads and metadata of at most MAX_JSON_DEPTH levels, and
    // metadata sits one level down in a compaction's data
    if (jsonDepth(value, LINE_DEPTH) > LINE_DEPTH) throw fail(line, `the line is nested deeper than ${LINE_DEPTH} levels of arrays and objects`, { limit: LINE_DEPTH })
    if (!headerSeen) {
      if (value['format'] !== EXPORT_FORMAT) throw fail(line, `not a turnlog export (the first line must have format "${EXPORT_FORMAT}")`)
      if (value['version'] !== EXPORT_VERSION) {
        throw fail(line, `unsupported export version ${JSON.stringify(value['version'])}; this importer reads version ${EXPORT_VERSION}`)
      }
      headerSeen = true
      return undefined
    }
    switch (value['kind']) {
      case 'session':
        return (async () => {
          await finish(line)
          const session = parseSessionRecord(value, line)
          if (seen.has(session.id)) throw fail(line, `session ${session.id} appears twice in the file`, { sessionId: session.id })
          seen.add(session.id)
          // the metadata travels with the batch too (one statement inserts the batch's new sessions)
          current = { session, events: [], size: session.metadata === null ? 0 : JSON.stringify(session.metadata).length }
        })()
      case 'event': {
        if (!current) throw fail(line, 'an event line before any session line')
        const active: { session: ParsedSession; events: ParsedEvent[]; size: number } = current
        const event = parseEventRecord(value, line, active.session, active.events.length + 1)
        active.events.push(event)
        active.size += (event.payloadText?.length ?? 0) + event.dataText.length
        totalEvents++
        return undefined
      }
      case 'end':
        return (async () => {
          await finish(line)
          await writer.flush()
          if (value['sessions'] !== seen.size || value['events'] !== totalEvents) {
            throw fail(line, `the end line counts ${String(value['sessions'])} session(s) and ${String(value['events'])} event(s) but the file has ${seen.size} and ${totalEvents}`)
          }
          ended = true
        })()
      default:
        throw fail(line, `unknown record kind ${JSON.stringify(value['kind'])}`)
    }
  }

  try {
    checkSource(lines)
    if (Symbol.asyncIterator in lines) {
      for await (const { line, text } of numberedLines(lines)) {
        await read(line, text)
        await writer.pause()
      }
    } else {
      for (const { line, text } of numberedLinesSync(lines as Iterable<unknown>)) {
        const waiting = read(line, text)
        if (waiting) await waiting
        const paused = writer.pause()
        if (paused) await paused
      }
    }
    if (!headerSeen) throw fail(Math.max(lastLine, 1), 'empty input: no header line')
    if (!ended) {
      await finish(lastLine + 1)
      await writer.flush()
      throw fail(lastLine + 1, 'the file ends without its end line (truncated?); the complete sessions before this point were imported', {
        sessionIds,
        eventsWritten,
        eventsSkipped,
      })
    }
  } catch (error) {
    return await writer.abort(error)
  }
  return { sessions: sessionIds.length, eventsWritten, eventsSkipped, sessionIds }
}
