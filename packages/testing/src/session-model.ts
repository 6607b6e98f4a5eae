/**
 * An independent, deliberately simple in-memory model of turnlog's session rules, written from the
 * domain brief and the `SessionStore` documentation, for model-based and property tests. It shares no
 * code with the projection (`foldSession`) or the stores: it keeps the live list as a plain array and a
 * snapshot of it after every version, and it says which error codes a call may fail with.
 *
 * The rules it encodes:
 * - Identity is the message id; content equality is the content hash. An id belongs to the one session
 *   that first stored it (and to forks that inherited it).
 * - append/flush: ephemeral messages are refused by append and skipped by flush. Identical copies of one
 *   message (same id, same content) in one call are that one message (stored once, its id also listed
 *   in `duplicates`); one id with two contents in one call is a conflict. A known id whose content was ever stored under it in this session is a duplicate (no
 *   write); other content, or an id of another session, is a conflict, and then nothing is written. New
 *   messages get one version each, in call order. `expectedVersion` is checked only when something
 *   would be written or refused: a stale call that is not all duplicates fails with `VERSION_CONFLICT`
 *   alone, never with the conflict it would otherwise meet.
 * - Every write checks `expectedVersion` before the session's state (live messages, conflicts): a
 *   stale call is `VERSION_CONFLICT` unless it is a replay of what is already in effect (a no-op).
 * - rewind: the target must be live; `after` retracts what follows it, `from` the target too. One
 *   version when something is retracted, none otherwise. `expectedVersion` is always checked.
 * - compact: covered ids must be live; the summary messages are appended (one version each, not yet
 *   live) and then placed where the first covered message (in live order) was (one more version).
 *   Summary ids must be new. A retry of a committed compaction (same first summary message, same
 *   content) is a no-op. A compaction that would split a tool-call pair is `INVALID_INPUT` (checked
 *   after the live ids, by core's `checkCompactionPairing`, the one rule the store calls: the model
 *   says where the check stands among the others, not what a split is; the model's messages are
 *   `openai-chat`), unless `allowSplit` is set.
 * - revise: the message must be live. The same content and status is a no-op (`unchanged`); the same
 *   content with status final finalizes a partial message; the same content with status partial on a
 *   final message is invalid; new content is a new revision (one version). finalize without content
 *   finalizes a partial message (one version) and is a no-op on a final one.
 * - fork: `at` must be live in the parent; the child gets one version for the fork and one per inherited
 *   message (the parent's live list up to `at`, current content and status), and owns those ids too.
 * - load({ at: v }) is the live list as it was after version v.
 * @packageDocumentation
 */
import {
  applyCompact,
  applyRevision,
  applyRewind,
  contentHash,
  restoreMessage,
  type AppendResult,
  type ChatMessage,
  type CompactResult,
  type ErrorCode,
  type Message,
  type MessageId,
  type ReviseResult,
  type RewindResult,
  type RewindTarget,
  type SessionId,
} from '@turnlog/core'
import { compactionPairingSplits, withApplyTo } from '@turnlog/core/internal'

/** A message as the model's live list holds it: current content and streaming status. */
export interface ModelMessage {
  readonly id: MessageId
  readonly payload: ChatMessage
  readonly hash: string
  readonly partial: boolean
  readonly createdAt: string
  readonly externalId?: string
  readonly externalScope?: string
}

/** The outcome of a model call: a value, or the error codes a correct store may report for it. */
export type ModelOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly codes: readonly ErrorCode[] }

/** A session as the model sees it at one version. */
export interface ModelLoad {
  readonly version: number
  readonly messages: readonly ModelMessage[]
}

type State = 'live' | 'retracted' | 'compacted' | 'pending'

interface ModelRecord {
  current: ModelMessage
  state: State
  /** Every content hash ever stored under this id in this session. */
  readonly hashes: Set<string>
  /** How many content versions this session stored for the id (the first is revision 0). */
  contents: number
}

