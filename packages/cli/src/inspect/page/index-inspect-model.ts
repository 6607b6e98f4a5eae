/* exported indexInspectModel */
/** What points at what in the model: the lookups the page's sections share. */
interface InspectModelIndex {
  readonly messages: readonly InspectMessageItem[]
  readonly eventBySeq: ReadonlyMap<number, InspectEventItem>
  readonly liveSet: ReadonlySet<string>
  /** The tool-call pairing problem of a message, by message id. */
  readonly pairingNote: ReadonlyMap<string, { kind: string; text: string }>
  /** `messageId NUL toolCallId` of every unanswered call. */
  readonly unansweredCalls: ReadonlySet<string>
  readonly findingsById: ReadonlyMap<string, InspectFinding[]>
  readonly findingsBySeq: ReadonlyMap<number, InspectFinding[]>
  /** How the timeline names the event at `seq` (`rewind #7`, `compaction #9`, …). */
  seqLabel(seq: number): string
}

/** Indexes `model` for the page. */
function indexInspectModel(model: InspectModel): InspectModelIndex {
  const items = model.items
  const messages = items.filter((i): i is InspectMessageItem => i.kind === 'message')
  const eventBySeq = new Map<number, InspectEventItem>()
  for (const i of items) if (i.kind === 'event') eventBySeq.set(i.seq, i)
  const liveSet = new Set(model.live)
  const pairingNote = new Map<string, { kind: string; text: string }>()
  for (const u of model.pairing.unanswered)
    pairingNote.set(u.messageId, { kind: 'unanswered', text: `unanswered tool call ${u.toolCallId}: no result follows it` })
  for (const o of model.pairing.orphans)
    pairingNote.set(o.messageId, { kind: 'orphan', text: `orphan tool result: no call ${o.toolCallId} before it` })
  for (const d of model.pairing.duplicates) {
    for (const id of d.messageIds)
      pairingNote.set(id, { kind: 'duplicate', text: `one of ${d.messageIds.length} results for tool call ${d.toolCallId}` })
  }
  const unansweredCalls = new Set(model.pairing.unanswered.map((u) => `${u.messageId}\u0000${u.toolCallId}`))
  const findingsById = new Map<string, InspectFinding[]>()
  const findingsBySeq = new Map<number, InspectFinding[]>()
  for (const f of model.findings) {
    for (const id of f.messageIds) findingsById.set(id, [...(findingsById.get(id) ?? []), f])
    for (const s of f.seqs) findingsBySeq.set(s, [...(findingsBySeq.get(s) ?? []), f])
  }
  const seqLabel = (s: number): string => {
    const e = eventBySeq.get(s)
    if (e === undefined) return `#${s}`
    return `${e.type === 'messages_retracted' ? 'rewind' : e.type === 'messages_compacted' ? 'compaction' : e.type === 'message_finalized' ? 'finalize' : e.type.replace(/_/g, ' ')} #${s}`
  }
  return { messages, eventBySeq, liveSet, pairingNote, unansweredCalls, findingsById, findingsBySeq, seqLabel }
}
