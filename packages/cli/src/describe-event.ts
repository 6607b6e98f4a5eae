import type { StoredEvent } from '@turnlog/core'
import { shortId, visible } from './format-text.js'

const list = (ids: readonly string[]): string =>
  ids.length <= 6 ? ids.map(shortId).join(', ') : `${ids.slice(0, 5).map(shortId).join(', ')} and ${ids.length - 5} more`

/** One line saying what a non-message event did, with shortened ids. */
export function describeEvent(e: StoredEvent): string {
  switch (e.type) {
    case 'message_appended':
      return `appended ${shortId(e.messageId)}`
    case 'message_revised':
      return `revised ${shortId(e.messageId)} (revision ${e.data.revision ?? '?'})`
    case 'message_finalized':
      return `finalized ${shortId(e.messageId)} (streaming reply complete)`
    case 'messages_retracted':
      if (e.data.sync === true)
        return `sync: retracted ${e.data.ids.length} message(s) [${list(e.data.ids)}] missing from the caller's list`
      return `rewind: retracted ${e.data.ids.length} message(s) [${list(e.data.ids)}]${'after' in e.data.target ? ` after ${shortId(e.data.target.after)}` : ` from ${shortId(e.data.target.from)}`}${e.data.reason === undefined ? '' : ` (${visible(e.data.reason)})`}`
    case 'messages_compacted':
      return `${e.data.sync === true ? 'sync compaction' : 'compaction'}: ${e.data.covered.length} message(s) [${list(e.data.covered.map((c) => c.id))}] replaced by summary [${list(e.data.summary)}]${e.data.reason === undefined ? '' : ` (${visible(e.data.reason)})`}`
    case 'session_forked':
      return `forked from session ${e.data.parentSessionId} at ${shortId(e.data.at)} (parent version ${e.data.parentVersion}, ${e.data.inherited} message(s) inherited)`
    case 'message_redacted':
      return `redacted ${shortId(e.messageId)}${e.data.reason === undefined ? '' : ` (${visible(e.data.reason)})`}`
    default:
      return `event ${(e as { type: string }).type}`
  }
}
