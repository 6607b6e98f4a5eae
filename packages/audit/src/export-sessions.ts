import {
  GENESIS_HASH,
  TurnlogError,
  eventChainHash,
  type ChainedFields,
  type JsonValue,
  type SessionInfo,
  type SessionStore,
  type StoredEvent,
} from '@turnlog/core'
import { checkKnownKeys, guardInput, optionKeys, parseSessionIdArgument } from '@turnlog/core/internal'
import { checkStore } from './check-store.js'

/** The `format` of a turnlog export file's header line. */
export const EXPORT_FORMAT = 'turnlog-export'
/** The export format version this package writes and reads. */
export const EXPORT_VERSION = 1

/** First line of an export file. */
export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT
  readonly version: typeof EXPORT_VERSION
  /** When the export started (ISO-8601). */
  readonly exportedAt: string
}

/** A session line: precedes the session's event lines. */
export interface ExportSessionRecord {
  readonly kind: 'session'
  readonly id: string
  readonly tenantId: string | null
  readonly metadata: JsonValue | null
  readonly createdAt: string
  readonly updatedAt: string
  /** Number of event lines that follow (the session's version at export time). */
  readonly version: number
  /** Fork lineage: the parent session, its version at the fork, and the last inherited message. */
  readonly parent: { readonly sessionId: string; readonly version: number; readonly at: string } | null
}

/** One event of a session's log, exactly as stored (no global position, no transaction id). */
export interface ExportEventRecord extends ChainedFields {
  readonly kind: 'event'
  readonly payload: JsonValue | null
  readonly data: JsonValue
  readonly recordedAt: string
  /** The hash-chain link (hex); the importer recomputes it and refuses the file on a mismatch. */
  readonly hash: string
  /** Set on an event a redaction scrubbed: the digest the chain covers instead of the (placeholder) payload. */
  readonly payloadDigest?: string
}

/** Last line of an export file: lets an importer tell a complete file from a truncated one. */
export interface ExportEndRecord {
  readonly kind: 'end'
  readonly sessions: number
  readonly events: number
}

/** Which sessions {@link exportSessions} writes. */
export type ExportSelection = { readonly sessionIds: readonly string[] } | { readonly all: true; readonly tenantId?: string }

/** Options for {@link exportSessions}. */
export interface ExportSessionsOptions {
  /**
   * Recompute every event's chain link in JavaScript from the JSON texts the importer will rebuild,
   * and throw `CORRUPT_LOG` (naming session and seq) on the first mismatch, so a file that cannot be
   * imported is never written. Default true.
   */
  readonly verify?: boolean
  /** Page size when listing all sessions (1–1000); default 100. */
  readonly pageSize?: number
}

/** Every option of {@link exportSessions}. */
const EXPORT_OPTIONS = optionKeys<ExportSessionsOptions>({ verify: true, pageSize: true })

/**
 * A JSON text that is one line whatever a line splitter treats as a break: `JSON.stringify` already
 * escapes CR, LF, the other C0 controls, NUL and lone surrogates; this also escapes U+0085, U+2028 and
 * U+2029 (Python's `splitlines` and some editors break on them). JSON.parse reads the same string.
 */
