import { EXPORT_FORMAT, EXPORT_VERSION, type ExportEventRecord, type ExportSessionRecord } from '@turnlog/audit'
import { exportedChainHash, toJsonLine } from '@turnlog/audit/internal'
import { GENESIS_HASH, newEventId, newMessageId, newSessionId } from '@turnlog/core'
import { createHash } from 'node:crypto'

/** A session exported from the store, the model the scale workload's bulk load copies. */
export interface ScaleTemplate {
  readonly session: ExportSessionRecord
  /** Its events, every one a `message_appended` (the data holds no id the copy would have to change). */
  readonly events: readonly ExportEventRecord[]
  /** The bytes of its payload texts, as the store keeps them. */
  readonly payloadBytes: number
}

/** What {@link scaleExportLines} counts while it writes. */
export interface ScaleLinesCount {
  /** The ids of the sessions written, in order. */
  readonly sessionIds: string[]
  events: number
  payloadBytes: number
}

/** A template event with what every copy shares: the inner digests of its link and the end of its line. */
interface PreparedEvent {
  readonly event: ExportEventRecord
  /** `sha256(data text) ‖ sha256(payload text)`: the part of the link a copy does not change. */
  readonly digests: Buffer
  /** The line's fields a copy keeps (payload, data, recordedAt), as JSON, without the opening brace. */
  readonly tail: string
}

function prepare(templates: readonly ScaleTemplate[]): PreparedEvent[][] {
  const sha = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()
  return templates.map((t) =>
    t.events.map((event) => {
      const { payload, data, recordedAt } = event
      return {
        event,
        digests: Buffer.concat([sha(JSON.stringify(data)), sha(JSON.stringify(payload))]),
        tail: toJsonLine({ payload, data, recordedAt }).slice(1),
      }
    }),
  )
}

/**
 * A turnlog export (header, session and event lines, end line) of sessions `from` to `to − 1`, written
 * one line at a time so that millions of messages never sit in memory: session `i` is a copy of
 * template `i mod templates.length` under new session, message and event ids (UUIDv7 minted as the
 * line is written, as an application mints them, so every index keyed by an id grows at its right
 * edge as it does in production), with its chain links recomputed, so `importEvents` checks and stores every line
 * as it would a real export. The generator must outrun the import, so a copy's link is node's SHA-256
 * over the template's cached data and payload digests (the chain formula, docs/schema.md), checked
 * against core's `exportedChainHash` for the first session of every call; the store recomputes and
 * checks every link it imports anyway. `count` is updated as lines are yielded.
 */
export function* scaleExportLines(
  templates: readonly ScaleTemplate[],
  from: number,
  to: number,
  count: ScaleLinesCount,
): Generator<string> {
  const prepared = prepare(templates)
  yield toJsonLine({ format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: new Date().toISOString() })
  let sessions = 0
  let events = 0
  for (let i = from; i < to; i++) {
    const k = i % templates.length
    const template = templates[k] as ScaleTemplate
    const sessionId = newSessionId()
    yield toJsonLine({ ...template.session, id: sessionId })
    let prev = GENESIS_HASH
    for (const { event: e, digests, tail } of prepared[k] ?? []) {
      const eventId = newEventId()
      const messageId = newMessageId()
      const head = `${sessionId}\n${e.seq}\n${eventId}\n${e.type}\n${messageId}\n${e.contentHash ?? ''}\n`
      const link = createHash('sha256').update(Buffer.from(prev, 'hex')).update(head, 'utf8').update(digests).digest('hex')
      if (i === from) {
        const expected = exportedChainHash(prev, { ...e, sessionId, eventId, messageId })
        if (link !== expected) throw new Error(`scale export: link ${link} of seq ${e.seq} differs from exportedChainHash's ${expected}`)
      }
      prev = link
      yield `{"kind":"event","sessionId":"${sessionId}","seq":${e.seq},"eventId":"${eventId}","type":"${e.type}","messageId":"${messageId}","contentHash":"${e.contentHash ?? ''}","hash":"${link}",${tail}`
    }
    sessions++
    events += template.events.length
    count.sessionIds.push(sessionId)
    count.events += template.events.length
    count.payloadBytes += template.payloadBytes
  }
  yield toJsonLine({ kind: 'end', sessions, events })
}
