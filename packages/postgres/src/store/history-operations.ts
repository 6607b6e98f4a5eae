import {
  DEFAULT_MESSAGE_FORMAT,
  TurnlogError,
  applyRevision,
  applyRewind,
  contentHash,
  newEventId,
  parseChatMessage,
  parseFormatPayload,
  toFrozenJson,
  type ChatMessage,
  restoreMessage,
  type MessageId,
  type ReviseOptions,
  type ReviseResult,
  type RewindOptions,
  type RewindResult,
  type RewindTargetInput,
  type SessionId,
  type WriteOptions,
} from '@turnlog/core'
import { checkKnownKeys, messageEnvelope, withApplyTo, parseMessageIdArgument, parseSessionIdArgument } from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { checkCallOptions, checkExpectedVersion, optionKeys } from '../check-arguments.js'
import { checkSafeText } from '../safe-text.js'
import { checkVersion } from './check-version.js'
import { liveRows, type LiveRow } from './live-rows.js'
import { payloadText } from './payload-text.js'
import type { StoreContext } from './store-context.js'

/** The options each command takes (any other key is refused: a misspelt `expectedVersion` would be a lost update). */
const REWIND_OPTIONS = optionKeys<RewindOptions>({ expectedVersion: true, reason: true })
const REVISE_OPTIONS = optionKeys<ReviseOptions>({ expectedVersion: true, status: true })
const WRITE_OPTIONS = optionKeys<WriteOptions>({ expectedVersion: true })

