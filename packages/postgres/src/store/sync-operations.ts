import {
  TurnlogError,
  newEventId,
  parseSessionId,
  type Message,
  type MessageId,
  type SessionId,
  type SyncOptions,
  type SyncResult,
} from '@turnlog/core'
import { messageEnvelope } from '@turnlog/core/internal'
import { sql, type Kysely } from 'kysely'
import { BatchBudget, envelopeText } from '../batch-limits.js'
import { checkCallOptions, checkExpectedVersion } from '../check-arguments.js'
import { customSqlState } from '../custom-sqlstates.js'
import { checkBatch } from './check-batch.js'
import { checkVersion } from './check-version.js'
import { liveRows, type LiveRow } from './live-rows.js'
import { payloadText } from './payload-text.js'
import { recordConflict, recordInBatchConflict } from './record-conflict.js'
import type { NewEvent, StoreContext } from './store-context.js'

/** The append of `sync`'s new messages, inside its transaction (the session row is locked already). */
/** What one `sync` has to write, computed from the locked live rows and the caller's list. */
interface SyncPlan {
  readonly retracted: MessageId[]
  readonly revised: { readonly message: Message; readonly hash: string; readonly row: LiveRow }[]
  readonly finalized: MessageId[]
  readonly appended: { readonly message: Message; readonly hash: string }[]
}

