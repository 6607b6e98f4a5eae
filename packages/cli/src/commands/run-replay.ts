import {
  foldSession,
  liveMessages,
  toWire,
  toolPairing,
  transcriptOf,
  TurnlogError,
  type Message,
  type StoredEvent,
  type ToolPairing,
} from '@turnlog/core'
import type { ReplayView } from '../command-choices.js'
import type { CommandContext } from '../command-context.js'
import { describeEvent } from '../describe-event.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { columns, previewPayload, roleOf, shortId } from '../format-text.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog replay`. */
export interface ReplayOptions {
  /** Time travel: the session as of this version. */
  readonly at?: number
  readonly view: ReplayView
  /** Wire view only: repair tool-call pairing in the copy (the log is unchanged). */
  readonly repairPairing?: boolean
}

function pairingText(p: ToolPairing): string {
  if (p.ok) return 'tool-call pairing: ok'
  const parts: string[] = []
  for (const u of p.unanswered) parts.push(`unanswered call ${u.toolCallId} on ${shortId(u.messageId)}`)
  for (const o of p.orphans) parts.push(`orphan result ${shortId(o.messageId)} for ${o.toolCallId}`)
  for (const d of p.duplicates) parts.push(`${d.messageIds.length} results for ${d.toolCallId}`)
  for (const d of p.duplicateCalls) parts.push(`call ${d.toolCallId} made ${d.messageIds.length} times`)
  for (const r of p.reusedCalls) parts.push(`call id ${r.toolCallId} reused for ${r.messageIds.length} calls`)
  return `tool-call pairing: ${parts.join('; ')} (a provider would reject this list; \`--view wire --repair-pairing\` shows the repaired copy)`
}

function messageJson(m: Message): Record<string, unknown> {
  return { ...m }
}

/** `turnlog replay`: the session's live list, full transcript or provider wire view, now or at a past version. */
export async function runReplay(ctx: CommandContext, session: string, options: ReplayOptions): Promise<ExitCode> {
  if (options.repairPairing === true && options.view !== 'wire') {
    throw new TurnlogError('INVALID_INPUT', '--repair-pairing applies to --view wire only')
  }
  const at = options.at === undefined ? {} : { at: options.at }
  if (options.view === 'live' || options.view === 'wire') {
    const { sessionId, loaded } = await ctx.withStore(async (store) => {
      const id = await resolveSessionId(store, session)
      return { sessionId: id, loaded: await store.load(id, at) }
    })
    if (options.view === 'wire') {
      const wire = toWire(loaded.messages, { repairPairing: options.repairPairing === true })
      ctx.print({ sessionId, version: loaded.version, view: 'wire', messages: wire }, () => JSON.stringify(wire, null, 2))
      return EXIT_CODES.ok
    }
    ctx.print(
      { sessionId, version: loaded.version, view: 'live', messages: loaded.messages.map(messageJson), pairing: loaded.pairing },
      () => {
        const rows = loaded.messages.map((m, i) => [
          String(i + 1).padStart(3),
          roleOf(m),
          shortId(m.id),
          m.status === 'partial' ? 'partial' : '',
          previewPayload(m.payload, 72, m.format),
        ])
        return [
          `session ${sessionId} at version ${loaded.version}: ${loaded.messages.length} live message(s)`,
          columns(rows),
          pairingText(loaded.pairing),
        ].join('\n')
      },
    )
    return EXIT_CODES.ok
  }
  const { sessionId, events } = await ctx.withStore(async (store) => {
    const id = await resolveSessionId(store, session)
    if (options.at !== undefined) await store.state(id, at) // validates `at` against the version
    const out: StoredEvent[] = []
    for await (const e of store.events(id, options.at === undefined ? {} : { toSeq: options.at })) out.push(e)
    return { sessionId: id, events: out }
  })
  const state = foldSession(events)
  const entries = transcriptOf(state)
  const other = events.filter((e) => e.type !== 'message_appended' && e.type !== 'message_revised')
  const pairing = toolPairing(liveMessages(state))
  ctx.print(
    {
      sessionId,
      version: state.version,
      view: 'transcript',
      entries: entries.map((e) => ({
        seq: e.seq,
        revision: e.revision,
        status: e.status,
        changedBy: e.changedBy,
        message: messageJson(e.message),
      })),
      events: other,
      pairing,
      anomalies: state.anomalies,
    },
    () => {
      const rows: { seq: number; cells: string[] }[] = entries.map((e) => ({
        seq: e.seq,
        cells: [
          `seq ${String(e.seq).padStart(3)}`,
          roleOf(e.message),
          shortId(e.message.id),
          `rev${e.revision}`,
          e.status,
          previewPayload(e.message.payload, 60, e.message.format),
        ],
      }))
      for (const e of other) rows.push({ seq: e.seq, cells: [`seq ${String(e.seq).padStart(3)}`, '·', '', '', '', describeEvent(e)] })
      rows.sort((a, b) => a.seq - b.seq)
      const lines = [
        `session ${sessionId} at version ${state.version}: ${entries.length} content version(s), ${other.length} other event(s)`,
        columns(rows.map((r) => r.cells)),
        pairingText(pairing),
      ]
      for (const a of state.anomalies) lines.push(`anomaly at seq ${a.seq}: ${a.kind}: ${a.explanation}`)
      return lines.join('\n')
    },
  )
  return EXIT_CODES.ok
}
