import {
  canonicalJson,
  contentHash,
  createMessage,
  messageIdFromExternal,
  sha256Hex,
  toFrozenJson,
  type ChatMessage,
  type JsonValue,
  type Message,
  TurnlogError,
} from '@turnlog/core'
import { guardInput, isIsoTimestamp } from '@turnlog/core/internal'
import type { HermesMessageRecord, SqliteValue } from './hermes-state-db.js'
import { HermesWarnings } from './hermes-warning.js'

/** A hermes row's state: `active=1` live; `active=0, compacted=1` compacted; `active=0, compacted=0` rewound. */
export type HermesRowState = 'active' | 'compacted' | 'rewound'

/** One hermes message row, as a turnlog message plus what the importer needs to place it. */
export interface HermesRowMessage {
  readonly rowId: number
  readonly state: HermesRowState
  /** A compaction summary row (`[CONTEXT COMPACTION]…` content, or `_compressed_summary=1`). */
  readonly summary: boolean
  /** id and externalId `hermes:<sessionId>:<rowId>`, createdAt from `timestamp`. */
  readonly message: Message
  /** Content hash of the payload. */
  readonly hash: string
  /**
   * What makes two rows the same message when hermes re-inserts one: role, content, tool calls,
   * tool_call_id and name (not token counts or other row bookkeeping, which re-inserts drop).
   */
  readonly identity: string
  /** `timestamp` as epoch seconds, when readable. */
  readonly epochSeconds: number | null
}

/** The external id (and so the message id) of a hermes row. */
export function hermesExternalId(hermesSessionId: string, rowId: number): string {
  if (typeof hermesSessionId !== 'string' && !(typeof hermesSessionId === 'number' && Number.isFinite(hermesSessionId))) {
    throw new TurnlogError('INVALID_INPUT', 'a hermes session id must be a string', { details: { field: 'hermesSessionId' } })
  }
  if (typeof rowId !== 'number' || !Number.isSafeInteger(rowId))
    throw new TurnlogError('INVALID_INPUT', 'rowId must be an integer', { details: { field: 'rowId' } })
  return `hermes:${hermesSessionId}:${rowId}`
}

/** Prefix of a hermes compaction summary's content. */
export const HERMES_COMPACTION_PREFIX = '[CONTEXT COMPACTION'
/** Prefixes hermes puts before JSON-encoded (list/dict) content: `\x00json:` (old), `\x01json:` (current). */
const CONTENT_JSON_PREFIXES = ['\u0000json:', '\u0001json:']
// eslint-disable-next-line no-control-regex
const SAFE_TEXT = /^(?:[^\u0000\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff]){1,4096}$/
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool'])

/** Columns that become the message's structure, not payload fields. */
const STRUCTURAL = new Set(['id', 'session_id', 'active', 'compacted', 'timestamp', 'display_identity', 'display_order'])
/** Columns copied to the payload field of the same name when set (JSON text decoded). */
const COPIED_FIELDS = [
  'finish_reason',
  'reasoning',
  'reasoning_content',
  'reasoning_details',
  'codex_reasoning_items',
  'codex_message_items',
] as const
/** Columns mapped onto top-level payload fields. */
const MESSAGE_FIELDS = new Set<string>(['role', 'content', 'tool_calls', 'tool_call_id', 'tool_name', ...COPIED_FIELDS])
/** Columns holding JSON text that is decoded when it parses. */
const JSON_COLUMNS = new Set(['reasoning_details', 'codex_reasoning_items', 'codex_message_items', 'display_metadata'])
/** Flag columns kept in `hermes` only when set. */
const FLAGS = new Set(['observed', '_compressed_summary'])

