import { TurnlogError, newEventId, type Message, type SessionId } from '@turnlog/core'
import { sql } from 'kysely'
import { inBatchConflictError, type BatchMismatch } from './check-batch.js'
import type { StoreContext } from './store-context.js'

/** One conflicting message, as `append_messages` lists them in a `TLM01` error's detail. */
interface ConflictDetail {
  messageId: string
  reason: string
  storedHash: string | null
  incomingHash: string
  otherSessionId: string | null
}

/**
 * Classifies a refused batch (`error`: the `TLM01` of `append_messages`, its detail a JSON list of the
 * conflicting messages), records its conflict evidence outside any caller's transaction (best effort)
 * and returns the `MESSAGE_CONFLICT` error naming the first conflict.
 */
export async function recordConflict(
  ctx: StoreContext,
  id: SessionId,
  batch: readonly Message[],
  hashes: readonly string[],
  error: unknown,
): Promise<TurnlogError> {
  const detail = (error as { detail?: unknown }).detail
  let conflicts: ConflictDetail[] = []
  try {
    conflicts = JSON.parse(String(detail)) as typeof conflicts
  } catch {
    // keep the empty list; the cause has the raw detail
  }
  const first = conflicts[0]
  // one row per conflicting message, all in one statement: an attempt's evidence is complete or absent,
  // and its rows share detected_at
  const rows = conflicts.flatMap((c) => {
    const i = batch.findIndex((m) => m.id === c.messageId)
    const message = batch[i]
    if (!message) return []
    return [
      sql`(${id}::uuid, ${newEventId()}::uuid, ${c.messageId}::uuid, ${c.reason}, decode(${c.storedHash ?? ''}, 'hex'),
                 decode(${hashes[i] ?? ''}, 'hex'), ${c.otherSessionId}::uuid, ${JSON.stringify(message.payload)}::json)`,
    ]
  })
  // evidence is best effort; the conflict itself is still reported to the caller
  await ctx.aside(async (root) => {
    if (rows.length === 0) return
    await sql`
      insert into turnlog.conflicts (session_id, conflict_id, message_id, reason, stored_hash, incoming_hash, other_session_id, incoming_payload)
      values ${sql.join(rows)}`.execute(root)
  })
  const what =
    first?.reason === 'foreign_session'
      ? `message ${first.messageId} belongs to session ${first.otherSessionId ?? '?'}`
      : `message ${first?.messageId ?? '?'} is stored with different content (stored ${first?.storedHash?.slice(0, 12) ?? '?'}…, incoming ${first?.incomingHash.slice(0, 12) ?? '?'}…)`
  return new TurnlogError('MESSAGE_CONFLICT', `${what}; nothing of the batch was written`, {
    details: {
      sessionId: id,
      messageId: first?.messageId ?? null,
      reason: first?.reason ?? null,
      storedHash: first?.storedHash ?? null,
      incomingHash: first?.incomingHash ?? null,
      otherSessionId: first?.otherSessionId ?? null,
      conflicts,
    },
    cause: error,
  })
}

/**
 * Two different contents under one id in one call: `MESSAGE_CONFLICT` (reason `content_mismatch`,
 * `storedHash` the first copy's hash), recorded as conflict evidence like any other, nothing written.
 */
export async function recordInBatchConflict(ctx: StoreContext, id: SessionId, mismatch: BatchMismatch): Promise<TurnlogError> {
  const conflict = {
    messageId: mismatch.other.id,
    reason: 'content_mismatch',
    storedHash: mismatch.firstHash,
    incomingHash: mismatch.otherHash,
    otherSessionId: null,
  }
  const error = inBatchConflictError(id, mismatch, [conflict])
  // the evidence goes the way of every conflict's (outside a caller's transaction, best effort)
  await recordConflict(
    ctx,
    id,
    [mismatch.other],
    [mismatch.otherHash],
    Object.assign(new Error(error.message), { detail: JSON.stringify([conflict]) }),
  )
  return error
}
