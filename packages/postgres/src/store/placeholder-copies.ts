import { contentHash } from '@turnlog/core'
import { sql } from 'kysely'
import type { StoreContext } from './store-context.js'

/** One conflict of `turnlog.append_messages`' `TLM01` detail, as far as this check reads it. */
interface ConflictDetail {
  readonly messageId?: unknown
  readonly reason?: unknown
  readonly incomingHash?: unknown
}

/**
 * When every conflict of a refused append (`TLM01`, its `detail`) is a copy of a redacted message as
 * the store shows it (its placeholder, as `load` returns it and a JSON round trip of that keeps it), the
 * content hash stored for each such message, by id; otherwise `null`. A scrubbed event keeps the
 * original's content hash, so the database sees the placeholder as other content: sent again under
 * the stored hash, the copy is the duplicate it is (nothing is written either way). A placeholder
 * copy hashes to the placeholder's own hash; `load`'s own message objects carry the stored hash
 * (primed) and never get here.
 */
export async function placeholderCopies(ctx: StoreContext, sessionId: string, detail: unknown): Promise<Map<string, string> | null> {
  let conflicts: unknown
  try {
    conflicts = JSON.parse(String(detail))
  } catch {
    return null
  }
  if (!Array.isArray(conflicts) || conflicts.length === 0) return null
  const wanted = new Map<string, string>()
  for (const c of conflicts as ConflictDetail[]) {
    if (c.reason !== 'content_mismatch' || typeof c.messageId !== 'string' || typeof c.incomingHash !== 'string') return null
    wanted.set(c.messageId, c.incomingHash)
  }
  const stored = await storedPlaceholderHashes(ctx, sessionId, wanted)
  return stored.size === wanted.size ? stored : null
}

/**
 * Of `wanted` (message id → the content hash of a payload sent under it), the ids whose stored content
 * event is scrubbed and whose stored placeholder hashes to that payload's hash, each with the content
 * hash stored for it: sent under that hash, such a copy is the duplicate it is. The others are left out.
 */
export async function storedPlaceholderHashes(
  ctx: StoreContext,
  sessionId: string,
  wanted: ReadonlyMap<string, string>,
): Promise<Map<string, string>> {
  // the scrubbed content events of those messages (a fork's copy of a placeholder is marked data.redacted)
  const { rows } = await ctx.run((db) =>
    sql<{ message_id: string; content_hash: string; payload: unknown }>`
      select e.message_id::text, encode(e.content_hash, 'hex') as content_hash, e.payload from turnlog.events e
       where e.session_id = ${sessionId}::uuid
         and e.message_id = any (array(select value::uuid from json_array_elements_text(${JSON.stringify([...wanted.keys()])}::json)))
         and e.content_hash is not null and (e.payload_digest is not null or (e.data->>'redacted') is not null)`.execute(db),
  )
  const stored = new Map<string, string>()
  for (const row of rows) {
    if (typeof row.payload !== 'object' || row.payload === null) continue
    if (contentHash({ payload: row.payload }) === wanted.get(row.message_id)) stored.set(row.message_id, row.content_hash)
  }
  return stored
}
