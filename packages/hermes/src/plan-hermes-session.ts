import { TurnlogError } from '@turnlog/core'
import { checkKnownKeys, guardInput, optionKeys } from '@turnlog/core/internal'
import type { ChatMessage, JsonValue, Message, MessageId } from '@turnlog/core'
import type { HermesRowMessage } from './hermes-row-message.js'
import type { HermesWarningCode } from './hermes-warning.js'

/** One store operation of a hermes session's import, in order. */
export type HermesPlanStep =
  | { readonly kind: 'append'; readonly messages: readonly Message[] }
  | {
      readonly kind: 'revise'
      readonly messageId: MessageId
      readonly payload: ChatMessage
      readonly hash: string
      /** The revision this makes current (1 = first revision); lets a re-import see it is done. */
      readonly revision: number
      readonly rowId: number
    }
  | { readonly kind: 'rewind'; readonly from: MessageId; readonly ids: readonly MessageId[]; readonly rowIds: readonly number[] }
  | {
      readonly kind: 'compact'
      readonly covered: readonly MessageId[]
      readonly summary: readonly Message[]
      readonly summaryRowId: number
      readonly metadata: JsonValue
    }

/** Something the plan could not reproduce as hermes has it. */
export interface HermesPlanIssue {
  readonly code: HermesWarningCode
  readonly rowIds: readonly number[]
  readonly message: string
}

/** A message of a live list: its id and content hash. */
export interface PlannedLiveMessage {
  readonly id: MessageId
  readonly hash: string
}

/** How one hermes session becomes turnlog events. Pure: computed without a database. */
export interface HermesSessionPlan {
  readonly steps: readonly HermesPlanStep[]
  /** The live list the steps produce. */
  readonly live: readonly PlannedLiveMessage[]
  /** hermes' view: the `active=1` rows in row order, as the turnlog messages that represent them. */
  readonly target: readonly (PlannedLiveMessage & { readonly rowId: number })[]
  /** `live` equals `target` (ids, order and content). */
  readonly matches: boolean
  /** Rows recognised as re-inserted copies of earlier rows (same message, not a new one). */
  readonly keptCopies: number
  readonly compactions: number
  readonly rewinds: number
  readonly issues: readonly HermesPlanIssue[]
  /** Rows whose timestamp is earlier than that of a message written before them. */
  readonly timestampRegressions: readonly number[]
}

/** Options for {@link planHermesSession}. */
export interface PlanHermesSessionOptions {
  /**
   * Recognise rows hermes re-inserted (compaction keeps, `/retry` rewrites) as the messages they copy.
   * Default true; false imports every row as its own message (re-inserted head rows are placed with
   * their compaction's summary), the fallback when matching fails.
   */
  readonly mapCopies?: boolean
}

/** Every option of {@link planHermesSession}. */
const PLAN_OPTIONS = optionKeys<PlanHermesSessionOptions>({ mapCopies: true })

interface Block {
  readonly anchor: number
  /** First row of the compaction's block (head copies start here; the anchor when there are none). */
  readonly start: number
  /** Rows before `start` from here on are what the compaction archived. */
  readonly rangeStart: number
  /** [copy row, original row] pairs before / after the summary. */
  readonly head: readonly (readonly [number, number])[]
  readonly tail: readonly (readonly [number, number])[]
}

type BlockMode = 'kept' | 'reinserted' | 'none'

/**
 * Computes how a hermes session's rows (in row-id order) become turnlog operations so that turnlog's
 * live view equals hermes' `active=1` rows, and the history stays faithful:
 *
 * - A compaction is anchored at its summary row (`[CONTEXT COMPACTION]…`). hermes archives every
 *   active row (`compacted=1`) and inserts the compacted list as new rows: kept head messages, the
 *   summary, the kept tail, then clones of rows that arrived during the summary. Rows around the
 *   summary whose identity (role, content, tool calls) equals an archived row, matched in order, are
 *   *the same messages*: they stay live under their first row's id (a revision records any change of
 *   bookkeeping fields), and the compaction covers exactly the archived rows that were not kept.
 *   A summary row that repeats an earlier row (an old summary kept by a later compaction) is a copy,
 *   not a new compaction.
 * - `active=0, compacted=0` rows were rewound. hermes rewinds a tail, so they are retracted just
 *   before the next row that is not rewound (or at the end). Rows a `/retry`-style rewrite re-inserted
 *   (equal to a pending rewound message, in order) keep that message instead; rewound messages such
 *   a run skips were gone before the messages it keeps were written, so they are retracted earlier.
 * - Everything else is appended in row order. Timestamps are data (`createdAt`), never the order.
 *
 * When the copies of a compaction cannot be placed in hermes' order, that compaction falls back to
 * covering every archived row and importing its re-inserted rows as new messages (reported).
 */
