import {
  DEFAULT_MESSAGE_FORMAT,
  TurnlogError,
  contentHash,
  createMessage,
  isTurnlogError,
  messageIdFromExternal,
  parseFormatPayload,
  parseSessionId,
  sessionIdFromExternal,
  sha256Hex,
  splitByBatchBytes,
  toMessage,
  type ChatMessage,
  type JsonValue,
  type Message,
  type SessionId,
  type SessionStore,
} from '@turnlog/core'
import { checkKnownKeys, guardInput, optionKeys } from '@turnlog/core/internal'
import { numberedLines } from './numbered-lines.js'
import { checkStore } from './check-store.js'

/** Options for {@link importTranscript}. */
export interface ImportTranscriptOptions {
  /**
   * Append to this session (created when missing). When absent the session id is derived from the
   * tenant and the transcript's content, so importing the same file again finds the same session.
   */
  readonly sessionId?: string
  /** Tenant of the session (when it is created). */
  readonly tenantId?: string
  /** Metadata of the session (when it is created). */
  readonly metadata?: JsonValue
}

/** Every option of {@link importTranscript}: a misspelt `sessionId` would import into a derived session. */
const IMPORT_TRANSCRIPT_OPTIONS = optionKeys<ImportTranscriptOptions>({ sessionId: true, tenantId: true, metadata: true })

/** Result of {@link importTranscript}. */
export interface ImportTranscriptResult {
  readonly sessionId: SessionId
  /** Messages written by this call. */
  readonly appended: number
  /** Messages the session already had with identical content (a re-import): nothing written. */
  readonly duplicates: number
  /** Lines marked `ephemeral` (scaffolding): never persisted. */
  readonly skipped: number
  /** The session's version after the import. */
  readonly version: number
}

interface Entry {
  readonly line: number
  readonly payload: ChatMessage
  readonly hash: string
  /** From an envelope line. */
  readonly envelope: Record<string, unknown> | null
}

function fail(line: number, message: string, cause?: unknown): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, { details: { line }, ...(cause === undefined ? {} : { cause }) })
}

/** The store's `maxBatchBytes` (an optional member of the port), or undefined when it has none. */
function maxBatchBytesOf(store: SessionStore): number | undefined {
  const limit = guardInput('store', () => (store as { readonly maxBatchBytes?: unknown }).maxBatchBytes)
  return typeof limit === 'number' && limit > 0 ? limit : undefined
}

/**
 * The id {@link importTranscript} gives the message at `index` (0-based, counting messages, not blank
 * lines) of a transcript without ids: UUIDv5 of `transcript:<sessionId>:<index>:<contentHash>`.
 * Deterministic, so a re-import appends nothing; two equal messages at different places stay two.
 */
export function transcriptMessageId(sessionId: string, index: number, hash: string): ReturnType<typeof messageIdFromExternal> {
  return messageIdFromExternal(`transcript:${parseSessionId(sessionId)}:${index}:${hash}`)
}

/**
 * Imports a plain JSONL transcript (one OpenAI-format message per line, e.g.
 * `{"role":"user","content":"hi"}`; or a turnlog envelope `{"id","payload","createdAt"?}` as written by
 * `serializeMessage`) as one all-or-nothing write to a new or given session (one transaction on a store
 * with `atomically`, such as Postgres and PGlite; in several appends when the messages are more than the
 * store's `maxBatchBytes`). Lines without an id get
 * a deterministic one ({@link transcriptMessageId}), so importing the same file again is a no-op
 * (`duplicates` counts them). Blank lines are ignored; `ephemeral` envelopes are skipped.
 *
 * Throws `IMPORT_FAILED` naming the line for malformed JSON or an invalid message, and for an input
 * with no line but blank ones (nothing is created: an empty file is a producer's failure, not an empty
 * conversation; a file of only `ephemeral` lines creates its session), `MESSAGE_CONFLICT`
 * when an id is stored with other content (nothing written), `SESSION_EXISTS` for a tenant mismatch,
 * `INVALID_INPUT` for a key that is not an option (`details.field` naming it: `options.sesionId`),
 * before anything is read.
 * @example
 * ```ts
 * const lines = readFileSync('chat.jsonl', 'utf8').split('\n')
 * const { sessionId, appended, duplicates } = await importTranscript(store, lines, { tenantId: 'acme' })
 * ```
 */
