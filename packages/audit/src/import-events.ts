import {
  DEFAULT_MESSAGE_FORMAT,
  EVENT_TYPES,
  MAX_JSON_DEPTH,
  TurnlogError,
  jsonDepth,
  messageFormat,
  isRedactedPayload,
  isTurnlogError,
  parseFormatPayload,
  parseEventId,
  parseMessageId,
  parseSessionId,
  type ImportedSession,
  type JsonValue,
  type SessionId,
  type SessionStore,
  type StoredEvent,
} from '@turnlog/core'
import { checkOptions, isIsoTimestamp, optionKeys, payloadContentHash, type ImportedSessionHead } from '@turnlog/core/internal'
import { hash as nodeHash } from 'node:crypto'
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportEventRecord, type ExportSessionRecord } from './export-sessions.js'
import { ChainVerifier } from './verify-chain.js'
import { checkSource, numberedLines, numberedLinesSync } from './numbered-lines.js'
import { emptyForkProblem, lineageProblem } from './check-lineage.js'

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

/** Every option of `importEvents`: any other key is refused before anything is read. */
const IMPORT_EVENTS_OPTIONS = optionKeys<ImportEventsOptions>({ onProgress: true })

function fail(line: number, message: string, details: Record<string, unknown> = {}, cause?: unknown): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, {
    details: { line, ...details },
    ...(cause === undefined ? {} : { cause }),
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const HEX64 = /^[0-9a-f]{64}$/
const TYPES = new Set<string>(EVENT_TYPES)
const MESSAGE_TYPES = new Set(['message_appended', 'message_revised'])

function isoField(value: unknown, what: string, line: number): string {
  // a real date and time: Date.parse alone reads 2024-02-30 as March 1
  if (!isIsoTimestamp(value)) throw fail(line, `${what} must be an ISO-8601 timestamp of a real date and time`, { field: what })
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

interface ParsedSession extends ImportedSessionHead {
  readonly version: number
}
interface ParsedEvent {
  readonly line: number
  readonly record: ExportEventRecord
}

function parseSessionRecord(value: Record<string, unknown>, line: number): ParsedSession {
  const r = value as Partial<Record<keyof ExportSessionRecord, unknown>>
  const id = guard(line, 'session id', () => parseSessionId(r.id))
  // the store checks what it stores (no NUL or lone surrogate in a tenant)
  if (r.tenantId !== null && r.tenantId !== undefined && typeof r.tenantId !== 'string')
    throw fail(line, 'tenantId must be a string or null')
  const tenantId = r.tenantId ?? null
  const metadata = r.metadata === undefined ? null : (r.metadata as JsonValue | null)
  if (jsonDepth(metadata) > MAX_JSON_DEPTH)
    throw fail(line, `session metadata is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`, { limit: MAX_JSON_DEPTH })
  const version = r.version
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0)
    throw fail(line, 'session version must be a non-negative integer')
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
  const createdAt = isoField(r.createdAt, 'createdAt', line)
  const updatedAt = isoField(r.updatedAt, 'updatedAt', line)
  return { line, id, tenantId, metadata, createdAt, updatedAt, version, parent }
}

/**
 * Validates one event line against the session being read. The chain link is not checked here: the
 * store checks every link (`importSessions`).
 */
function parseEventRecord(value: Record<string, unknown>, line: number, session: ParsedSession, expectedSeq: number): ParsedEvent {
  const r = value as Partial<Record<keyof ExportEventRecord, unknown>>
  const sessionId = guard(line, 'event sessionId', () => parseSessionId(r.sessionId))
  if (sessionId !== session.id)
    throw fail(line, `event of session ${sessionId} inside session ${session.id} (line ${session.line})`, { sessionId })
  if (r.seq !== expectedSeq) {
    throw fail(
      line,
      `session ${session.id}: expected seq ${expectedSeq}, found ${JSON.stringify(r.seq)} (the file's log must be contiguous from 1)`,
      {
        sessionId,
        seq: r.seq,
        expectedSeq,
      },
    )
  }
  const eventId = guard(line, 'eventId', () => parseEventId(r.eventId))
  if (typeof r.type !== 'string' || !TYPES.has(r.type))
    throw fail(line, `unknown event type ${JSON.stringify(r.type)}`, { sessionId, seq: expectedSeq })
  const messageId = r.messageId === null || r.messageId === undefined ? null : guard(line, 'messageId', () => parseMessageId(r.messageId))
  const hash = r.contentHash
  if (hash !== null && hash !== undefined && (typeof hash !== 'string' || !HEX64.test(hash)))
    throw fail(line, 'contentHash must be 64 lower-case hex digits or null')
  const contentHashValue = (hash ?? null) as string | null
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) throw fail(line, 'hash must be 64 lower-case hex digits')
  if (!isPlainObject(r.data)) throw fail(line, 'data must be an object')
  // the store checks its strings (no NUL or lone surrogate in event data)
  const data = r.data as JsonValue
  const payload = r.payload === undefined ? null : r.payload
  if (payload !== null && !isPlainObject(payload)) throw fail(line, 'payload must be an object or null')
  const digest = r.payloadDigest
  if (digest !== undefined && (typeof digest !== 'string' || !HEX64.test(digest)))
    throw fail(line, 'payloadDigest must be 64 lower-case hex digits')
  if (digest !== undefined && !MESSAGE_TYPES.has(r.type))
    throw fail(line, `a ${r.type} event carries no payloadDigest`, { sessionId, seq: expectedSeq })
  if (MESSAGE_TYPES.has(r.type)) {
    if (payload === null || messageId === null || contentHashValue === null) {
      throw fail(line, `a ${r.type} event needs messageId, contentHash and payload`, { sessionId, seq: expectedSeq })
    }
  }
  if (MESSAGE_TYPES.has(r.type) && payload !== null && (digest !== undefined || (r.data as { redacted?: unknown }).redacted === true)) {
    // scrubbed by a redaction (payloadDigest), or a fork's copy of a scrubbed payload (data.redacted): the
    // payload is the placeholder and the content hash still the original's; the chain link covers the rest
    const format = (r.data as { format?: unknown }).format
    if (!isRedactedPayload(payload, typeof format === 'string' ? format : DEFAULT_MESSAGE_FORMAT)) {
      throw fail(line, `session ${session.id} seq ${expectedSeq}: a redacted event's payload must be a redaction placeholder`, {
        sessionId,
        seq: expectedSeq,
      })
    }
  } else if (MESSAGE_TYPES.has(r.type)) {
    // validated with the event's format (data.format; absent: openai-chat), which this process must know
    const format = (r.data as { format?: unknown }).format
    if (format !== undefined && typeof format !== 'string')
      throw fail(line, 'data.format must be a string', { sessionId, seq: expectedSeq })
    // core's content-hash rule (what contentHash computes for this payload) with node's SHA-256, ~3× faster
    // than core's portable one
    const computed = checkedContentHash(payload, format, line)
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
  return { line, record }
}

/** Freezes a value parsed from JSON in place, to {@link MAX_JSON_DEPTH} levels (deeper: refused after, by `payloadContentHash`). */
function deepFreeze(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_JSON_DEPTH) return value
  if (Array.isArray(value)) for (const item of value) deepFreeze(item, depth + 1)
  else for (const key in value) deepFreeze((value as Record<string, unknown>)[key], depth + 1)
  return Object.freeze(value)
}