export function planHermesSession(rows: readonly HermesRowMessage[], options: PlanHermesSessionOptions = {}): HermesSessionPlan {
  if (!guardInput('rows', () => Array.isArray(rows)))
    throw new TurnlogError('INVALID_INPUT', 'rows must be an array of hermes row messages', { details: { field: 'rows' } })
  if (typeof options !== 'object' || options === null)
    throw new TurnlogError('INVALID_INPUT', 'options must be an object', { details: { field: 'options' } })
  checkKnownKeys(options, PLAN_OPTIONS, 'options', 'planHermesSession')
  return guardInput('planHermesSession', () => plan(rows, options))
}

function plan(rows: readonly HermesRowMessage[], options: PlanHermesSessionOptions): HermesSessionPlan {
  const mapCopies = options.mapCopies !== false
  // summary rows that are not copies of an earlier row anchor a compaction
  const seenIdentity = new Set<string>()
  const anchor: boolean[] = rows.map((r) => {
    const isAnchor = r.summary && !seenIdentity.has(r.identity)
    seenIdentity.add(r.identity)
    return isAnchor
  })
  const blocks = findBlocks(rows, anchor)
  // a /retry run that skips rewound messages shows they were retracted before the rows it keeps were
  // written: learn those retraction points, then simulate again (a few rounds at most)
  let forced = new Map<number, MessageId>()
  let plan = simulate(rows, anchor, blocks, mapCopies, forced)
  for (let round = 0; round < 8 && plan.constraints.size > 0; round++) {
    forced = new Map([...forced, ...plan.constraints])
    plan = simulate(rows, anchor, blocks, mapCopies, forced)
  }
  return plan.result
}

/** Compaction blocks around each anchor: which rows re-insert which archived rows. */
function findBlocks(rows: readonly HermesRowMessage[], anchor: readonly boolean[]): Block[] {
  const n = rows.length
  const row = (i: number): HermesRowMessage => rows[i] as HermesRowMessage
  const blocks: Block[] = []
  const claimed = new Set<number>()
  const laterAnchor: boolean[] = new Array<boolean>(n).fill(false)
  for (let i = n - 2; i >= 0; i--) laterAnchor[i] = laterAnchor[i + 1] === true || anchor[i + 1] === true
  let rangeStart = 0
  let lowHead = 0
  for (let s = 0; s < n; s++) {
    if (!anchor[s]) continue
    const isCandidate = (i: number): boolean => row(i).state === 'compacted' && !claimed.has(i)
    const identities = new Set<string>()
    for (let i = rangeStart; i < s; i++) if (isCandidate(i)) identities.add(row(i).identity)
    // head: the run just before the summary (a compacted row there must be archived by a later
    // compaction), matched forward to the earliest originals: hermes keeps a prefix
    let j = s - 1
    while (j >= lowHead && !anchor[j] && identities.has(row(j).identity) && (row(j).state !== 'compacted' || laterAnchor[s] === true)) j--
    let head: [number, number][] = []
    for (let start = j + 1; start < s; start++) {
      const attempt: [number, number][] = []
      let prev = rangeStart - 1
      for (let h = start; h < s; h++) {
        let found = -1
        for (let o = prev + 1; o < start; o++) {
          if (isCandidate(o) && row(o).identity === row(h).identity) {
            found = o
            break
          }
        }
        if (found < 0) break
        attempt.push([h, found])
        prev = found
      }
      if (attempt.length === s - start) {
        head = attempt
        break
      }
    }
    const blockStart = head.length > 0 ? (head[0] as [number, number])[0] : s
    const headOriginals = new Set(head.map(([, o]) => o))
    // tail: the run just after the summary, matched backward to the latest originals: hermes keeps a
    // suffix (then clones what arrived during the summary, also a suffix)
    const lastHead = head.length > 0 ? (head[head.length - 1] as [number, number])[1] : rangeStart - 1
    const tailIdentities = new Set<string>()
    for (let i = lastHead + 1; i < blockStart; i++) if (isCandidate(i) && !headOriginals.has(i)) tailIdentities.add(row(i).identity)
    let end = s + 1
    while (end < n && !anchor[end] && tailIdentities.has(row(end).identity)) end++
    let tail: [number, number][] = []
    for (let last = end - 1; last > s && tail.length === 0; last--) {
      const attempt: [number, number][] = []
      let next = blockStart
      for (let t = last; t > s; t--) {
        let found = -1
        for (let o = next - 1; o > lastHead; o--) {
          if (isCandidate(o) && !headOriginals.has(o) && row(o).identity === row(t).identity) {
            found = o
            break
          }
        }
        if (found < 0) break
        attempt.unshift([t, found])
        next = found
      }
      if (attempt.length === last - s) tail = attempt
    }
    for (const [, o] of [...head, ...tail]) claimed.add(o)
    blocks.push({ anchor: s, start: blockStart, rangeStart, head, tail })
    rangeStart = blockStart
    lowHead = s + 1 + tail.length
  }
  return blocks
}