/** Epoch seconds (or milliseconds, when implausibly large) as ISO-8601 with microseconds. */
export function epochToIso(value: number): string | null {
  if (!Number.isFinite(value)) return null
  const seconds = value > 1e11 ? value / 1000 : value
  if (seconds < 0 || seconds > 253402300799) return null
  let whole = Math.floor(seconds)
  let micros = Math.round((seconds - whole) * 1e6)
  if (micros >= 1e6) {
    whole++
    micros -= 1e6
  }
  return `${new Date(whole * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
}

/**
 * A `timestamp` (or `started_at`) cell as epoch seconds, or null when it holds no readable time.
 * hermes writes `time.time()` into a REAL column: epoch seconds. An INTEGER, a numeric TEXT (SQLite's
 * dynamic typing lets a TEXT sit in a REAL column) and milliseconds (a value past 1e11) are read the
 * same way. Any other TEXT is read only when it is an ISO-8601 timestamp of a real instant
 * (`isIsoTimestamp`): `Date.parse` alone reads `2024-02-30` as March 1, a text without a zone in the
 * machine's local time, and many other texts as some date, so such a cell was imported as a time it
 * never held; now it is unreadable (`bad_timestamp`).
 */
export function epochSecondsOf(value: SqliteValue | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? (value > 1e11 ? value / 1000 : value) : null
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value)
    if (Number.isFinite(n)) return n > 1e11 ? n / 1000 : n
    return isIsoTimestamp(value) ? Date.parse(value) / 1000 : null
  }
  return null
}

function toJson(value: SqliteValue): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return value
}

function parseJsonText(text: string): { ok: true; value: JsonValue } | { ok: false } {
  try {
    // toFrozenJson refuses what has no exact JSON form (JSON.parse('1e999') is Infinity) and stack bombs
    return { ok: true, value: toFrozenJson(JSON.parse(text)) }
  } catch {
    return { ok: false }
  }
}

function isToolCallList(value: JsonValue): boolean {
  return (
    Array.isArray(value) &&
    value.every((c: JsonValue) => {
      if (typeof c !== 'object' || c === null || Array.isArray(c)) return false
      const call = c as Record<string, JsonValue>
      const id = call['id'] ?? call['call_id']
      if (typeof id !== 'string' || id === '') return false
      const fn = call['function']
      if (fn === undefined) return true
      if (typeof fn !== 'object' || fn === null || Array.isArray(fn)) return false
      const f = fn as Record<string, JsonValue>
      return typeof f['name'] === 'string' && typeof f['arguments'] === 'string'
    })
  )
}

function isContentParts(value: JsonValue): boolean {
  return (
    Array.isArray(value) &&
    value.every(
      (p: JsonValue) =>
        typeof p === 'object' && p !== null && !Array.isArray(p) && typeof (p as Record<string, JsonValue>)['type'] === 'string',
    )
  )
}

/**
 * Builds the turnlog message of one hermes row, or null (with a warning) for a row turnlog cannot
 * store. The payload is the provider message hermes itself rebuilds from the row: `role`, `content`
 * (JSON-prefixed content decoded into parts), `tool_calls` (the JSON list), `tool_call_id`,
 * `name` (from `tool_name`), `finish_reason`, `reasoning`, `reasoning_content`, `reasoning_details`,
 * `codex_reasoning_items`, `codex_message_items`; every other non-empty column (token_count,
 * platform_message_id, api_content, display metadata, …) is kept verbatim under `hermes`, so no data
 * is dropped and the provider-facing fields stay recognisable. `timestamp` becomes `createdAt`.
 */
export function hermesRowMessage(
  hermesSessionId: string,
  row: HermesMessageRecord,
  context: { readonly fallbackEpochSeconds: number; readonly warnings: HermesWarnings },
): HermesRowMessage | null {
  return guardInput('hermesRowMessage', () => rowMessage(hermesSessionId, row, context))
}

function rowMessage(
  hermesSessionId: string,
  row: HermesMessageRecord,
  context: { readonly fallbackEpochSeconds: number; readonly warnings: HermesWarnings },
): HermesRowMessage | null {
  if (typeof context !== 'object' || context === null || !(context.warnings instanceof HermesWarnings)) {
    throw new TurnlogError('INVALID_INPUT', 'hermesRowMessage needs { fallbackEpochSeconds, warnings: HermesWarnings }', {
      details: { field: 'context' },
    })
  }
  if (typeof row !== 'object' || row === null || typeof row.columns !== 'object' || row.columns === null) {
    throw new TurnlogError('INVALID_INPUT', 'hermesRowMessage needs a row { rowId, columns }', { details: { field: 'row' } })
  }
  hermesExternalId(hermesSessionId, row.rowId)
  const { warnings } = context
  const col = (name: string): SqliteValue | undefined => row.columns[name]
  const warn = (code: Parameters<HermesWarnings['row']>[0], message: string): void =>
    warnings.row(code, hermesSessionId, row.rowId, message)

  const rawRole = col('role')
  const role = typeof rawRole === 'string' ? rawRole : null
  if (role === null || !ROLES.has(role)) {
    warn('unsupported_role', `rows with a role turnlog cannot store (${JSON.stringify(rawRole)}) were skipped`)
    return null
  }

  const payload: Record<string, JsonValue> = { role }
  const extra: Record<string, JsonValue> = {}

  // content
  const rawContent = col('content')
  let content: JsonValue
  if (rawContent === null || rawContent === undefined) {
    if (role === 'assistant') content = null
    else {
      warn('null_content', `non-assistant rows with NULL content are stored with content ""`)
      content = ''
    }
  } else if (typeof rawContent === 'string') {
    const prefix = CONTENT_JSON_PREFIXES.find((p) => rawContent.startsWith(p))
    content = rawContent
    if (prefix !== undefined) {
      const parsed = parseJsonText(rawContent.slice(prefix.length))
      if (parsed.ok && isContentParts(parsed.value)) content = parsed.value
      else if (parsed.ok && typeof parsed.value === 'string') content = parsed.value
      else warn('invalid_json', 'JSON-prefixed content that is not a list of parts was kept as the raw text')
    }
  } else {
    warn('coerced_value', 'non-text content was converted to text')
    content = rawContent instanceof Uint8Array ? Buffer.from(rawContent).toString('utf8') : String(rawContent)
  }
  payload['content'] = content

  // tool calls
  const rawCalls = col('tool_calls')
  if (rawCalls !== null && rawCalls !== undefined) {
    const parsed = typeof rawCalls === 'string' ? parseJsonText(rawCalls) : { ok: false as const }
    if (parsed.ok && isToolCallList(parsed.value)) payload['tool_calls'] = parsed.value
    else {
      warn('invalid_tool_calls', 'tool_calls that are not a JSON list of calls with ids were kept as text in hermes.tool_calls')
      extra['tool_calls'] = toJson(rawCalls)
    }
  }
  const callId = col('tool_call_id')
  if (typeof callId === 'string' && callId !== '') payload['tool_call_id'] = callId
  else if (callId !== null && callId !== undefined && callId !== '') payload['tool_call_id'] = String(toJson(callId))
  if (role === 'tool' && payload['tool_call_id'] === undefined) {
    warn(
      'missing_tool_call_id',
      'tool rows without tool_call_id were given tool_call_id "hermes:missing:<rowId>" (they show as orphan results)',
    )
    payload['tool_call_id'] = `hermes:missing:${row.rowId}`
    if (callId !== undefined) extra['tool_call_id'] = toJson(callId)
  }
  const toolName = col('tool_name')
  if (toolName !== null && toolName !== undefined) {
    if (typeof toolName === 'string') payload['name'] = toolName
    else extra['tool_name'] = toJson(toolName)
  }

  for (const name of COPIED_FIELDS) {
    const value = col(name)
    if (value === null || value === undefined) continue
    if (JSON_COLUMNS.has(name) && typeof value === 'string') {
      const parsed = parseJsonText(value)
      payload[name] = parsed.ok ? parsed.value : value
    } else payload[name] = toJson(value)
  }

  for (const [name, value] of Object.entries(row.columns)) {
    if (STRUCTURAL.has(name) || MESSAGE_FIELDS.has(name) || value === null || value === undefined) continue
    if (FLAGS.has(name) && (value === 0 || value === '0')) continue
    if (JSON_COLUMNS.has(name) && typeof value === 'string') {
      const parsed = parseJsonText(value)
      extra[name] = parsed.ok ? parsed.value : value
    } else extra[name] = toJson(value)
  }
  if (Object.keys(extra).length > 0) payload['hermes'] = extra

  // state
  const hasActive = 'active' in row.columns
  const active = !hasActive || row.columns['active'] === null || Number(row.columns['active']) !== 0
  const compacted = Number(row.columns['compacted'] ?? 0) !== 0
  const state: HermesRowState = active ? 'active' : compacted ? 'compacted' : 'rewound'
  const summary =
    (typeof content === 'string' && content.trimStart().startsWith(HERMES_COMPACTION_PREFIX)) ||
    (row.columns['_compressed_summary'] !== undefined && Number(row.columns['_compressed_summary']) === 1)

  // timestamp
  const epochSeconds = epochSecondsOf(col('timestamp'))
  const readable = epochSeconds === null ? null : epochToIso(epochSeconds)
  let createdAt = readable
  if (createdAt === null) {
    if ('timestamp' in row.columns) warn('bad_timestamp', "rows with a NULL or unreadable timestamp got the previous row's time")
    createdAt = epochToIso(context.fallbackEpochSeconds) ?? '1970-01-01T00:00:00.000000Z'
  }

  // the id is UUIDv5 of the external id; the external id is kept on the message when the store can index it
  const externalId = hermesExternalId(hermesSessionId, row.rowId)
  let message: Message
  try {
    message = createMessage(
      payload as ChatMessage,
      SAFE_TEXT.test(externalId) ? { externalId, scope: null, createdAt } : { id: messageIdFromExternal(externalId), createdAt },
    )
  } catch (error) {
    warn(
      'unsupported_row',
      `rows that do not form a valid message were skipped (first: ${error instanceof Error ? error.message : String(error)})`,
    )
    return null
  }
  const p = message.payload as ChatMessage
  const identity = sha256Hex(
    canonicalJson({
      role: p.role,
      content: p.content ?? null,
      tool_calls: p.tool_calls ?? null,
      tool_call_id: p.tool_call_id ?? null,
      name: p.name ?? null,
    }),
  )
  return {
    rowId: row.rowId,
    state,
    summary,
    message,
    hash: contentHash(message),
    identity,
    epochSeconds: readable === null ? null : epochSeconds,
  }
}