/** node's SHA-256 of a text, as lower-case hex. */
const nodeSha256 = (text: string): string => nodeHash('sha256', text, 'hex')

/**
 * The content hash of a message payload read from the file, checked against its format: what
 * `parseFormatPayload` then `payloadContentHash` give, without the frozen copy (the value comes from
 * `JSON.parse`, so it is plain JSON that nothing else holds; the copy was a third of the check). A
 * payload either refuses gets `parseFormatPayload`'s own error.
 */
function checkedContentHash(payload: unknown, format: string | undefined, line: number): string {
  const schema = guard(line, 'payload', () => messageFormat(format)).schema
  let hash: string | undefined
  try {
    // a format's schema is given a frozen value (MessageFormat.schema): this one, frozen in place
    const frozen = deepFreeze(payload, 0)
    if (schema.safeParse(frozen).success) hash = payloadContentHash(frozen as object, nodeSha256)
  } catch {
    // too deep or too long: parseFormatPayload names it
  }
  return hash ?? guard(line, 'payload', () => payloadContentHash(parseFormatPayload(payload, format) as object, nodeSha256))
}

/** A complete session of the file: its session line and its events. */
interface FileSession {
  readonly session: ParsedSession
  readonly events: readonly ParsedEvent[]
}

/** Deepest nesting of a line: a record (1) around event data (2) around compaction metadata. */
const LINE_DEPTH = MAX_JSON_DEPTH + 2

