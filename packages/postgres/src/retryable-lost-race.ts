import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { lostMessageIdRace } from './map-database-error.js'

/** The first UUID of a refused claim's detail (`Key (message_id, tenant_scope)=(<id>, <scope>) …`): its message id. */
const FIRST_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/

/**
 * A `retryable` for `StoreContext.retry` (and the import's own loop), one per call: true for a race
 * for a message id lost to another writer ({@link lostMessageIdRace}, the driver error or the cause of
 * its `DB_TRANSIENT`), which the next attempt classifies correctly (the winner has committed). The same
 * id refused twice is no race: `turnlog.message_ids` holds a claim no visible event backs (a retention
 * delete that kept the row, operations.md "Retention"), and every attempt would fail the same way, so it
 * throws `CORRUPT_LOG` naming the id (`details.messageId`, the driver error as `cause`).
 * @example
 * ```ts
 * const rows = await ctx.retry(5, retryableLostRace(), () => ctx.statement(APPEND_MESSAGES, values))
 * ```
 */
export function retryableLostRace(): (error: unknown) => boolean {
  const refused = new Set<string>()
  return (error) => {
    const raw = isTurnlogError(error, 'DB_TRANSIENT') ? error.cause : error
    if (!lostMessageIdRace(raw)) return false
    // the detail names the refused key; its words follow the server's lc_messages, the key's values do
    // not: the whole detail tells one key from another, its first UUID is the message id
    const detail = (raw as { detail?: unknown }).detail
    const messageId = typeof detail === 'string' ? FIRST_UUID.exec(detail)?.[0] : undefined
    if (typeof detail !== 'string' || messageId === undefined) return true
    if (!refused.has(detail)) {
      refused.add(detail)
      return true
    }
    throw new TurnlogError(
      'CORRUPT_LOG',
      `message id ${messageId} is claimed in turnlog.message_ids by a session that holds no event of it (a row left behind by a retention delete? operations.md, "Retention"): no retry can store it`,
      { details: { messageId, constraint: 'message_ids_pkey', sqlState: '23505' }, cause: raw },
    )
  }
}
