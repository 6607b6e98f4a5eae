import { audit, type Finding, type AuditCounts } from '@turnlog/audit'
import {
  foldSession,
  liveMessages,
  parseSessionId,
  readingFormat,
  toolPairing,
  transcriptOf,
  type ChatMessage,
  type ConflictRecord,
  type FoldAnomaly,
  type JsonValue,
  type StoredEvent,
  type ToolPairing,
  type TranscriptStatus,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { shortId } from '../format-text.js'

/** One content version of a message on the timeline. */
export interface InspectMessageItem {
  readonly kind: 'message'
  readonly seq: number
  readonly id: string
  /** The speaker: the chat `role`, or what the message's format's preview names. */
  readonly role: string
  /** The message's format (`openai-chat`, `json`, …). */
  readonly format: string
  /** What the message is, as its format's preview names it (`text`, `tool_calls`, `tool_result`, `reasoning`, …). */
  readonly previewKind: string
  /** The format's one-line preview text of the payload (not truncated). */
  readonly previewText: string
  readonly revision: number
  readonly status: TranscriptStatus | 'pending'
  readonly createdAt: string
  readonly externalId: string | null
  /** The parent session this copy was inherited from (forks). */
  readonly inheritedFrom: string | null
  /** Seqs of the events that changed the message after this version. */
  readonly changedBy: readonly number[]
  /** The seq of the compaction that placed this message as its summary. */
  readonly summaryOf: number | null
  /** True when this version was written while the reply was still streaming. */
  readonly partial: boolean
  /** Tool call ids this message makes (assistant) or answers (tool). */
  readonly toolCalls: readonly string[]
  /** Tool call ids this message opens, as its format reads them. */
  readonly opens: readonly string[]
  /** Tool call ids this message answers, as its format reads them (a message may open and answer: `ai-sdk-ui`). */
  readonly answers: readonly string[]
  readonly payload: ChatMessage
}

/** A non-message event on the timeline (rewind, compaction, finalize, fork, redaction). */
export interface InspectEventItem {
  readonly kind: 'event'
  readonly seq: number
  readonly type: StoredEvent['type']
  readonly recordedAt: string
  /** One line saying what it did. */
  readonly text: string
  /** The messages it names. */
  readonly ids: readonly string[]
  readonly reason: string | null
}

/** A rewind or compaction as a bracket: the messages it took out of the live list. */
export interface InspectSpan {
  readonly seq: number
  readonly type: 'rewind' | 'compaction'
  readonly ids: readonly string[]
  readonly summary: readonly string[]
  readonly reason: string | null
}

/** Everything the HTML timeline shows, as one JSON-serialisable object (embedded in the page). */
export interface InspectModel {
  readonly formatVersion: 1
  readonly generatedAt: string
  readonly session: {
    readonly id: string
    readonly version: number
    readonly tenantId: string | null
    readonly createdAt: string
    readonly updatedAt: string
    readonly metadata: JsonValue | null
  }
  readonly lineage: {
    /** Parent, grandparent, …: where this session was forked from. */
    readonly ancestors: readonly { readonly sessionId: string; readonly version: number; readonly at: string }[]
    /** Sessions forked from this one. */
    readonly children: readonly { readonly sessionId: string; readonly version: number; readonly at: string }[]
    /** False when the store has more sessions than the search for forks covers (`MAX_CHILD_SCAN`). */
    readonly childrenComplete: boolean
  }
  /** Messages (every content version) and events, in log order. */
  readonly items: readonly (InspectMessageItem | InspectEventItem)[]
  readonly spans: readonly InspectSpan[]
  /** The live list's ids, in order. */
  readonly live: readonly string[]
  readonly pairing: ToolPairing
  readonly anomalies: readonly FoldAnomaly[]
  readonly conflicts: readonly ConflictRecord[]
  readonly findings: readonly Finding[]
  readonly auditCounts: AuditCounts | null
}

const MAX_LINEAGE = 50
/** How many sessions the search for forks of a session reads at most (the store has no index by parent). */
const MAX_CHILD_SCAN = 20_000

/** What a non-message event did, for its timeline row (its ids are shown as chips beside it). */
function eventText(e: StoredEvent): string {
  const why = (reason: string | undefined): string => (reason === undefined ? '' : ` (${reason})`)
  switch (e.type) {
    case 'messages_retracted':
      if (e.data.sync === true) return `sync retracted ${e.data.ids.length} message(s) missing from the caller's list`
      return `retracted ${e.data.ids.length} message(s) ${'after' in e.data.target ? `after ${shortId(e.data.target.after)}` : `from ${shortId(e.data.target.from)} on`}${why(e.data.reason)}`
    case 'messages_compacted':
      return `${e.data.sync === true ? 'sync ' : ''}replaced ${e.data.covered.length} message(s) with ${e.data.summary.length === 1 ? 'a summary' : `${e.data.summary.length} summary messages`}${why(e.data.reason)}`
    case 'session_forked':
      return `forked from session ${e.data.parentSessionId} at ${shortId(e.data.at)} (parent version ${e.data.parentVersion}, ${e.data.inherited} message(s) inherited)`
    case 'message_finalized':
      return `${shortId(e.messageId)} marked final: the stream ended`
    case 'message_redacted':
      return `content of ${shortId(e.messageId)} scrubbed${why(e.data.reason)}`
    default:
      return e.type
  }
}

/** Reads a session's log, lineage, conflicts and audit findings into an {@link InspectModel}. */
export async function buildInspectModel(store: PostgresStore, session: string): Promise<InspectModel> {
  const sessionId = parseSessionId(session)
  const info = await store.getSession(sessionId)
  const events: StoredEvent[] = []
  for await (const e of store.events(sessionId)) events.push(e)
  const state = foldSession(events)
  const entries = transcriptOf(state)

  const dataBySeq = new Map<number, StoredEvent>(events.map((e) => [e.seq, e]))
  const summaryOf = new Map<string, number>()
  const spans: InspectSpan[] = []
  const eventItems: InspectEventItem[] = []
  for (const e of events) {
    if (e.type === 'message_appended' || e.type === 'message_revised') continue
    let ids: string[] = []
    let reason: string | null = null
    if (e.type === 'messages_retracted') {
      ids = [...e.data.ids]
      reason = e.data.reason ?? null
      spans.push({ seq: e.seq, type: 'rewind', ids, summary: [], reason })
    } else if (e.type === 'messages_compacted') {
      ids = e.data.covered.map((c) => c.id)
      reason = e.data.reason ?? null
      for (const s of e.data.summary) summaryOf.set(s, e.seq)
      spans.push({ seq: e.seq, type: 'compaction', ids, summary: [...e.data.summary], reason })
    } else if (e.type === 'message_finalized' || e.type === 'message_redacted') {
      ids = [e.messageId]
      if (e.type === 'message_redacted') reason = e.data.reason ?? null
    } else if (e.type === 'session_forked') {
      ids = [e.data.at]
    }
    eventItems.push({ kind: 'event', seq: e.seq, type: e.type, recordedAt: e.recordedAt, text: eventText(e), ids, reason })
  }

  const messageItems: InspectMessageItem[] = entries.map((entry) => {
    const raw = dataBySeq.get(entry.seq)
    const data = raw !== undefined && (raw.type === 'message_appended' || raw.type === 'message_revised') ? raw.data : undefined
    const record = state.messages.get(entry.message.id)
    const payload = entry.message.payload
    const { role, kind, text, calls, answers } = readMessage(entry.message)
    return {
      kind: 'message',
      seq: entry.seq,
      id: entry.message.id,
      role,
      format: entry.message.format,
      previewKind: kind,
      previewText: text,
      revision: entry.revision,
      status: record?.state === 'pending' ? 'pending' : entry.status,
      createdAt: entry.message.createdAt,
      externalId: entry.message.externalId ?? null,
      inheritedFrom: data?.inheritedFrom ?? null,
      changedBy: entry.changedBy,
      summaryOf: summaryOf.get(entry.message.id) ?? null,
      partial: entry.message.status === 'partial',
      toolCalls: answers.length > 0 ? answers : calls,
      opens: calls,
      answers,
      payload,
    }
  })
  const items = [...messageItems, ...eventItems].sort((a, b) => a.seq - b.seq)

  const ancestors: { sessionId: string; version: number; at: string }[] = []
  let parent = info.parent
  while (parent !== null && ancestors.length < MAX_LINEAGE) {
    ancestors.push({ sessionId: parent.sessionId, version: parent.version, at: parent.at })
    try {
      parent = (await store.getSession(parent.sessionId)).parent
    } catch {
      break // the parent may be gone (deleted tenant data); show what is known
    }
  }
  const children: { sessionId: string; version: number; at: string }[] = []
  let after: string | undefined
  let scanned = 0
  let childrenComplete = true
  for (;;) {
    const page = await store.sessions({
      limit: 1000,
      ...(after === undefined ? {} : { after }),
      ...(info.tenantId === null ? {} : { tenantId: info.tenantId }),
    })
    scanned += page.sessions.length
    for (const s of page.sessions) {
      if (s.parent?.sessionId === sessionId) children.push({ sessionId: s.sessionId, version: s.parent.version, at: s.parent.at })
    }
    if (page.next === null) break
    if (scanned >= MAX_CHILD_SCAN) {
      childrenComplete = false
      break
    }
    after = page.next
  }

  const report = await audit(store, sessionId)
  return {
    formatVersion: 1,
    generatedAt: new Date().toISOString(),
    session: {
      id: sessionId,
      version: state.version,
      tenantId: info.tenantId,
      createdAt: info.createdAt,
      updatedAt: info.updatedAt,
      metadata: info.metadata,
    },
    lineage: { ancestors, children, childrenComplete },
    items,
    spans,
    live: [...state.live],
    pairing: toolPairing(liveMessages(state)),
    anomalies: state.anomalies,
    conflicts: await store.conflicts(sessionId),
    findings: report.findings,
    auditCounts: report.counts,
  }
}

/** What the inspect page shows of a message, read by its format: speaker, kind, preview text, calls it opens, calls it answers. */
function readMessage(message: { readonly payload: unknown; readonly format: string }): {
  role: string
  kind: string
  text: string
  calls: string[]
  answers: string[]
} {
  try {
    const format = readingFormat(message.format)
    const preview = format.preview(message.payload)
    return {
      role: preview.role,
      kind: preview.kind,
      text: preview.text,
      calls: [...format.toolCalls(message.payload)],
      answers: [...format.toolResults(message.payload)],
    }
  } catch {
    // an application's own format that throws: shown without its pairing
    return { role: '?', kind: '?', text: '', calls: [], answers: [] }
  }
}