/**
 * Refuses (`IMPORT_FAILED`, naming the line and seq) a session whose scrubbed events are not exactly
 * what its chained `message_redacted` records say: a placeholder rewritten in the file (another role,
 * other pairing ids), a scrub no record confirms, a record without its placeholder digest. The store
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

/**
 * Refuses (`IMPORT_FAILED`, naming the line and seq, `details.reason: 'lineage_mismatch'`) a session
 * whose session line names a fork parent its chained log does not: the `parent` of a session line is
 * covered by no link, but seq 1 of a fork, its `session_forked` event, names the same parent, version
 * and fork point (the store writes both in one `fork`). Without this a file edited to move a fork
 * point, or to make a fork a root (or a root a fork), imported as written and the audit found nothing.
 */
function checkLineage(s: ParsedSession, events: readonly ParsedEvent[]): void {
  const empty = emptyForkProblem(s.parent, events.length)
  if (empty !== undefined) {
    throw fail(s.line, `session ${s.id}: ${empty}; nothing of the session was imported`, { sessionId: s.id, reason: 'lineage_mismatch' })
  }
  for (const { line, record } of events) {
    const problem = lineageProblem(s.parent, record)
    if (problem !== undefined) {
      throw fail(line, `session ${s.id} seq ${record.seq}: ${problem}; nothing of the session was imported`, {
        sessionId: s.id,
        seq: record.seq,
        reason: 'lineage_mismatch',
      })
    }
  }
}

/** A checked session of the file as the store imports it. */
function toImported({ session: s, events }: FileSession): ImportedSession {
  return {
    id: s.id,
    tenantId: s.tenantId,
    metadata: s.metadata,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    parent: s.parent,
    line: s.line,
    events: events.map(({ line, record: e }) => ({
      seq: e.seq,
      eventId: e.eventId,
      type: e.type,
      messageId: e.messageId,
      contentHash: e.contentHash,
      payload: e.payload,
      data: e.data,
      recordedAt: e.recordedAt,
      hash: e.hash,
      ...(e.payloadDigest === undefined ? {} : { payloadDigest: e.payloadDigest }),
      line,
    })),
  }
}

/** What the reading found besides the sessions: where a file without its end line stops. */
interface ReadState {
  truncatedAt: number | null
}

/** The session being read: its session line, its events so far, and whether its block has a line too many. */
interface OpenSession {
  readonly session: ParsedSession
  readonly events: ParsedEvent[]
  /** An event line came after the events the session line announces: the block no longer checks out. */
  overfull: boolean
}

/**
 * The file's complete sessions, checked, in file order; throws `IMPORT_FAILED` at the first malformed
 * line (the store then commits the sessions yielded before it). A session is complete when its session
 * line and exactly the events it announces (`version`, seqs 1 to `version`) have been read and checked:
 * normally that shows at the next session line or the end line, and on any failure of the reading (a
 * malformed line, a line of an unknown kind, a source that fails) the session being read is still
 * yielded first when it is complete and the failing line is not an event line (which would be one line
 * too many of its block), so the store commits it before the error. A session cut short is never
 * yielded. A file without its end line ends the sessions normally and sets `state.truncatedAt` (the
 * caller reports it once the sessions before are committed).
 */
