import {
  TurnlogError,
  applyCompact,
  toMessage,
  newEventId,
  type CompactInput,
  type CompactResult,
  type JsonValue,
  type Message,
  type MessageId,
  type PairingInput,
  type SessionId,
} from '@turnlog/core'
import {
  checkCompactionPairing,
  withApplyTo,
  messageEnvelope,
  toFrozenJsonField,
  parseMessageIdArgument,
  parseSessionIdArgument,
} from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { BatchBudget, envelopeText, jsonTextWithin } from '../batch-limits.js'
import { checkCallOptions, checkExpectedVersion, optionKeys } from '../check-arguments.js'
import { retryableLostRace } from '../retryable-lost-race.js'
import { checkSafeJson, checkSafeText } from '../safe-text.js'
import { recordCompaction } from './compaction-replayed.js'
import { checkBatch, inBatchConflictError } from './check-batch.js'
import { checkVersion } from './check-version.js'
import { loadLiveRows } from '../load-live-rows.js'
import { liveRows } from './live-rows.js'
import { payloadText } from './payload-text.js'
import type { NewEvent, StoreContext } from './store-context.js'

/** A compaction, checked and encoded. */
interface PreparedCompaction {
  readonly id: SessionId
  readonly expected: number | undefined
  readonly covered: readonly MessageId[]
  readonly summary: readonly Message[]
  readonly summaryHashes: readonly string[]
  readonly summaryPayloads: readonly string[]
  readonly reason: string | undefined
  readonly metadata: JsonValue | undefined
  /** Whether a compaction that splits a tool-call pair is recorded (`allowSplitToolPairs`) instead of refused. */
  readonly allowSplit: boolean
}

/** The id of a summary entry already checked by `checkBatch` (so `toMessage` accepts it); undefined if it cannot be read again. */
function messageIdOf(value: unknown): MessageId | undefined {
  try {
    return toMessage(value).id
  } catch {
    return undefined
  }
}

/** The fields of `compact`'s input (any other key is refused: a misspelt `expectedVersion` would be a lost update). */
const COMPACT_INPUT = optionKeys<CompactInput>({
  covered: true,
  summary: true,
  reason: true,
  metadata: true,
  expectedVersion: true,
  allowSplitToolPairs: true,
})