export async function importTranscript(
  store: SessionStore,
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportTranscriptOptions = {},
): Promise<ImportTranscriptResult> {
  checkStore(store, ['createSession', 'getSession', 'append'])
  // a default parameter does not replace null; a tenant goes into a template string below
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TurnlogError('INVALID_INPUT', 'importTranscript options must be an object')
  checkKnownKeys(options, IMPORT_TRANSCRIPT_OPTIONS, 'options', 'importTranscript')
  if (options.tenantId !== undefined && typeof options.tenantId !== 'string')
    throw new TurnlogError('INVALID_INPUT', 'tenantId must be a string')
  const entries: Entry[] = []
  let skipped = 0
  let lastLine = 0
  for await (const { line, text } of numberedLines(lines)) {
    lastLine = line
    if (text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (cause) {
      throw fail(line, 'not valid JSON', cause)
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(line, 'each line must be a JSON object')
    const obj = value as Record<string, unknown>
    const envelope = !('role' in obj) && 'payload' in obj ? obj : null
    if (envelope !== null && envelope['ephemeral'] === true) {
      skipped++
      continue
    }
    let payload: ChatMessage
    try {
      // an envelope line keeps its format (absent: openai-chat); a bare payload line is a chat message
      const format = envelope?.['format']
      if (format !== undefined && typeof format !== 'string') throw new TypeError('format must be a string')
      payload = parseFormatPayload(envelope === null ? obj : envelope['payload'], format) as ChatMessage
    } catch (cause) {
      throw fail(line, `invalid message: ${cause instanceof Error ? cause.message : String(cause)}`, cause)
    }
    entries.push({ line, payload, hash: contentHash({ payload }), envelope })
  }

  // nothing at all read (an empty file, a producer that died before writing, stdin closed at once): as
  // importEvents, a refusal, not a success that creates an empty session under an id of no content
  if (entries.length === 0 && skipped === 0) throw fail(Math.max(lastLine, 1), 'empty input: no message line')

  const sessionId =
    options.sessionId !== undefined
      ? parseSessionId(options.sessionId)
      : sessionIdFromExternal(
          `transcript:${options.tenantId ?? ''}:${sha256Hex(entries.map((e) => `${String(e.envelope?.['id'] ?? '')}:${e.hash}`).join('\n'))}`,
        )

  const messages: Message[] = []
  const lineOf = new Map<string, number>()
  entries.forEach((e, index) => {
    let message: Message
    try {
      if (e.envelope !== null && e.envelope['id'] !== undefined) {
        message = toMessage(e.envelope)
      } else {
        const createdAt = e.envelope?.['createdAt']
        const format = e.envelope?.['format']
        const meta = e.envelope?.['meta']
        message = createMessage(e.payload, {
          id: transcriptMessageId(sessionId, index, e.hash),
          ...(typeof createdAt === 'string' ? { createdAt } : {}),
          format: typeof format === 'string' ? format : DEFAULT_MESSAGE_FORMAT,
          ...(meta === undefined ? {} : { meta: meta as never }),
        })
      }
    } catch (cause) {
      throw fail(e.line, `invalid message: ${cause instanceof Error ? cause.message : String(cause)}`, cause)
    }
    const first = lineOf.get(message.id)
    if (first !== undefined) throw fail(e.line, `message id ${message.id} already appears on line ${first}`)
    lineOf.set(message.id, e.line)
    messages.push(message)
  })

  // the store's batch limit, read by shape (any SessionStore, any copy of the store package)
  const limit = maxBatchBytesOf(store)
  const write = async (s: SessionStore): Promise<ImportTranscriptResult> => {
    await s.createSession({
      id: sessionId,
      ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    })
    if (messages.length === 0) {
      const info = await s.getSession(sessionId)
      return { sessionId, appended: 0, duplicates: 0, skipped, version: info.version }
    }
    // a transcript larger than one batch (maxBatchBytes) goes in several appends of the one transaction
    let appended = 0
    let duplicates = 0
    let version = 0
    for (const run of limit === undefined ? [messages] : splitByBatchBytes(messages, limit)) {
      const result = await s.append(sessionId, run)
      appended += result.appended.length
      duplicates += result.duplicates.length
      version = result.version
    }
    return { sessionId, appended, duplicates, skipped, version }
  }
  try {
    // all or nothing: a refused append must not leave the session it created behind (one transaction
    // where the store can run one: `atomically`; another SessionStore gets the calls one by one)
    const atomically = guardInput('store', () => store.atomically)
    if (typeof atomically === 'function') return await atomically.bind(store)(write)
    return await write(store)
  } catch (error) {
    if (isTurnlogError(error, 'MESSAGE_CONFLICT')) {
      const messageId = error.details['messageId']
      const line = typeof messageId === 'string' ? lineOf.get(messageId) : undefined
      throw new TurnlogError('MESSAGE_CONFLICT', line === undefined ? error.message : `line ${line}: ${error.message}`, {
        details: { ...error.details, line: line ?? null },
        cause: error,
      })
    }
    throw error
  }
}