async function* fileSessions(lines: AsyncIterable<string> | Iterable<string>, state: ReadState): AsyncGenerator<ImportedSession> {
  let totalEvents = 0
  let headerSeen = false
  let ended = false
  let lastLine = 0
  let current: OpenSession | null = null
  const seen = new Set<string>()

  /** Closes the session being read (at `endLine`): checks it whole and returns it. */
  const finish = (endLine: number): ImportedSession | undefined => {
    if (!current) return undefined
    const { session, events } = current
    current = null
    if (events.length !== session.version) {
      throw fail(
        endLine,
        `session ${session.id} (line ${session.line}) announces ${session.version} event(s) but the file has ${events.length}`,
        {
          sessionId: session.id,
          version: session.version,
          events: events.length,
        },
      )
    }
    checkLineage(session, events)
    checkScrubs(session, events)
    return toImported({ session, events })
  }

  /**
   * After a failure of the reading: the session being read, closed, when it is provably complete (every
   * event it announces read and checked, no event line beyond them), else undefined. At a yield the
   * session has been closed already, so nothing is yielded twice.
   */
  const finishComplete = (): ImportedSession | undefined => {
    if (!current || current.overfull || current.events.length !== current.session.version) return undefined
    return finish(lastLine)
  }

  /** Reads one line; returns the session it completed, if any. */
  const read = (line: number, text: string): ImportedSession | undefined => {
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
    // an event line beyond the events the session line announces: even when it fails its checks, the
    // session is not committed as it stands (finish refuses the count when it passes them)
    if (value['kind'] === 'event' && current && current.events.length >= current.session.version) current.overfull = true
    // before anything walks the line (hashing, stringifying and checking recurse): no stack overflow
    // whatever the nesting. A record holds payloads and metadata of at most MAX_JSON_DEPTH levels, and
    // metadata sits one level down in a compaction's data
    if (jsonDepth(value, LINE_DEPTH) > LINE_DEPTH)
      throw fail(line, `the line is nested deeper than ${LINE_DEPTH} levels of arrays and objects`, { limit: LINE_DEPTH })
    if (!headerSeen) {
      if (value['format'] !== EXPORT_FORMAT) throw fail(line, `not a turnlog export (the first line must have format "${EXPORT_FORMAT}")`)
      if (value['version'] !== EXPORT_VERSION) {
        throw fail(line, `unsupported export version ${JSON.stringify(value['version'])}; this importer reads version ${EXPORT_VERSION}`)
      }
      headerSeen = true
      return undefined
    }
    switch (value['kind']) {
      case 'session': {
        const done = finish(line)
        // parsed after the previous session is out: it is committed even when this line is malformed
        pendingLine = { line, value }
        return done
      }
      case 'event': {
        if (!current) throw fail(line, 'an event line before any session line')
        const active: OpenSession = current
        active.events.push(parseEventRecord(value, line, active.session, active.events.length + 1))
        totalEvents++
        return undefined
      }
      case 'end': {
        const done = finish(line)
        pendingEnd = { line, value }
        return done
      }
      default:
        throw fail(line, `unknown record kind ${JSON.stringify(value['kind'])}`)
    }
  }

  // a session or end line is handled after the session it completes has been handed over
  let pendingLine: { line: number; value: Record<string, unknown> } | null = null
  let pendingEnd: { line: number; value: Record<string, unknown> } | null = null
  const afterYield = (): void => {
    if (pendingLine !== null) {
      const { line, value } = pendingLine
      pendingLine = null
      const session = parseSessionRecord(value, line)
      if (seen.has(session.id)) throw fail(line, `session ${session.id} appears twice in the file`, { sessionId: session.id })
      seen.add(session.id)
      current = { session, events: [], overfull: false }
    }
    if (pendingEnd !== null) {
      const { line, value } = pendingEnd
      pendingEnd = null
      if (value['sessions'] !== seen.size || value['events'] !== totalEvents) {
        throw fail(
          line,
          `the end line counts ${String(value['sessions'])} session(s) and ${String(value['events'])} event(s) but the file has ${seen.size} and ${totalEvents}`,
        )
      }
      ended = true
    }
  }

  checkSource(lines)
  try {
    if (Symbol.asyncIterator in lines) {
      for await (const { line, text } of numberedLines(lines)) {
        const done = read(line, text)
        if (done) yield done
        afterYield()
      }
    } else {
      for (const { line, text } of numberedLinesSync(lines as Iterable<unknown>)) {
        const done = read(line, text)
        if (done) yield done
        afterYield()
      }
    }
  } catch (error) {
    // a malformed line (or a failing source) right after a complete session: that session is committed
    // first, like every session before it (a session that fails its own checks throws its own error,
    // which comes from an earlier line)
    const done = finishComplete()
    if (done) yield done
    throw error
  }
  if (!headerSeen) throw fail(Math.max(lastLine, 1), 'empty input: no header line')
  if (!ended) {
    const done = finish(lastLine + 1)
    if (done) yield done
    state.truncatedAt = lastLine + 1
  }
}
/**
 * Imports a file written by `exportSessions` into a store that can import (`importSessions`: a
 * Postgres or PGlite store), exactly: session ids, seqs, event ids, types, message ids, content
 * hashes, payload and data texts and `recordedAt` are kept. The file is checked as it is read (header,
 * contiguous seqs from 1, content hashes, redaction placeholders, one session's events after its
 * session line, an end line); the store computes every chain link it writes and refuses
 * (`IMPORT_FAILED`, naming the line and seq) any that differs from the file's, and checks the links of
 * events it already has.
 *
 * Each session is all or nothing: sessions are written in batches (one transaction of up to 2,000
 * events or 200 sessions, while the next batch is read), and a batch that fails is written again one
 * session per transaction, so every session before the failing one is committed and nothing after it
 * is. Idempotent: events the store already has (same seq, same link) are skipped, so importing a file
 * twice changes nothing, and a longer export of a session extends it. A session whose stored events
 * differ from the file's, or whose original messages belong to another session, is refused with
 * `MESSAGE_CONFLICT` and nothing of it is written (sessions before it stay committed); other
 * attributes that differ give `SESSION_EXISTS`. Malformed lines give `IMPORT_FAILED` with
 * `details.line`; the complete sessions before the line are committed, the one right before it
 * included (complete: its session line and every event it announces read and checked; a session cut
 * short is never written). Up to two batches are held in
 * memory (a session is never split: a larger session is held whole). A store without
 * `importSessions`, and an options key that is not an option (`details.field` naming it, e.g.
 * `options.onProgres`), are refused with `INVALID_INPUT` before anything is read.
 */