function simulate(
  rows: readonly HermesRowMessage[],
  anchor: readonly boolean[],
  blocks: readonly Block[],
  mapCopies: boolean,
  forced: ReadonlyMap<number, MessageId>,
): { result: HermesSessionPlan; constraints: Map<number, MessageId> } {
  const n = rows.length
  const row = (i: number): HermesRowMessage => rows[i] as HermesRowMessage
  const blockByStart = new Map(blocks.map((b) => [b.start, b]))
  const blockByAnchor = new Map(blocks.map((b) => [b.anchor, b]))
  const rowIndexOf = new Map(rows.map((r, i) => [r.message.id as string, i]))
  const issues: HermesPlanIssue[] = []
  const constraints = new Map<number, MessageId>()
  const steps: HermesPlanStep[] = []
  let live: MessageId[] = []
  const msgOf: MessageId[] = rows.map((r) => r.message.id)
  const firstRow = new Map<MessageId, number>()
  const latestRow = new Map<MessageId, number>()
  const hashOf = new Map<MessageId, string>()
  const revisions = new Map<MessageId, number>()
  // live messages whose latest row is rewound: retracted before the next row that is not
  const rewoundLive = new Set<MessageId>()
  let pending: Message[] = []
  let keptCopies = 0
  let compactions = 0
  let rewinds = 0
  let lastReplacePos = -1
  const timestampRegressions: number[] = []
  let maxEpoch = -Infinity

  const rowIdOf = (id: MessageId): number => row(latestRow.get(id) ?? 0).rowId
  const flushAppends = (): void => {
    if (pending.length > 0) steps.push({ kind: 'append', messages: pending })
    pending = []
  }
  const noteNew = (i: number): void => {
    const epoch = row(i).epochSeconds
    if (epoch === null) return
    if (epoch < maxEpoch) timestampRegressions.push(row(i).rowId)
    else maxEpoch = epoch
  }
  const track = (i: number, id: MessageId): void => {
    if (!firstRow.has(id)) firstRow.set(id, i)
    latestRow.set(id, i)
    hashOf.set(id, row(i).hash)
    if (row(i).state === 'rewound') rewoundLive.add(id)
    else rewoundLive.delete(id)
  }
  const rewindFrom = (first: number): void => {
    const ids = live.slice(first)
    flushAppends()
    steps.push({ kind: 'rewind', from: ids[0] as MessageId, ids, rowIds: ids.map(rowIdOf) })
    rewinds++
    for (const id of ids) rewoundLive.delete(id)
    live = live.slice(0, first)
    lastReplacePos = -1
  }
  const retractPending = (): void => {
    if (rewoundLive.size === 0) return
    const first = live.findIndex((id) => rewoundLive.has(id))
    if (live.length - first !== rewoundLive.size) {
      issues.push({
        code: 'live_view_mismatch',
        rowIds: [...rewoundLive].map(rowIdOf),
        message: 'rewound rows are not a tail of the live list; the rewind retracts more',
      })
    }
    rewindFrom(first)
  }
  const copy = (i: number, id: MessageId): void => {
    msgOf[i] = id
    keptCopies++
    const r = row(i)
    if (hashOf.get(id) !== r.hash) {
      flushAppends()
      const revision = (revisions.get(id) ?? 0) + 1
      revisions.set(id, revision)
      steps.push({ kind: 'revise', messageId: id, payload: r.message.payload, hash: r.hash, revision, rowId: r.rowId })
    }
    track(i, id)
  }
  const appendNew = (i: number): void => {
    const m = row(i).message
    pending.push(m)
    live.push(m.id)
    track(i, m.id)
    noteNew(i)
  }

  const modeOf = new Map<number, BlockMode>()
  const headRole = new Map<number, { anchor: number; original: number }>()
  const tailRole = new Map<number, number>()
  const deferred = new Map<number, Message[]>()
  const coveredOf = new Map<number, MessageId[]>()

  const decide = (b: Block): void => {
    const pos = new Map(live.map((id, p) => [id, p]))
    const liveRowMessage = (i: number): MessageId | null => {
      const id = msgOf[i] as MessageId
      return pos.has(id) && latestRow.get(id) === i ? id : null
    }
    const kept = new Set([...b.head, ...b.tail].map(([, o]) => o))
    const archived: number[] = []
    for (let i = b.rangeStart; i < b.start; i++) if (row(i).state === 'compacted' && liveRowMessage(i) !== null) archived.push(i)
    const coveredKept = archived.filter((i) => !kept.has(i)).map((i) => liveRowMessage(i) as MessageId)
    let mode: BlockMode = 'kept'
    if (kept.size > 0) {
      const firstCovered = coveredKept.reduce((min, id) => Math.min(min, pos.get(id) as number), Infinity)
      const ok =
        mapCopies &&
        coveredKept.length > 0 &&
        [...kept].every((o) => liveRowMessage(o) !== null) &&
        b.head.every(([, o]) => (pos.get(msgOf[o] as MessageId) as number) < firstCovered) &&
        b.tail.every(([, o]) => (pos.get(msgOf[o] as MessageId) as number) > firstCovered)
      if (!ok) {
        mode = 'reinserted'
        if (mapCopies) {
          issues.push({
            code: 'copy_mapping_fallback',
            rowIds: [...b.head, ...b.tail].map(([c]) => row(c).rowId),
            message: `compaction at row ${row(b.anchor).rowId}: re-inserted rows could not be kept in hermes' order; imported as new messages`,
          })
        }
      }
    }
    const covered = mode === 'kept' ? coveredKept : archived.map((i) => liveRowMessage(i) as MessageId)
    if (covered.length === 0) {
      mode = 'none'
      if (b.start > b.rangeStart) {
        issues.push({
          code: 'summary_without_compaction',
          rowIds: [row(b.anchor).rowId],
          message: 'a compaction summary row that replaced no archived row was appended as an ordinary message',
        })
      }
    }
    modeOf.set(b.anchor, mode)
    if (mode === 'kept') {
      for (const [c, o] of b.head) headRole.set(c, { anchor: b.anchor, original: o })
      for (const [c, o] of b.tail) tailRole.set(c, o)
    } else if (mode === 'reinserted') {
      for (const [c] of b.head) headRole.set(c, { anchor: b.anchor, original: -1 })
      deferred.set(b.anchor, [])
    }
    coveredOf.set(b.anchor, covered)
  }

  for (let i = 0; i < n; i++) {
    const r = row(i)
    const mustGo = forced.get(i)
    if (mustGo !== undefined && live.includes(mustGo)) rewindFrom(live.indexOf(mustGo))
    const block = blockByStart.get(i)
    if (block) decide(block)

    const headInfo = headRole.get(i)
    if (headInfo) {
      if (r.state !== 'rewound') retractPending()
      if (headInfo.original >= 0) copy(i, msgOf[headInfo.original] as MessageId)
      else {
        // a re-inserted head row of a compaction that could not keep it: placed with the summary
        deferred.get(headInfo.anchor)?.push(r.message)
        noteNew(i)
      }
      continue
    }
    const mode = anchor[i] ? modeOf.get(i) : undefined
    if (mode === 'kept' || mode === 'reinserted') {
      if (r.state !== 'rewound') retractPending()
      flushAppends()
      const b = blockByAnchor.get(i) as Block
      const covered = coveredOf.get(i) ?? []
      const coveredSet = new Set(covered)
      const summary = [...(deferred.get(i) ?? []), r.message]
      steps.push({
        kind: 'compact',
        covered,
        summary,
        summaryRowId: r.rowId,
        metadata: {
          hermes: {
            summaryRowId: r.rowId,
            coveredRowIds: covered.map(rowIdOf).sort((a, c) => a - c),
            keptRows: mode === 'kept' ? [...b.head, ...b.tail].map(([c, o]) => [row(o).rowId, row(c).rowId]) : [],
            reinsertedRowIds: summary.slice(0, -1).map((m) => row(rowIndexOf.get(m.id) ?? 0).rowId),
          },
        },
      })
      compactions++
      const at = live.findIndex((id) => coveredSet.has(id))
      const before = live.slice(0, at).filter((id) => !coveredSet.has(id))
      const after = live.slice(at).filter((id) => !coveredSet.has(id))
      live = [...before, ...summary.map((m) => m.id), ...after]
      for (const m of summary) track(rowIndexOf.get(m.id) ?? i, m.id)
      noteNew(i)
      continue
    }
    const tailOriginal = tailRole.get(i)
    if (tailOriginal !== undefined) {
      if (r.state !== 'rewound') retractPending()
      copy(i, msgOf[tailOriginal] as MessageId)
      continue
    }
    if (mapCopies && rewoundLive.size > 0) {
      // a row a rewrite (/retry, edit) re-inserted: equal to a pending rewound message, in live order
      const p = live.findIndex(
        (id, at) => at > lastReplacePos && rewoundLive.has(id) && row(latestRow.get(id) ?? 0).identity === r.identity,
      )
      if (p >= 0) {
        const skipped = live.slice(lastReplacePos + 1, p).filter((id) => rewoundLive.has(id))
        const keptFirst = firstRow.get(live[p] as MessageId)
        if (skipped.length > 0 && keptFirst !== undefined && !forced.has(keptFirst)) constraints.set(keptFirst, skipped[0] as MessageId)
        lastReplacePos = p
        copy(i, live[p] as MessageId)
        continue
      }
    }
    if (r.state !== 'rewound') retractPending()
    appendNew(i)
  }
  retractPending()
  flushAppends()
  const leftover = live.filter((id) => row(latestRow.get(id) ?? 0).state === 'compacted')
  if (leftover.length > 0) {
    const rowIds = leftover.map(rowIdOf)
    const first = live.indexOf(leftover[0] as MessageId)
    if (live.length - first === leftover.length) {
      issues.push({ code: 'compacted_without_summary', rowIds, message: 'compacted rows no compaction summary follows were retracted' })
      rewindFrom(first)
    } else {
      issues.push({
        code: 'compacted_without_summary',
        rowIds,
        message: 'compacted rows no compaction summary follows stay live (they are not a tail)',
      })
    }
  }

  const plannedLive = live.map((id) => ({ id, hash: hashOf.get(id) ?? '' }))
  const target = rows.flatMap((r, i) => (r.state === 'active' ? [{ id: msgOf[i] as MessageId, hash: r.hash, rowId: r.rowId }] : []))
  const matches = plannedLive.length === target.length && plannedLive.every((m, k) => m.id === target[k]?.id && m.hash === target[k]?.hash)
  return {
    result: { steps, live: plannedLive, target, matches, keptCopies, compactions, rewinds, issues, timestampRegressions },
    constraints,
  }
}