interface ModelSession {
  readonly id: SessionId
  readonly records: Map<MessageId, ModelRecord>
  live: MessageId[]
  /** `snapshots[v]` is the live list after version v. */
  readonly snapshots: (readonly ModelMessage[])[]
  /** First summary ids of committed compactions (a retry naming one is a no-op). */
  readonly placedSummaries: Set<MessageId>
  readonly parent: { readonly sessionId: SessionId; readonly version: number; readonly at: MessageId } | null
}

const ok = <T>(value: T): ModelOutcome<T> => ({ ok: true, value })
const fail = <T>(codes: readonly ErrorCode[]): ModelOutcome<T> => ({ ok: false, codes })

function toModelMessage(m: Message, partial = m.status === 'partial'): ModelMessage {
  return {
    id: m.id,
    payload: m.payload,
    hash: contentHash(m),
    partial,
    createdAt: m.createdAt,
    ...(m.externalId === undefined ? {} : { externalId: m.externalId }),
    ...(m.externalScope === undefined ? {} : { externalScope: m.externalScope }),
  }
}

/** Identical copies in one call are one message; one id with two contents is a conflict (pushed to `codes`). */
function foldCopies(batch: readonly Message[], codes: ErrorCode[]): { unique: Message[]; repeated: Set<MessageId> } {
  const unique: Message[] = []
  const repeated = new Set<MessageId>()
  for (const m of batch) {
    const first = unique.find((u) => u.id === m.id)
    if (first === undefined) unique.push(m)
    else if (contentHash(first) === contentHash(m)) repeated.add(m.id)
    else codes.push('MESSAGE_CONFLICT')
  }
  return { unique, repeated }
}

/** An append's result with the ids listed more than once also in `duplicates` (in batch order). */
function withCopies(
  result: ModelOutcome<AppendResult>,
  unique: readonly Message[],
  repeated: ReadonlySet<MessageId>,
): ModelOutcome<AppendResult> {
  if (!result.ok || repeated.size === 0) return result
  const duplicates = new Set<MessageId>([...result.value.duplicates, ...repeated])
  return ok({ ...result.value, duplicates: unique.map((m) => m.id).filter((id) => duplicates.has(id)) })
}

function rewound(result: Omit<RewindResult, 'applyTo'>): RewindResult {
  return withApplyTo(result, (live) => applyRewind(live, result))
}

function compacted(covered: readonly MessageId[], summary: readonly Message[], result: Omit<CompactResult, 'applyTo'>): CompactResult {
  return withApplyTo(result, (live) => applyCompact(live, { covered, summary }))
}

/** A revise/finalize result with the message as it now stands in the model. */
function revised(record: ModelRecord, result: Omit<ReviseResult, 'applyTo' | 'message'>): ReviseResult {
  const c = record.current
  const message = restoreMessage({
    id: c.id,
    payload: c.payload,
    createdAt: c.createdAt,
    externalId: c.externalId,
    externalScope: c.externalScope,
    status: c.partial ? 'partial' : undefined,
  })
  const full = { ...result, message }
  return withApplyTo(full, (live) => applyRevision(live, full))
}

/** The model: every session of one test run. */
export class SessionModel {
  readonly #sessions = new Map<SessionId, ModelSession>()
  /** Which sessions hold each id. */
  readonly #owners = new Map<MessageId, Set<SessionId>>()