export async function importEvents(
  store: SessionStore,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportEventsOptions = {},
): Promise<ImportResult> {
  let importer: SessionStore['importSessions']
  try {
    importer = typeof store === 'object' && store !== null ? store.importSessions : undefined
  } catch {
    importer = undefined // a throwing getter or revoked Proxy: not a store
  }
  if (typeof importer !== 'function') {
    throw new TurnlogError(
      'INVALID_INPUT',
      'importEvents needs a store that imports sessions (importSessions: a Postgres or PGlite store)',
      { details: { field: 'store' } },
    )
  }
  // checked before anything is written: onProgress runs after a session has committed
  checkOptions(options, 'importEvents options', IMPORT_EVENTS_OPTIONS)
  const state: ReadState = { truncatedAt: null }
  let sessions = 0
  const result = await importer.call(store, fileSessions(lines, state), {
    onSession: ({ sessionId, written, skipped }) => {
      sessions++
      options.onProgress?.({ sessions, sessionId, written, skipped })
    },
  })
  if (state.truncatedAt !== null) {
    throw fail(
      state.truncatedAt,
      'the file ends without its end line (truncated?); the complete sessions before this point were imported',
      {
        sessionIds: result.sessionIds,
        eventsWritten: result.eventsWritten,
        eventsSkipped: result.eventsSkipped,
      },
    )
  }
  return {
    sessions: result.sessions,
    eventsWritten: result.eventsWritten,
    eventsSkipped: result.eventsSkipped,
    sessionIds: result.sessionIds,
  }
}
