import type { MessageId } from './ids.js'
import { compactList } from './apply-to-live.js'
import { readingFormat } from './formats/format-registry.js'
import { guardInput } from './parse-input.js'
import { toolPairing, type PairingInput, type ToolPairing } from './tool-pairing.js'
import { TurnlogError } from './turnlog-error.js'

/**
 * One tool call id whose pairing a compaction would break: messages of the list after the compaction
 * that are in a pairing fault for this id (an unanswered call, an orphan result, a duplicate result or
 * call, as {@link toolPairing} reports them) and were in none for it before.
 */
export interface CompactionPairingSplit {
  readonly toolCallId: string
  /**
   * The messages left in the fault, in the order of the list after the compaction: live messages the
   * compaction does not cover (a call whose result it covers, a result whose call it covers), or a
   * summary message that opens or answers the id.
   */
  readonly messageIds: readonly MessageId[]
  /** The covered messages that open or answer this id (the partners taken away), in live order. */
  readonly coveredMessageIds: readonly MessageId[]
}

/** What a compaction names: the ids it covers and its summary message(s). */
export interface CompactionPairingInput {
  readonly covered: readonly string[]
  readonly summary: readonly PairingInput[]
}

/**
 * The rule `compact` refuses by (docs/guarantees.md, "History"): the tool-call pairs a compaction of
 * `live` (the session's live list, in order) would split. The list after it is built by the store's
 * placement rule (`applyCompact`: covered messages out, the summary where the first covered one was);
 * a message is split when, for some call id, it is in a pairing fault after the compaction (unanswered,
 * orphan, duplicate result, duplicate call: {@link toolPairing}) and was in none for that id before.
 * So faults the list already had (an orphan, an unanswered call) never make a compaction impossible,
 * a compaction that covers a call with all its results (or neither) splits nothing, and a summary that
 * carries a covered call again with its result still live (a runtime's compaction that keeps the
 * call's content under a new id) splits nothing either. Reused call ids are not a fault here (the wire
 * view renames them). Empty when nothing is split; one entry per call id, in the order of the list
 * after the compaction. Pure; reads each message by its format, as `toolPairing` does.
 */
export function compactionPairingSplits(live: readonly PairingInput[], input: CompactionPairingInput): CompactionPairingSplit[] {
  return guardInput('compaction', () => splits(live, input))
}

/**
 * Throws `INVALID_INPUT` (`details.reason: 'splits_tool_pair'`) when {@link compactionPairingSplits}
 * finds a split: `details` name the first split's `toolCallId`, the messages it leaves in a fault
 * (`messageIds`) and the covered partners (`coveredMessageIds`), and list every split in `splits`.
 * `sessionId` goes into `details` when given.
 */
export function checkCompactionPairing(live: readonly PairingInput[], input: CompactionPairingInput, sessionId?: string): void {
  const found = compactionPairingSplits(live, input)
  const first = found[0]
  if (first === undefined) return
  const side =
    first.coveredMessageIds.length === 0
      ? 'the summary opens or answers it without its partner'
      : `it covers ${ids(first.coveredMessageIds)} and leaves ${ids(first.messageIds)} live without ${first.messageIds.length === 1 ? 'its' : 'their'} partner`
  throw new TurnlogError(
    'INVALID_INPUT',
    `compaction would split tool call ${JSON.stringify(first.toolCallId)}: ${side}` +
      `${found.length > 1 ? ` (and ${found.length - 1} more call id(s))` : ''}; cover the call with its results, or neither (nothing was written)`,
    {
      details: {
        ...(sessionId === undefined ? {} : { sessionId }),
        field: 'covered',
        reason: 'splits_tool_pair',
        toolCallId: first.toolCallId,
        messageIds: first.messageIds,
        coveredMessageIds: first.coveredMessageIds,
        splits: found,
      },
    },
  )
}

function ids(list: readonly string[]): string {
  return list.length > 3 ? `${list.slice(0, 3).join(', ')}, …` : list.join(', ')
}

function splits(live: readonly PairingInput[], input: CompactionPairingInput): CompactionPairingSplit[] {
  const covered = new Set(input.covered)
  const after = compactList(live, { covered: input.covered, summary: input.summary })
  const before = faults(toolPairing(live.filter(pairable)))
  const now = faults(toolPairing(after.filter(pairable)))
  // per call id, the messages in a fault now that were in none for it before, in list order
  const fresh = new Map<string, Set<MessageId>>()
  for (const [toolCallId, messages] of now) {
    const old = before.get(toolCallId)
    for (const m of messages) {
      if (old?.has(m) === true) continue
      const set = fresh.get(toolCallId)
      if (set) set.add(m)
      else fresh.set(toolCallId, new Set([m]))
    }
  }
  if (fresh.size === 0) return []
  const position = new Map(after.map((m, i) => [m.id, i]))
  const at = (m: MessageId): number => position.get(m) ?? Infinity
  const taken = partners(live, covered, fresh)
  const out = [...fresh].map(([toolCallId, messages]) => ({
    toolCallId,
    messageIds: [...messages].sort((a, b) => at(a) - at(b)),
    coveredMessageIds: taken.get(toolCallId) ?? [],
  }))
  return out.sort((a, b) => at(a.messageIds[0] as MessageId) - at(b.messageIds[0] as MessageId))
}

/** Per call id of `wanted`, the covered messages of `live` that open or answer it, in live order (one pass). */
function partners(
  live: readonly PairingInput[],
  covered: ReadonlySet<string>,
  wanted: ReadonlyMap<string, unknown>,
): Map<string, MessageId[]> {
  const out = new Map<string, MessageId[]>()
  for (const m of live) {
    if (!covered.has(m.id) || !pairable(m)) continue
    const format = readingFormat(m.format)
    for (const id of new Set([...format.toolCalls(m.payload), ...format.toolResults(m.payload)])) {
      if (!wanted.has(id)) continue
      const list = out.get(id)
      if (list === undefined) out.set(id, [m.id])
      else if (list[list.length - 1] !== m.id) list.push(m.id)
    }
  }
  return out
}

/** Whether a message can open or answer a call: a payload object (a registered format may allow other JSON values, which pair with nothing). */
function pairable(m: PairingInput): boolean {
  return typeof m.payload === 'object' && m.payload !== null
}

/** Per call id, every message in a fault for it: unanswered, orphan, duplicate result, duplicate call. */
function faults(pairing: ToolPairing): Map<string, Set<MessageId>> {
  const out = new Map<string, Set<MessageId>>()
  const add = (toolCallId: string, messageId: MessageId): void => {
    const set = out.get(toolCallId)
    if (set) set.add(messageId)
    else out.set(toolCallId, new Set([messageId]))
  }
  for (const u of pairing.unanswered) add(u.toolCallId, u.messageId)
  for (const o of pairing.orphans) add(o.toolCallId, o.messageId)
  for (const d of pairing.duplicates) for (const m of d.messageIds) add(d.toolCallId, m)
  for (const d of pairing.duplicateCalls) for (const m of d.messageIds) add(d.toolCallId, m)
  return out
}