  /** Registers a new, empty session (version 0). */
  createSession(id: SessionId): void {
    if (this.#sessions.has(id)) throw new Error(`model: session ${id} exists`)
    this.#sessions.set(id, { id, records: new Map(), live: [], snapshots: [[]], placedSummaries: new Set(), parent: null })
  }

  /** The ids of every session, in creation order. */
  sessionIds(): SessionId[] {
    return [...this.#sessions.keys()]
  }

  /** The session's current version, or undefined when it does not exist. */
  version(sessionId: SessionId): number | undefined {
    const s = this.#sessions.get(sessionId)
    return s === undefined ? undefined : s.snapshots.length - 1
  }

  /** The fork lineage of a session. */
  parent(sessionId: SessionId): ModelSession['parent'] | undefined {
    return this.#sessions.get(sessionId)?.parent
  }

  /** The live list now, or as of version `at`. */
  load(sessionId: SessionId, at?: number): ModelOutcome<ModelLoad> {
    const s = this.#sessions.get(sessionId)
    if (!s) return fail(['SESSION_NOT_FOUND'])
    const version = s.snapshots.length - 1
    const v = at ?? version
    if (!Number.isSafeInteger(v) || v < 0 || v > version) return fail(['INVALID_INPUT'])
    return ok({ version: v, messages: s.snapshots[v] ?? [] })
  }

  /** True when `id` is live in the session now. */
  isLive(sessionId: SessionId, id: MessageId): boolean {
    return this.#sessions.get(sessionId)?.records.get(id)?.state === 'live'
  }

  /** Appends a batch (see the rules in the file comment). */
  append(sessionId: SessionId, batch: readonly Message[], expectedVersion?: number): ModelOutcome<AppendResult> {
    const codes: ErrorCode[] = []
    for (const m of batch) if (m.ephemeral === true) codes.push('INVALID_MESSAGE')
    const { unique, repeated } = foldCopies(batch, codes)
    return withCopies(this.#appendChecked(sessionId, unique, expectedVersion, codes), unique, repeated)
  }

  /** Flushes a live list: skips ephemeral messages, appends what is new (see the file comment). */
  flush(sessionId: SessionId, list: readonly Message[], expectedVersion?: number): ModelOutcome<AppendResult> {
    const codes: ErrorCode[] = []
    const { unique, repeated } = foldCopies(
      list.filter((m) => m.ephemeral !== true),
      codes,
    )
    const result = this.#appendChecked(sessionId, unique, expectedVersion, codes)
    if (!result.ok) return result
    const appended = new Set<string>(result.value.appended)
    return ok({ ...result.value, duplicates: unique.map((m) => m.id).filter((id) => !appended.has(id) || repeated.has(id)) })
  }

  #appendChecked(
    sessionId: SessionId,
    batch: readonly Message[],
    expectedVersion: number | undefined,
    codes: ErrorCode[],
  ): ModelOutcome<AppendResult> {
    const s = this.#sessions.get(sessionId)
    if (!s) return fail([...codes, 'SESSION_NOT_FOUND'])
    const fresh: Message[] = []
    const duplicates: MessageId[] = []
    for (const m of batch) {
      const record = s.records.get(m.id)
      if (record) {
        if (record.hashes.has(contentHash(m))) duplicates.push(m.id)
        else codes.push('MESSAGE_CONFLICT')
      } else if ((this.#owners.get(m.id)?.size ?? 0) > 0) {
        codes.push('MESSAGE_CONFLICT')
      } else if (!fresh.some((f) => f.id === m.id)) {
        fresh.push(m)
      }
    }
    const version = s.snapshots.length - 1
    if (expectedVersion !== undefined && expectedVersion !== version && (fresh.length > 0 || codes.includes('MESSAGE_CONFLICT'))) {
      // the version first: a stale writer learns that, not what else is wrong with its batch
      return fail([...codes.filter((c) => c !== 'MESSAGE_CONFLICT'), 'VERSION_CONFLICT'])
    }
    if (codes.length > 0) return fail(codes)
    for (const m of fresh) this.#appendEvent(s, toModelMessage(m), false)
    return ok({ version: s.snapshots.length - 1, appended: fresh.map((m) => m.id), duplicates })
  }

  /** Retracts the tail of the live list. */
  rewind(sessionId: SessionId, target: RewindTarget, expectedVersion?: number): ModelOutcome<RewindResult> {
    const s = this.#sessions.get(sessionId)
    if (!s) return fail(['SESSION_NOT_FOUND'])
    const codes: ErrorCode[] = []
    const version = s.snapshots.length - 1
    if (expectedVersion !== undefined && expectedVersion !== version) return fail(['VERSION_CONFLICT'])
    const targetId = 'after' in target ? target.after : target.from
    const index = s.live.indexOf(targetId)
    if (index < 0) codes.push('UNKNOWN_MESSAGE')
    if (codes.length > 0) return fail(codes)
    const retracted = s.live.slice('after' in target ? index + 1 : index)
    if (retracted.length === 0) return ok(rewound({ version, retracted }))
    for (const id of retracted) this.#record(s, id).state = 'retracted'
    s.live = s.live.filter((id) => !retracted.includes(id))
    this.#snapshot(s)
    return ok(rewound({ version: version + 1, retracted }))
  }

  /** Replaces live messages with summary messages placed where the first covered one was. */
  compact(
    sessionId: SessionId,
    covered: readonly MessageId[],
    summary: readonly Message[],
    expectedVersion?: number,
    allowSplit = false,
  ): ModelOutcome<CompactResult> {
    const codes: ErrorCode[] = []
    if (covered.length === 0 || new Set(covered).size !== covered.length || summary.length === 0) codes.push('INVALID_INPUT')
    if (summary.some((m) => covered.includes(m.id))) codes.push('INVALID_INPUT')
    if (summary.some((m) => m.ephemeral === true) || new Set(summary.map((m) => m.id)).size !== summary.length)
      codes.push('INVALID_MESSAGE')
    const s = this.#sessions.get(sessionId)
    if (!s) return fail([...codes, 'SESSION_NOT_FOUND'])
    if (codes.length > 0) return fail(codes)
    const version = s.snapshots.length - 1
    const first = summary[0] as Message
    // a retry of a committed compaction: its first summary message is stored here, same content, placed
    const firstRecord = s.records.get(first.id)
    if (firstRecord && firstRecord.hashes.has(contentHash(first)) && s.placedSummaries.has(first.id)) {
      return ok(compacted(covered, summary, { version, summary: summary.map((m) => m.id) }))
    }
    if (expectedVersion !== undefined && expectedVersion !== version) return fail(['VERSION_CONFLICT'])
    if (summary.some((m) => (this.#owners.get(m.id)?.size ?? 0) > 0)) codes.push('MESSAGE_CONFLICT')
    if (covered.some((id) => !s.live.includes(id))) codes.push('UNKNOWN_MESSAGE')
    if (codes.length > 0) return fail(codes)
    const live = s.live.map((id) => ({ id, payload: this.#record(s, id).current.payload }))
    if (!allowSplit && compactionPairingSplits(live, { covered, summary }).length > 0) return fail(['INVALID_INPUT'])
    for (const m of summary) this.#appendEvent(s, toModelMessage(m), true)
    const coveredSet = new Set(covered)
    const firstCovered = s.live.findIndex((id) => coveredSet.has(id))
    for (const id of covered) this.#record(s, id).state = 'compacted'
    for (const m of summary) this.#record(s, m.id).state = 'live'
    const before = s.live.slice(0, firstCovered).filter((id) => !coveredSet.has(id))
    const after = s.live.slice(firstCovered).filter((id) => !coveredSet.has(id))
    s.live = [...before, ...summary.map((m) => m.id), ...after]
    s.placedSummaries.add(first.id)
    this.#snapshot(s)
    return ok(compacted(covered, summary, { version: s.snapshots.length - 1, summary: summary.map((m) => m.id) }))
  }

  /** New content (or a status change) for a live message. */
  revise(
    sessionId: SessionId,
    id: MessageId,
    payload: ChatMessage,
    status: 'partial' | 'final' = 'final',
    expectedVersion?: number,
  ): ModelOutcome<ReviseResult> {
    const s = this.#sessions.get(sessionId)
    if (!s) return fail(['SESSION_NOT_FOUND'])
    const found = s.records.get(id)
    const record = found && found.state === 'live' ? found : undefined
    const version = s.snapshots.length - 1
    const hash = contentHash({ payload })
    const partial = status === 'partial'
    if (record && record.current.hash === hash && record.current.partial === partial)
      return ok(revised(record, { version, revision: record.contents - 1, unchanged: true }))
    if (expectedVersion !== undefined && expectedVersion !== version) return fail(['VERSION_CONFLICT'])
    if (!record) return fail(['UNKNOWN_MESSAGE'])
    if (record.current.hash === hash) {
      if (partial) return fail(['INVALID_INPUT'])
      record.current = { ...record.current, partial: false }
      this.#snapshot(s)
      return ok(revised(record, { version: version + 1, revision: record.contents - 1, unchanged: false }))
    }
    record.current = { ...record.current, payload, hash, partial }
    record.hashes.add(hash)
    record.contents++
    this.#snapshot(s)
    return ok(revised(record, { version: version + 1, revision: record.contents - 1, unchanged: false }))
  }

  /** Marks a partial message final, optionally with final content. */
  finalize(sessionId: SessionId, id: MessageId, payload?: ChatMessage, expectedVersion?: number): ModelOutcome<ReviseResult> {
    if (payload !== undefined) return this.revise(sessionId, id, payload, 'final', expectedVersion)
    const s = this.#sessions.get(sessionId)
    if (!s) return fail(['SESSION_NOT_FOUND'])
    const found = s.records.get(id)
    const record = found && found.state === 'live' ? found : undefined
    const version = s.snapshots.length - 1
    if (record && !record.current.partial) return ok(revised(record, { version, revision: record.contents - 1, unchanged: true }))
    if (expectedVersion !== undefined && expectedVersion !== version) return fail(['VERSION_CONFLICT'])
    if (!record) return fail(['UNKNOWN_MESSAGE'])
    record.current = { ...record.current, partial: false }
    this.#snapshot(s)
    return ok(revised(record, { version: version + 1, revision: record.contents - 1, unchanged: false }))
  }

  /** A new session `childId` continuing from `at` (live in the parent). */
  fork(sessionId: SessionId, at: MessageId, childId: SessionId): ModelOutcome<SessionId> {
    const parent = this.#sessions.get(sessionId)
    if (!parent) return fail(['SESSION_NOT_FOUND'])
    const existing = this.#sessions.get(childId)
    if (existing) {
      return existing.parent?.sessionId === sessionId && existing.parent.at === at ? ok(childId) : fail(['SESSION_EXISTS'])
    }
    const index = parent.live.indexOf(at)
    if (index < 0) return fail(['UNKNOWN_MESSAGE'])
    const child: ModelSession = {
      id: childId,
      records: new Map(),
      live: [],
      snapshots: [[]],
      placedSummaries: new Set(),
      parent: { sessionId, version: parent.snapshots.length - 1, at },
    }
    this.#sessions.set(childId, child)
    this.#snapshot(child) // the fork event
    for (const id of parent.live.slice(0, index + 1)) this.#appendEvent(child, this.#record(parent, id).current, false)
    return ok(childId)
  }

  #record(s: ModelSession, id: MessageId): ModelRecord {
    const r = s.records.get(id)
    if (!r) throw new Error(`model: no record ${id}`)
    return r
  }

  #appendEvent(s: ModelSession, m: ModelMessage, pending: boolean): void {
    s.records.set(m.id, { current: m, state: pending ? 'pending' : 'live', hashes: new Set([m.hash]), contents: 1 })
    let owners = this.#owners.get(m.id)
    if (!owners) this.#owners.set(m.id, (owners = new Set()))
    owners.add(s.id)
    if (!pending) s.live.push(m.id)
    this.#snapshot(s)
  }

  #snapshot(s: ModelSession): void {
    s.snapshots.push(s.live.map((id) => this.#record(s, id).current))
  }
}