/** `sync`: makes the live list equal to the caller's list in one transaction (see `SessionStore.sync`). */
export class SyncOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.sync`. */
  async sync(sessionId: string, list: readonly Message<unknown>[], options: SyncOptions = {}): Promise<SyncResult> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'sync options')
    const id = parseSessionId(sessionId)
    const batch = checkBatch(list, 'list', true)
    const expected = checkExpectedVersion(options)
    if (batch.mismatch) throw await recordInBatchConflict(this.#ctx, id, batch.mismatch)
    let refused: { error: unknown; batch: Message[]; hashes: string[] } | null = null
    let result: SyncResult
    try {
      result = await this.#ctx.tx(async (db) => {
        const version = await this.#ctx.lock(db, id)
        checkVersion(expected, version)
        const plan = planSync(id, await liveRows(db, id), batch.unique, batch.hashes)
        const events: NewEvent[] = []
        if (plan.retracted.length > 0) {
          const data = { ids: plan.retracted, target: { from: plan.retracted[0] }, sync: true }
          events.push({
            eventId: newEventId(),
            type: 'messages_retracted',
            messageId: null,
            contentHash: null,
            payloadText: null,
            dataText: JSON.stringify(data),
          })
        }
        for (const r of plan.revised) {
          const revisions = await countVersions(db, id, r.message.id)
          const dataText = JSON.stringify(messageEnvelope(r.row.data, r.message.status === 'partial', { revision: revisions }))
          events.push({
            eventId: newEventId(),
            type: 'message_revised',
            messageId: r.message.id,
            contentHash: r.hash,
            payloadText: payloadText(r.message, this.#ctx.maxMessageBytes),
            dataText,
          })
        }
        for (const mid of plan.finalized) {
          events.push({
            eventId: newEventId(),
            type: 'message_finalized',
            messageId: mid,
            contentHash: null,
            payloadText: null,
            dataText: '{}',
          })
        }
        let next = await this.#ctx.write(db, id, version, events)
        if (plan.appended.length > 0) {
          const messages = plan.appended.map((a) => a.message)
          const hashes = plan.appended.map((a) => a.hash)
          const data = messages.map((m) => envelopeText(m))
          const budget = new BatchBudget(this.#ctx.maxBatchBytes, messages.length)
          const payloads = messages.map((m, i) => budget.add(payloadText(m, this.#ctx.maxMessageBytes), m.id, (data[i] as string).length))
          const [ids, hashList, eventIds] = [messages.map((m) => m.id), hashes, messages.map(() => newEventId())].map((v) =>
            JSON.stringify(v),
          )
          let rows: { version: string | number; duplicates: string[] | string }[]
          try {
            ;({ rows } = await sql<{ version: string | number; duplicates: string[] | string }>`
              select version, appended::text[] as appended, duplicates::text[] as duplicates
                from turnlog.append_messages(${id}::uuid, ${next}::bigint, ${ids}::json, ${hashList}::json, ${eventIds}::json,
                                             ${`[${payloads.join(',')}]`}::json, ${`[${data.join(',')}]`}::json)`.execute(db))
          } catch (error) {
            if (customSqlState(error) === 'TLM01') refused = { error, batch: messages, hashes }
            throw error
          }
          const row = rows[0]
          if (!row) throw new TurnlogError('DB_ERROR', 'append returned no row')
          const again = pgArray(row.duplicates)
          if (again.length > 0) {
            throw new TurnlogError(
              'INVALID_INPUT',
              `message ${again[0]} was retracted or compacted from session ${id}; sync cannot bring it back (append it under a new id)`,
              {
                details: { sessionId: id, messageId: again[0], reason: 'not_live' },
              },
            )
          }
          next = Number(row.version)
        }
        return {
          version: next,
          appended: plan.appended.map((a) => a.message.id),
          retracted: plan.retracted,
          revised: plan.revised.map((r) => r.message.id),
          finalized: plan.finalized,
        }
      })
    } catch (error) {
      const r = refused as { error: unknown; batch: Message[]; hashes: string[] } | null
      if (r !== null) throw await recordConflict(this.#ctx, id, r.batch, r.hashes, r.error)
      throw error
    }
    this.#ctx.learn(id, [...writtenPairs(result, batch.unique, batch.hashes)])
    return this.#ctx.observed(id, result)
  }
}

/**
 * Compares the live rows with the caller's list: kept messages must be live rows in their stored
 * order, new ones follow them all. Throws `INVALID_INPUT` (`details.reason: 'reorder'`) otherwise.
 */
function planSync(id: SessionId, live: readonly LiveRow[], list: readonly Message[], hashes: readonly string[]): SyncPlan {
  const at = new Map(live.map((r, i) => [r.message_id, i]))
  const listed = new Set<string>(list.map((m) => m.id))
  const plan: SyncPlan = {
    retracted: live.filter((r) => !listed.has(r.message_id)).map((r) => r.message_id as MessageId),
    revised: [],
    finalized: [],
    appended: [],
  }
  let last = -1
  list.forEach((m, i) => {
    const hash = hashes[i] as string
    const index = at.get(m.id)
    if (index === undefined) {
      plan.appended.push({ message: m, hash })
      return
    }
    if (index < last || plan.appended.length > 0) {
      throw new TurnlogError(
        'INVALID_INPUT',
        `sync cannot reorder session ${id}: message ${m.id} is listed after a message that follows it in the log (the live list keeps log order; new messages go last)`,
        {
          details: { sessionId: id, messageId: m.id, reason: 'reorder' },
        },
      )
    }
    last = index
    const row = live[index] as LiveRow
    // a redacted message keeps its place: its stored content is scrubbed, the caller's copy is not
    if (row.scrubbed) return
    if (row.content_hash !== hash) plan.revised.push({ message: m, hash, row })
    else if (row.partial && m.status !== 'partial') plan.finalized.push(m.id)
  })
  return plan
}

/** How many content versions the message has (1 + its revisions). */
async function countVersions(db: Kysely<unknown>, id: SessionId, mid: string): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from turnlog.events where session_id = ${id} and message_id = ${mid} and content_hash is not null`.execute(db)
  return Number(rows[0]?.n ?? 1)
}

/** The (id, content hash) pairs a committed sync made durable: its appended and revised messages. */
function* writtenPairs(result: SyncResult, list: readonly Message[], hashes: readonly string[]): Iterable<readonly [string, string]> {
  const written = new Set<string>([...result.appended, ...result.revised])
  for (let i = 0; i < list.length; i++) {
    const m = list[i] as Message
    if (written.has(m.id)) yield [m.id, hashes[i] as string]
  }
}

/** node-postgres parses `text[]`; PGlite too, but be tolerant of the literal form. */
function pgArray(value: string[] | string | null | undefined): string[] {
  if (value === null || value === undefined) return []
  if (Array.isArray(value)) return value
  const inner = value.replace(/^\{|\}$/g, '')
  return inner === '' ? [] : inner.split(',')
}