/** The history commands on one message or the list's tail: `rewind`, `revise`, `finalize`. */
export class HistoryOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.rewind`. */
  async rewind(sessionId: string, target: RewindTargetInput, options: RewindOptions = {}): Promise<RewindResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'rewind options', REWIND_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const expected = checkExpectedVersion(options)
    if (typeof target !== 'object' || target === null)
      throw new TurnlogError('INVALID_INPUT', 'rewind target must be { after } or { from }', { details: { field: 'target' } })
    const hasAfter = 'after' in target
    const hasFrom = 'from' in target
    if (hasAfter === hasFrom)
      throw new TurnlogError('INVALID_INPUT', 'rewind target must have exactly one of after / from', { details: { field: 'target' } })
    checkKnownKeys(target, ['after', 'from'], 'target', 'rewind')
    const targetId = parseMessageIdArgument(
      hasAfter ? (target as { after: string }).after : (target as { from: string }).from,
      hasAfter ? 'target.after' : 'target.from',
    )
    if (options.reason !== undefined) checkSafeText(options.reason, 'options.reason')
    return rewound(
      this.#ctx.observed(
        id,
        await this.#ctx.tx(async (db) => {
          const version = await this.#ctx.lock(db, id)
          checkVersion(expected, version)
          const live = await liveRows(db, id)
          const index = live.findIndex((r) => r.message_id === targetId)
          if (index < 0) {
            throw new TurnlogError('UNKNOWN_MESSAGE', `rewind target ${targetId} is not a live message of session ${id}`, {
              details: { sessionId: id, messageId: targetId },
            })
          }
          const retracted = live.slice(hasAfter ? index + 1 : index).map((r) => r.message_id as MessageId)
          if (retracted.length === 0) return { version, retracted }
          const data: Record<string, unknown> = { ids: retracted, target: hasAfter ? { after: targetId } : { from: targetId } }
          if (options.reason !== undefined) data['reason'] = options.reason
          const next = await this.#ctx.write(db, id, version, [
            {
              eventId: newEventId(),
              type: 'messages_retracted',
              messageId: null,
              contentHash: null,
              payloadText: null,
              dataText: JSON.stringify(data),
            },
          ])
          return { version: next, retracted }
        }),
      ),
    )
  }

  /** See `SessionStore.revise`. */
  async revise(sessionId: string, messageId: string, payload: unknown, options: ReviseOptions = {}): Promise<ReviseResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'revise options', REVISE_OPTIONS)
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const mid = parseMessageIdArgument(messageId, 'messageId')
    const expected = checkExpectedVersion(options)
    if (options.status !== undefined && options.status !== 'partial' && options.status !== 'final') {
      throw new TurnlogError('INVALID_INPUT', `status must be 'partial' or 'final'`, { details: { field: 'options.status' } })
    }
    // the payload is validated with the revised message's format, known once its row is read; a chat
    // payload (the default) is checked here, as before formats existed
    let parsed: unknown
    let chatError: unknown
    try {
      parsed = parseChatMessage(payload)
    } catch (error) {
      chatError = error
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw error
      try {
        parsed = toFrozenJson(payload)
      } catch {
        throw error
      }
    }
    const hash = contentHash({ payload: parsed }) // the payload as it is: one of any format may have a `payload` field
    const text = payloadText({ id: mid, payload: parsed as ChatMessage }, this.#ctx.maxMessageBytes)
    const partial = options.status === 'partial'
    let envelope: LiveRow['data'] = {}
    return revised(
      mid,
      parsed,
      partial,
      () => envelope,
      this.#ctx.observed(
        id,
        await this.#ctx.tx(async (db) => {
          const { version, row, revisions } = await this.#lockLiveMessage(db, id, mid)
          if (row !== undefined) envelope = row.data
          const format = typeof row?.data['format'] === 'string' ? row.data['format'] : DEFAULT_MESSAGE_FORMAT
          if (format === DEFAULT_MESSAGE_FORMAT || row === undefined) {
            if (chatError !== undefined) throw chatError
          } else {
            parseFormatPayload(payload, format)
          }
          // a replay of what is already in effect is a no-op whatever the version; anything else checks the
          // version before the message's state (a stale writer gets VERSION_CONFLICT, not UNKNOWN_MESSAGE)
          if (row !== undefined && row.content_hash === hash && row.partial === partial)
            return { version, revision: revisions - 1, unchanged: true }
          checkVersion(expected, version)
          if (row === undefined) throw unknownLiveMessage(id, mid)
          if (row.content_hash === hash) {
            // same content: only the streaming status changes
            if (partial) {
              throw new TurnlogError('INVALID_INPUT', `message ${mid} is final; a final message cannot become partial again`, {
                details: { sessionId: id, messageId: mid, field: 'options.status' },
              })
            }
            const next = await this.#ctx.write(db, id, version, [
              { eventId: newEventId(), type: 'message_finalized', messageId: mid, contentHash: null, payloadText: null, dataText: '{}' },
            ])
            return { version: next, revision: revisions - 1, unchanged: false }
          }
          const dataText = JSON.stringify(messageEnvelope(row.data, partial, { revision: revisions }))
          const next = await this.#ctx.write(db, id, version, [
            { eventId: newEventId(), type: 'message_revised', messageId: mid, contentHash: hash, payloadText: text, dataText },
          ])
          return { version: next, revision: revisions, unchanged: false }
        }),
      ),
    )
  }

  /** See `SessionStore.finalize`. */
  async finalize(sessionId: string, messageId: string, payload?: unknown, options: WriteOptions = {}): Promise<ReviseResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'finalize options', WRITE_OPTIONS)
    if (payload !== undefined) return this.revise(sessionId, messageId, payload, { ...options, status: 'final' })
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    const mid = parseMessageIdArgument(messageId, 'messageId')
    const expected = checkExpectedVersion(options)
    let current: { payload: unknown; data: LiveRow['data'] } = { payload: null, data: {} }
    const result = this.#ctx.observed(
      id,
      await this.#ctx.tx(async (db) => {
        const { version, row, revisions } = await this.#lockLiveMessage(db, id, mid)
        if (row !== undefined) current = { payload: await payloadAt(db, id, row.event_seq), data: row.data }
        const revision = revisions - 1
        // as revise: a replay (the message is final already) is a no-op, then the version, then the state
        if (row !== undefined && !row.partial) return { version, revision, unchanged: true }
        checkVersion(expected, version)
        if (row === undefined) throw unknownLiveMessage(id, mid)
        const next = await this.#ctx.write(db, id, version, [
          { eventId: newEventId(), type: 'message_finalized', messageId: mid, contentHash: null, payloadText: null, dataText: '{}' },
        ])
        return { version: next, revision, unchanged: false }
      }),
    )
    return revised(mid, current.payload, false, () => current.data, result)
  }

  /**
   * Locks the session and returns its version, the live projection row of `mid` (undefined when it is
   * not live: the caller checks the version first, then throws {@link unknownLiveMessage}) and how many
   * content versions the message has (1 + its revisions).
   */
  async #lockLiveMessage(
    db: Kysely<unknown>,
    id: SessionId,
    mid: MessageId,
  ): Promise<{
    version: number
    row: LiveRow | undefined
    revisions: number
  }> {
    const version = await this.#ctx.lock(db, id)
    const live = await liveRows(db, id)
    const row = live.find((r) => r.message_id === mid)
    if (!row) return { version, row, revisions: 0 }
    const count = await sql<{ n: string | number }>`
      select count(*) as n from turnlog.events
       where session_id = ${id} and message_id = ${mid} and content_hash is not null`.execute(db)
    return { version, row, revisions: Number(count.rows[0]?.n ?? 1) }
  }
}

/** The payload of one event (the current content of a live message), as stored. */
async function payloadAt(db: Kysely<unknown>, id: SessionId, seq: number): Promise<unknown> {
  const { rows } = await sql<{ payload: unknown }>`select payload from turnlog.events where session_id = ${id} and seq = ${seq}`.execute(db)
  return rows[0]?.payload ?? null
}

/** `UNKNOWN_MESSAGE` for a revise or finalize of a message that is not live in the session. */
function unknownLiveMessage(id: SessionId, mid: MessageId): TurnlogError {
  return new TurnlogError('UNKNOWN_MESSAGE', `message ${mid} is not live in session ${id}`, { details: { sessionId: id, messageId: mid } })
}

/** A rewind's result with its `applyTo` (the caller's list cut at the first retracted message). */
function rewound(result: Omit<RewindResult, 'applyTo'>): RewindResult {
  return withApplyTo(result, (live) => applyRewind(live, result))
}

/**
 * A revise/finalize result with the message as it now stands (what `load` returns for it: the stored
 * envelope, `payload`, the status) and its `applyTo`.
 */
function revised(
  mid: MessageId,
  payload: unknown,
  partial: boolean,
  envelope: () => LiveRow['data'],
  result: Omit<ReviseResult, 'applyTo' | 'message'>,
): ReviseResult {
  const data = envelope()
  const message = restoreMessage({
    id: mid,
    payload,
    createdAt: String(data['createdAt']),
    externalId: typeof data['externalId'] === 'string' ? data['externalId'] : undefined,
    externalScope: typeof data['externalScope'] === 'string' ? data['externalScope'] : undefined,
    status: partial ? 'partial' : undefined,
    format: typeof data['format'] === 'string' ? data['format'] : undefined,
    meta: data['meta'],
  })
  const full = { ...result, message }
  return withApplyTo(full, (live) => applyRevision(live, full))
}