/** `compact`: covered messages out of the live list, a summary in the first one's place. */
export class CompactOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.compact`. */
  async compact<S extends Message<unknown> = Message<unknown>>(sessionId: string, input: CompactInput<S>): Promise<CompactResult<S>> {
    this.#ctx.assertOpen()
    const id = parseSessionIdArgument(sessionId, 'sessionId')
    if (typeof input !== 'object' || input === null)
      throw new TurnlogError('INVALID_INPUT', 'compact needs { covered, summary }', { details: { field: 'input' } })
    input = checkCallOptions(input, 'compact input', COMPACT_INPUT, 'input')
    const expected = checkExpectedVersion(input, 'input')
    if (input.allowSplitToolPairs !== undefined && typeof input.allowSplitToolPairs !== 'boolean') {
      throw new TurnlogError('INVALID_INPUT', 'allowSplitToolPairs must be a boolean', { details: { field: 'allowSplitToolPairs' } })
    }
    if (!Array.isArray(input.covered) || input.covered.length === 0) {
      throw new TurnlogError('INVALID_INPUT', 'covered must be a non-empty array of message ids', { details: { field: 'covered' } })
    }
    const covered = input.covered.map((c, i) => parseMessageIdArgument(c, `covered[${i}]`))
    if (new Set(covered).size !== covered.length) {
      const twice = covered.findIndex((c, i) => covered.indexOf(c) !== i)
      throw new TurnlogError('INVALID_INPUT', `covered names a message twice (covered[${twice}])`, {
        details: { field: `covered[${twice}]` },
      })
    }
    // two contents under one id are MESSAGE_CONFLICT (no evidence: nothing of a compaction is an append)
    // a summary given as one message (not an array) is named `summary` in errors, not `summary[0]`
    const batch = Array.isArray(input.summary)
      ? checkBatch(input.summary as Message[], 'summary', false)
      : checkBatch([input.summary as Message], 'summary', false, () => 'summary')
    if (batch.mismatch) throw inBatchConflictError(null, batch.mismatch, null)
    const summary = batch.unique
    if (summary.length === 0)
      throw new TurnlogError('INVALID_INPUT', 'summary must hold at least one message', { details: { field: 'summary' } })
    for (const s of summary) {
      if (covered.includes(s.id)) {
        // named where the caller put it: `summary[2]` in an array (its first copy), `summary` given alone
        const field = Array.isArray(input.summary)
          ? `summary[${(input.summary as readonly unknown[]).findIndex((m) => messageIdOf(m) === s.id)}]`
          : 'summary'
        throw new TurnlogError('INVALID_INPUT', `summary message ${s.id} is also covered`, { details: { field, messageId: s.id } })
      }
    }
    if (input.reason !== undefined) checkSafeText(input.reason, 'reason')
    const metadata = input.metadata === undefined ? undefined : checkSafeJson(toFrozenJsonField(input.metadata, 'metadata'), 'metadata')
    if (metadata !== undefined) jsonTextWithin(metadata, this.#ctx.maxBatchBytes, 'metadata')
    const summaryBudget = new BatchBudget(this.#ctx.maxBatchBytes, summary.length)
    const summaryPayloads = summary.map((m) =>
      summaryBudget.add(payloadText(m, this.#ctx.maxMessageBytes), m.id, envelopeText(m).length + 16),
    )
    const summaryHashes = batch.hashes
    const prepared: PreparedCompaction = {
      id,
      expected,
      covered,
      summary,
      summaryHashes,
      summaryPayloads,
      reason: input.reason,
      metadata,
      allowSplit: input.allowSplitToolPairs === true,
    }
    // the summary's claim on its ids (turnlog.message_ids) is the cross-session check: a compaction that
    // lost the race for one runs again and then finds it stored (a replay of itself, or a conflict)
    const result = await this.#ctx.retry(5, retryableLostRace(), async () =>
      this.#ctx.observed(id, await this.#ctx.tx((db) => this.#compactOnce(db, prepared))),
    )
    // the checked summary is the caller's messages (deduplicated): still of its type S
    const summaryOfS = summary as unknown as readonly S[]
    return withApplyTo<Omit<CompactResult<S>, 'applyTo'>, S>(result, (live) => applyCompact(live, { covered, summary: summaryOfS }))
  }

  /** One attempt of {@link compact} in transaction `db`; the order of its checks is the contract's (docs/guarantees.md). */
  async #compactOnce(db: Kysely<unknown>, p: PreparedCompaction): Promise<Omit<CompactResult, 'applyTo'>> {
    const { id, covered, summary, summaryHashes } = p
    const version = await this.#ctx.lock(db, id)
    // a retry of a compaction that already committed is a no-op, whatever the version now
    const existing = await sql<{ session_id: string; content_hash: string; type: string }>`
      select session_id::text, encode(content_hash, 'hex') as content_hash, type from turnlog.events
       where message_id = ${summary[0]?.id ?? null}::uuid and content_hash is not null`.execute(db)
    // any stored version of it may come first (a revision of the summary, say): look for the original content
    const own =
      existing.rows.find((r) => r.session_id === id && r.content_hash === summaryHashes[0]) ??
      existing.rows.find((r) => r.session_id === id)
    if (own && own.content_hash === summaryHashes[0]) {
      const placed = await sql<{ n: string | number }>`
        select count(*) as n from turnlog.events
         where session_id = ${id} and type = 'messages_compacted'
           and (data->'summary'->>0) = ${summary[0]?.id ?? ''}`.execute(db)
      if (Number(placed.rows[0]?.n ?? 0) > 0) return recordCompaction({ version, summary: summary.map((m) => m.id) }, true)
    }
    // then the version, before anything else about the session's state
    checkVersion(p.expected, version)
    const others = await sql<{ message_id: string; session_id: string; content_hash: string }>`
      select distinct message_id::text, session_id::text, encode(content_hash, 'hex') as content_hash from turnlog.events
       where message_id = any (array(select value::uuid from json_array_elements_text(${JSON.stringify(summary.map((m) => m.id))}::json)))
         and content_hash is not null`.execute(db)
    if (others.rows.length > 0) {
      const at = summary.findIndex((m) => others.rows.some((r) => r.message_id === m.id))
      const first = others.rows.filter((r) => r.message_id === summary[at]?.id)
      const mine = first.find((r) => r.session_id === id)
      const foreign = first.find((r) => r.session_id !== id)
      const messageId = first[0]?.message_id ?? null
      // a summary id this session already holds: the stored content's hash beside the summary's, as for
      // any content_mismatch; with equal hashes the message is stored, but not as this compaction's summary
      const incomingHash = summaryHashes[at] ?? null
      const same = mine !== undefined && mine.content_hash === incomingHash
      throw new TurnlogError(
        'MESSAGE_CONFLICT',
        mine
          ? `summary message ${messageId ?? ''} is already stored in this session${same ? ' (the same content, as a message, not as this compaction’s summary)' : ' with other content'}; nothing was written`
          : `summary message ${messageId ?? ''} is already stored in session ${foreign?.session_id ?? '?'}; nothing was written`,
        {
          details: {
            sessionId: id,
            messageId,
            reason: mine ? 'content_mismatch' : 'foreign_session',
            otherSessionId: mine ? null : (foreign?.session_id ?? null),
            ...(mine ? { storedHash: mine.content_hash, incomingHash } : {}),
          },
        },
      )
    }
    // the live list: ids and content hashes, with the payloads when the pairing check needs them (the read `load` makes)
    const hashes = new Map<string, string>()
    let pairing: PairingInput[] | undefined
    if (p.allowSplit) for (const r of await liveRows(db, id)) hashes.set(r.message_id, r.content_hash)
    else {
      const { rows } = await loadLiveRows(db, id)
      pairing = rows.map((r) => {
        hashes.set(r.message_id, r.content_hash)
        return r.data.format === undefined
          ? { id: r.message_id as MessageId, payload: r.payload }
          : { id: r.message_id as MessageId, payload: r.payload, format: r.data.format }
      })
    }
    const missing = covered.filter((c) => !hashes.has(c))
    if (missing.length > 0) {
      throw new TurnlogError(
        'UNKNOWN_MESSAGE',
        `compaction covers ${missing.length} message(s) that are not live: ${missing.slice(0, 3).join(', ')}`,
        {
          details: { sessionId: id, missing },
        },
      )
    }
    // a call and its result(s) leave together or not at all (core's rule; faults already there never count)
    if (pairing !== undefined) checkCompactionPairing(pairing, { covered, summary }, id)
    const events: NewEvent[] = summary.map((m, i) => ({
      eventId: newEventId(),
      type: 'message_appended',
      messageId: m.id,
      contentHash: summaryHashes[i] ?? null,
      payloadText: p.summaryPayloads[i] ?? null,
      dataText: JSON.stringify(messageEnvelope(m, m.status === 'partial', { deferred: true })),
    }))
    const data: Record<string, unknown> = {
      covered: covered.map((c) => ({ id: c, contentHash: hashes.get(c) ?? '' })),
      summary: summary.map((m) => m.id),
    }
    if (p.reason !== undefined) data['reason'] = p.reason
    if (p.metadata !== undefined) data['metadata'] = p.metadata
    events.push({
      eventId: newEventId(),
      type: 'messages_compacted',
      messageId: null,
      contentHash: null,
      payloadText: null,
      dataText: JSON.stringify(data),
    })
    const next = await this.#ctx.write(db, id, version, events)
    return recordCompaction({ version: next, summary: summary.map((m) => m.id) }, false)
  }
}