export function toJsonLine(value: unknown): string {
  const text = guardInput('toJsonLine', () => JSON.stringify(value) as string | undefined)
  if (text === undefined)
    throw new TurnlogError('INVALID_INPUT', `toJsonLine needs a JSON value, got ${typeof value}`, { details: { field: 'value' } })
  return text.replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function sessionRecord(info: SessionInfo): ExportSessionRecord {
  const { sessionId: id, tenantId, metadata, createdAt, updatedAt, version, parent } = info
  const from = parent === null ? null : { sessionId: parent.sessionId, version: parent.version, at: parent.at }
  return { kind: 'session', id, tenantId, metadata, createdAt, updatedAt, version, parent: from }
}

function eventRecord(e: StoredEvent): ExportEventRecord {
  return {
    kind: 'event',
    sessionId: e.sessionId,
    seq: e.seq,
    eventId: e.eventId,
    type: e.type,
    messageId: e.messageId,
    contentHash: e.contentHash,
    payload: e.payload as JsonValue | null,
    data: e.data as JsonValue,
    recordedAt: e.recordedAt,
    hash: e.hash,
    ...(e.payloadDigest === undefined ? {} : { payloadDigest: e.payloadDigest }),
  }
}

/**
 * The chain link of an exported event, recomputed from the texts an importer rebuilds with
 * `JSON.stringify` (the store writes exactly those texts, so they hash to the stored link).
 */
export function exportedChainHash(
  prev: string,
  e: Pick<ExportEventRecord, 'sessionId' | 'seq' | 'eventId' | 'type' | 'messageId' | 'contentHash' | 'payload' | 'data' | 'payloadDigest'>,
): string {
  return eventChainHash(prev, e)
}

async function* selectedSessions(store: SessionStore, selection: ExportSelection, pageSize: number): AsyncGenerator<SessionInfo> {
  if ('sessionIds' in selection) {
    if (!Array.isArray(selection.sessionIds))
      throw new TurnlogError('INVALID_INPUT', 'sessionIds must be an array of session ids', { details: { field: 'selection.sessionIds' } })
    const seen = new Set<string>()
    for (const [i, raw] of (selection.sessionIds as unknown[]).entries()) {
      const id = parseSessionIdArgument(raw, `selection.sessionIds[${i}]`)
      if (seen.has(id)) continue
      seen.add(id)
      yield await store.getSession(id)
    }
    return
  }
  if (selection.all !== true) throw new TurnlogError('INVALID_INPUT', 'selection must be { sessionIds } or { all: true }')
  let after: string | undefined
  for (;;) {
    const page = await store.sessions({
      limit: pageSize,
      ...(after === undefined ? {} : { after }),
      ...(selection.tenantId === undefined ? {} : { tenantId: selection.tenantId }),
    })
    for (const info of page.sessions) yield info
    if (page.next === null) return
    after = page.next
  }
}

/**
 * Exports sessions as JSON Lines, losslessly: a header line, then per session a session line and one
 * line per event (seq order), then an end line with the counts. Each yielded string is one line
 * without its line break. Content is exact: `JSON.stringify` escapes NUL and lone surrogates, so every
 * line is valid UTF-8 and `JSON.parse` gives back the same strings. Portable: no global positions or
 * transaction ids. Memory stays bounded: sessions are listed page by page and events streamed.
 *
 * Each session's events are read up to the version its session line states, so a session written to
 * during the export is still exported consistently. Throws `SESSION_NOT_FOUND` for an unknown id in
 * `sessionIds`, (unless `verify: false`) `CORRUPT_LOG` when a stored link does not verify, and
 * `INVALID_INPUT` for a key that is neither an option nor one of the selection's (`details.field`
 * naming it: `selection.tenantID`, with `details.suggestion` when one is near), before the first line.
 * @example
 * ```ts
 * const out = createWriteStream('backup.jsonl')
 * for await (const line of exportSessions(store, { all: true })) out.write(line)
 * ```
 */
export async function* exportSessions(
  store: SessionStore,
  selection: ExportSelection,
  options: ExportSessionsOptions = {},
): AsyncGenerator<string> {
  checkStore(store, ['getSession', 'events', 'sessions'])
  if (typeof selection !== 'object' || selection === null) {
    throw new TurnlogError('INVALID_INPUT', 'selection must be { sessionIds } or { all: true }')
  }
  // a default parameter does not replace null
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TurnlogError('INVALID_INPUT', 'exportSessions options must be an object')
  // read once: a throwing getter is the caller's input (INVALID_INPUT), not a raw error
  ;({ options, selection } = guardInput('options', () => ({ options: { ...options }, selection: { ...selection } })))
  // a misspelt key is refused before the header: `{ all: true, tenantID }` would export every tenant's
  // sessions, `{ verfy: false }` verify all the same
  checkKnownKeys(options, EXPORT_OPTIONS, 'options', 'exportSessions')
  checkKnownKeys(selection, 'sessionIds' in selection ? ['sessionIds'] : ['all', 'tenantId'], 'selection', 'exportSessions')
  const verify = options.verify !== false
  const pageSize = options.pageSize ?? 100
  const header: ExportHeader = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date().toISOString() }
  yield toJsonLine(header)
  let sessions = 0
  let events = 0
  for await (const info of selectedSessions(store, selection, pageSize)) {
    yield toJsonLine(sessionRecord(info))
    sessions++
    if (info.version === 0) continue
    let prev = GENESIS_HASH
    let expectedSeq = 1
    for await (const e of store.events(info.sessionId, { toSeq: info.version })) {
      const record = eventRecord(e)
      if (verify) {
        if (record.seq !== expectedSeq) {
          throw new TurnlogError('CORRUPT_LOG', `session ${info.sessionId}: expected seq ${expectedSeq}, found ${record.seq}`, {
            details: { sessionId: info.sessionId, seq: record.seq, expectedSeq },
          })
        }
        const link = exportedChainHash(prev, record)
        if (link !== record.hash) {
          throw new TurnlogError('CORRUPT_LOG', `session ${info.sessionId}: the chain link of seq ${record.seq} does not verify`, {
            details: { sessionId: info.sessionId, seq: record.seq, storedHash: record.hash, computedHash: link },
          })
        }
        prev = record.hash
      }
      expectedSeq++
      events++
      yield toJsonLine(record)
    }
    if (expectedSeq - 1 !== info.version) {
      throw new TurnlogError('CORRUPT_LOG', `session ${info.sessionId}: version ${info.version} but ${expectedSeq - 1} event(s) read`, {
        details: { sessionId: info.sessionId, version: info.version, events: expectedSeq - 1 },
      })
    }
  }
  const end: ExportEndRecord = { kind: 'end', sessions, events }
  yield toJsonLine(end)
}
