import type { StoredEvent } from '@turnlog/core'
import { describeEvent } from './describe-event.js'
import { previewPayload, roleOf, shortId } from './format-text.js'

/** The longest event type name (`messages_compacted`): the type column's width. */
const TYPE_WIDTH = 18

/**
 * One line of `turnlog tail`'s text output for an event: the session's short id, the seq, the type,
 * then for a message's content (appended, revised) its short id, role, revision or streaming mark and
 * a content preview, and for any other event what it did (`describeEvent`). Control characters in the
 * payload are made visible, so a line never drives the terminal.
 */
export function formatTailLine(event: StoredEvent): string {
  const head = `${shortId(event.sessionId)}  seq ${String(event.seq).padStart(4)}  ${event.type.padEnd(TYPE_WIDTH)}`
  if (event.type === 'message_appended' || event.type === 'message_revised') {
    const marks: string[] = []
    if (event.type === 'message_revised') marks.push(`rev${event.data.revision ?? '?'}`)
    if (event.data.status === 'partial') marks.push('partial')
    if (event.data.deferred === true) marks.push('summary')
    if (event.data.inheritedFrom !== undefined) marks.push(`inherited from ${shortId(event.data.inheritedFrom)}`)
    const preview = previewPayload(event.payload, 60, event.data.format)
    return [
      head,
      shortId(event.messageId),
      roleOf({ payload: event.payload, format: event.data.format }).padEnd(9),
      ...(marks.length === 0 ? [] : [`(${marks.join(', ')})`]),
      preview,
    ]
      .filter((part) => part !== '')
      .join('  ')
  }
  return `${head}  ${describeEvent(event)}`
}
