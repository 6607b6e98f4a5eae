import type { ChatMessage } from './chat-message.js'
import type { ConflictReason } from './error-codes.js'
import type { ApplyTo } from './apply-to-live.js'
import type { StoredEvent } from './events.js'
import type { SessionState, TranscriptEntry } from './fold-session.js'
import type { MessageId, SessionId } from './ids.js'
import type { ImportSessionsOptions, ImportSessionsResult, ImportedSession } from './imported-session.js'
import type { JsonValue } from './json-value.js'
import type { Message } from './message.js'
import type { ToolPairing } from './tool-pairing.js'

/** Options for {@link SessionStore.createSession}. */
export interface CreateSessionOptions {
  /** Use this id; creating it again with the same attributes is a no-op. */
  readonly id?: string
  readonly tenantId?: string
  readonly metadata?: JsonValue
}

/** Optimistic concurrency, accepted by every write. */
export interface WriteOptions {
  /** The session version the caller last saw; a mismatch throws `VERSION_CONFLICT`. */
  readonly expectedVersion?: number
}

/** Options for {@link SessionStore.append} and {@link SessionStore.flush}. */
export type AppendOptions = WriteOptions

/** Result of an append or flush. */
export interface AppendResult {
  /** The session version after the call (its last seq). */
  readonly version: number
  /** Ids written by this call, in order. */
  readonly appended: readonly MessageId[]
  /**
   * Ids already stored with identical content (nothing written for them), and ids the call listed more
   * than once with identical content (also in `appended` when this call wrote them); each id once.
   */
  readonly duplicates: readonly MessageId[]
}

/**
 * The compaction a {@link SessionStore.sync} records: which new messages of the list are summaries.
 * Each run of consecutive summary messages in the list replaces the live messages missing from the
 * list between the kept message before the run and the kept message after it (the list's start or
 * end when there is none), as one `messages_compacted` event, the one `compact` writes.
 */
export interface SyncCompactionOptions {
  /**
   * Ids of messages of the list that are summaries. An id that is already live is kept as it is (the
   * compaction was recorded before: a replay); a new one must cover at least one live message.
   */
  readonly summaryIds: readonly string[]
  /** Why (kept in each `messages_compacted` event; no NUL or lone surrogate). */
  readonly reason?: string
}

/** Options for {@link SessionStore.sync}. */
export interface SyncOptions extends WriteOptions {
  /**
   * Record summaries in the list as compactions (placed where the messages they replace were) instead
   * of appending them at the end and retracting the replaced messages. Nothing is inferred from content
   * or `meta`: only the ids named here are summaries.
   */
  readonly compaction?: SyncCompactionOptions
}

/** One compaction a {@link SessionStore.sync} recorded. */
export interface SyncCompaction {
  /** The summary message(s), in list order (new messages, not in `SyncResult.appended`). */
  readonly summary: readonly MessageId[]
  /** The live messages they replaced, in live order (not in `SyncResult.retracted`). */
  readonly covered: readonly MessageId[]
}

/** Result of a {@link SessionStore.sync}: what it wrote to make the live list equal the caller's list. */
export interface SyncResult {
  /** The session version after the call (unchanged when nothing was written). */
  readonly version: number
  /** Ids of the list's new messages, appended in list order. */
  readonly appended: readonly MessageId[]
  /** Live ids the list no longer holds, retracted by one `messages_retracted` event (`data.sync: true`). */
  readonly retracted: readonly MessageId[]
  /** Live ids the list holds with other content, each recorded as a revision. */
  readonly revised: readonly MessageId[]
  /** Partial live messages the list holds, same content, as final: marked final. */
  readonly finalized: readonly MessageId[]
  /**
   * Compactions recorded for `options.compaction.summaryIds`, in list order: one `messages_compacted`
   * event each (`data.sync: true`). Empty without that option.
   */
  readonly compacted: readonly SyncCompaction[]
}

/** Options for {@link SessionStore.load}. */
export interface LoadOptions {
  /** Time travel: the live list as of this version. */
  readonly at?: number
}

/** A session's live list. */
export interface LoadResult {
  readonly sessionId: SessionId
  readonly version: number
  /** The live list in log order, ids intact; partial messages carry `status: 'partial'`. */
  readonly messages: Message[]
  /** Tool-call pairing of `messages`. */
  readonly pairing: ToolPairing
}

/** Options for {@link SessionStore.events}. */
export interface EventsOptions {
  /** First seq to return (inclusive); default 1. */
  readonly fromSeq?: number
  /** Last seq to return (inclusive). */
  readonly toSeq?: number
}

/** Options for {@link SessionStore.sessions}. */
export interface ListSessionsOptions {
  readonly tenantId?: string
  /** Page size, 1–1000; default 100. */
  readonly limit?: number
  /** Keyset cursor: the last session id of the previous page. */
  readonly after?: string
}

/** A session's row. */
export interface SessionInfo {
  readonly sessionId: SessionId
  readonly tenantId: string | null
  readonly version: number
  readonly liveCount: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly metadata: JsonValue | null
  readonly parent: { readonly sessionId: SessionId; readonly version: number; readonly at: MessageId } | null
}

/** One page of sessions. */
export interface SessionPage {
  readonly sessions: readonly SessionInfo[]
  /** Pass as `after` for the next page; null on the last page. */
  readonly next: string | null
}

/** Options for {@link SessionStore.rewind}. */
export interface RewindOptions extends WriteOptions {
  readonly reason?: string
}

/** Result of a rewind. */
export interface RewindResult {
  readonly version: number
  /** The ids that left the live view, in their live order. */
  readonly retracted: readonly MessageId[]
  /**
   * The caller's live list after this rewind (`applyRewind(live, this)`): cut at its first retracted
   * message. Pure; a non-enumerable property (the result stays plain data).
   */
  readonly applyTo: ApplyTo
}

/**
 * Where {@link SessionStore.rewind} cuts: after a live message (kept) or from one (retracted with
 * everything after it). Any id string (a `MessageId`, a `message.id`, an id read back from JSON).
 */
export type RewindTargetInput = { readonly after: string } | { readonly from: string }

/**
 * Input of {@link SessionStore.compact}.
 * @typeParam S - the summary message type.
 */
export interface CompactInput<S extends Message<unknown> = Message<unknown>> extends WriteOptions {
  /**
   * Live message ids the summary replaces (need not be contiguous). A tool call and its result(s)
   * are covered together or not at all: a compaction that would leave one of them live without the
   * other (or whose summary opens or answers a call without its partner) is refused with
   * `INVALID_INPUT` (`details.reason: 'splits_tool_pair'`), unless `allowSplitToolPairs` is set.
   * Pairing faults the live list already had never count (docs/guarantees.md, "History").
   */
  readonly covered: readonly string[]
  /** The summary message(s); new messages, placed where the first covered message was. */
  readonly summary: S | readonly S[]
  readonly reason?: string
  readonly metadata?: JsonValue
  /**
   * Record the compaction even if it splits a tool-call pair (default false). For a writer that
   * records a compaction that already happened elsewhere (an importer replaying a history, an
   * adapter mirroring a runtime's own compaction): the live list then holds an orphan result or an
   * unanswered call, which the audit reports and `toWire(…, { repairPairing: true })` repairs for the
   * wire.
   */
  readonly allowSplitToolPairs?: boolean
}

/**
 * Result of a compaction.
 * @typeParam S - the summary message type (`applyTo` adds it to the caller's list type).
 */
export interface CompactResult<S extends Message<unknown> = Message<unknown>> {
  readonly version: number
  readonly summary: readonly MessageId[]
  /**
   * The caller's live list after this compaction (`applyCompact(live, input)`): covered messages out,
   * the summary in the first one's place, scaffolding kept. Pure; non-enumerable.
   */
  readonly applyTo: ApplyTo<S>
}

/** Options for {@link SessionStore.revise}. */
export interface ReviseOptions extends WriteOptions {
  /** `'partial'` while still streaming; default final. */
  readonly status?: 'partial' | 'final'
}

/** Result of a revision. */
export interface ReviseResult {
  readonly version: number
  /** The revision number now current (0 is the original content). */
  readonly revision: number
  /** True when the same content was already current: nothing written. */
  readonly unchanged: boolean
  /**
   * The message as it now stands (same id, createdAt and externalId; the current content and status),
   * as `load` returns it: put it in the caller's live list in place of the old value.
   */
  readonly message: Message
  /** The caller's live list with `message` in place of every copy of it (`applyRevision`). Pure; non-enumerable. */
  readonly applyTo: ApplyTo
}

/** Options for {@link SessionStore.fork}. */
export interface ForkOptions {
  /** The last message (live in the parent) the fork keeps. */
  readonly at: string
  /** The new session's id (idempotent retry); minted when absent. */
  readonly id?: string
  readonly tenantId?: string
  readonly metadata?: JsonValue
}

/** Full history of a session. */
export interface Transcript {
  readonly sessionId: SessionId
  readonly version: number
  readonly entries: readonly TranscriptEntry[]
  /** Every non-message event (rewinds, compactions, forks, finalizations) in log order. */
  readonly events: readonly StoredEvent[]
  /** Pairing of the live list. */
  readonly pairing: ToolPairing
}

/** Options for {@link SessionStore.rebuild}. */
export interface RebuildOptions {
  /** One session; default all. */
  readonly sessionId?: string
  /** Report drift without writing. */
  readonly verify?: boolean
  /** Called after each session. */
  readonly onProgress?: (progress: { readonly done: number; readonly total: number; readonly sessionId: SessionId }) => void
}

/** A session whose inline projection differed from the fold of its log. */
export interface ProjectionDrift {
  readonly sessionId: SessionId
  readonly expected: readonly MessageId[]
  readonly actual: readonly MessageId[]
  readonly explanation: string
}

/** Result of a rebuild. */
export interface RebuildResult {
  readonly sessions: number
  readonly drift: readonly ProjectionDrift[]
  /** Sessions whose projection was rewritten (0 in verify mode). */
  readonly rewritten: number
}

/** Options for {@link SessionStore.redact}. */
export interface RedactOptions {
  /** Why (kept in the `message_redacted` event; no NUL or lone surrogate). */
  readonly reason?: string
}

/** Result of a redaction. */
export interface RedactResult {
  /** The session's version after the call. */
  readonly version: number
  /**
   * Every session of the tenant holding the message (the session itself, forks, parents), with its
   * version and how many of its events this call scrubbed (0: nothing left to scrub).
   */
  readonly sessions: readonly { readonly sessionId: SessionId; readonly version: number; readonly scrubbed: number }[]
}

/** A recorded `MESSAGE_CONFLICT` attempt (evidence for the audit). */
export interface ConflictRecord {
  readonly sessionId: SessionId
  readonly messageId: MessageId
  readonly reason: ConflictReason
  readonly storedHash: string | null
  readonly incomingHash: string
  readonly otherSessionId: SessionId | null
  readonly incomingPayload: ChatMessage
  readonly detectedAt: string
}

/**
 * The port: a durable, append-only store of agent sessions. `@turnlog/postgres` implements it on
 * Postgres and embedded PGlite; the same contract suite runs against both.
 */
export interface SessionStore {
  /** Creates a session (idempotent when `id` is given). */
  createSession(options?: CreateSessionOptions): Promise<SessionId>
  /** A session's row; throws `SESSION_NOT_FOUND`. */
  getSession(sessionId: string): Promise<SessionInfo>
  /**
   * Appends messages in one all-or-nothing transaction. Known id + same content: a duplicate, no
   * write. Known id + other content, or an id of another session: `MESSAGE_CONFLICT`, nothing written.
   * Identical copies of one message in the batch are that message (written once, listed in
   * `duplicates`); one id with two contents in the batch is `MESSAGE_CONFLICT`.
   */
  append(sessionId: string, messages: readonly Message<unknown>[], options?: AppendOptions): Promise<AppendResult>
  /**
   * The agent loop's call on every exit path: appends, in order, every non-ephemeral message of the
   * live list the log does not have. Idempotent; cheap when nothing is new. Identical copies in the
   * list (a redelivered message pushed again) are one message, as for `append`.
   */
  flush(sessionId: string, live: readonly Message<unknown>[], options?: AppendOptions): Promise<AppendResult>
  /**
   * Makes the live list equal to `list` (the runtime's whole state) in one transaction: appends the
   * messages it does not have, retracts the live messages missing from it (one `messages_retracted`
   * event with `data.sync: true`, so an audit tells it from a rewind), records changed content under a
   * live id as a revision (and a partial message listed final, same content, as finalized). A no-op
   * when the two are equal. Ephemeral messages are skipped; identical copies are one message.
   *
   * The live list keeps log order, so the list must hold its kept messages in their stored order,
   * followed by its new ones: anything else is refused with `INVALID_INPUT` (`details.reason:
   * 'reorder'`), nothing written. A new id that was retracted or compacted before is refused too
   * (`details.reason: 'not_live'`). A redacted message is kept as stored; a final message listed as
   * partial stays final (new content is a final revision). Compactions are never
   * inferred from content: a summary in place of removed messages is appended at the end and the removed
   * ones retracted, unless `options.compaction.summaryIds` names it. Then each run of summary messages
   * (which may stand before kept messages, but not after another new message) replaces the live
   * messages missing between its neighbouring kept messages, recorded as one `messages_compacted` event
   * (`data.sync: true`) with the summary in their place, exactly as `compact` records it; a new summary
   * that would replace nothing, or a summary id the list does not hold, is `INVALID_INPUT`
   * (`details.reason: 'summary_covers_nothing'`, `'summary_not_listed'`).
   * Throws `VERSION_CONFLICT` on a stale `expectedVersion` (nothing written) unless the list is
   * already the live list (a replay: nothing written, whatever the version), `MESSAGE_CONFLICT` as
   * `append`. Prefer `flush` (append-only) unless the runtime really edits its list: a runtime bug that
   * drops messages becomes retractions under `sync` (see docs/integrating.md, "flush or sync").
   */
  sync(sessionId: string, list: readonly Message<unknown>[], options?: SyncOptions): Promise<SyncResult>
  /** The live list (at the head, or at a past version). */
  load(sessionId: string, options?: LoadOptions): Promise<LoadResult>
  /** The session's events in seq order, streamed. */
  events(sessionId: string, options?: EventsOptions): AsyncIterable<StoredEvent>
  /** Pages through sessions. */
  sessions(options?: ListSessionsOptions): Promise<SessionPage>
  /** Retracts the tail of the live list. */
  rewind(sessionId: string, target: RewindTargetInput, options?: RewindOptions): Promise<RewindResult>
  /**
   * Replaces live messages with a summary, placed where the first covered message was; live messages
   * not covered (appended meanwhile too) stay live after it. One transaction; a retry of a compaction
   * already placed is a no-op. Throws `VERSION_CONFLICT` (stale `expectedVersion`), `MESSAGE_CONFLICT`
   * (a summary id already stored), `UNKNOWN_MESSAGE` (a covered id not live), `INVALID_INPUT` with
   * `details.reason: 'splits_tool_pair'` when it would split a tool call from its result(s) (see
   * {@link CompactInput.covered}); nothing is written then.
   */
  compact<S extends Message<unknown> = Message<unknown>>(sessionId: string, input: CompactInput<S>): Promise<CompactResult<S>>
  /** New content for a live message (same id). */
  revise(sessionId: string, messageId: string, payload: unknown, options?: ReviseOptions): Promise<ReviseResult>
  /** Marks a partial message final, optionally with its final content. */
  finalize(sessionId: string, messageId: string, payload?: unknown, options?: WriteOptions): Promise<ReviseResult>
  /** A new session continuing from `at`, sharing the message ids. */
  fork(sessionId: string, options: ForkOptions): Promise<SessionId>
  /** Every content version of every message, with status. */
  transcript(sessionId: string): Promise<Transcript>
  /** The fold of the session's log (for audits and tests). */
  state(sessionId: string, options?: LoadOptions): Promise<SessionState>
  /** Recomputes (or, with `verify`, checks) inline projections from the log. */
  rebuild(options?: RebuildOptions): Promise<RebuildResult>
  /**
   * GDPR erasure of one message: scrubs the content of every version of it, in this session and in
   * every other session of the tenant holding a copy (forks), and in its conflict evidence; appends a
   * `message_redacted` event to each session scrubbed. Views then show `redactedPayload(payload,
   * format)`, a placeholder of the message's format (tool-call pairing ids kept); ids, seqs, content
   * hashes and the chain stay verifiable. Idempotent.
   * Throws `SESSION_NOT_FOUND`, `UNKNOWN_MESSAGE` (not in the session).
   */
  redact(sessionId: string, messageId: string, options?: RedactOptions): Promise<RedactResult>
  /** Recorded `MESSAGE_CONFLICT` attempts for a session. */
  conflicts(sessionId: string): Promise<readonly ConflictRecord[]>
  /** Releases connections the store owns. Later calls throw `STORE_CLOSED`. */
  close(): Promise<void>

  // --- optional capabilities: a store that lacks one leaves it undefined; callers check before use ---

  /**
   * Optional. The largest batch `append` accepts (payload and envelope JSON text, UTF-16 code units):
   * a caller writing more in several appends splits by it (`splitByBatchBytes`).
   */
  readonly maxBatchBytes?: number
  /**
   * Optional. Runs `work` against a store bound to one transaction: what it writes commits when it
   * resolves and is rolled back when it throws (the error is rethrown). Use it to make several calls
   * all or nothing. The bound store is for `work` only; it does not take subscriptions.
   */
  atomically?<T>(work: (store: SessionStore) => Promise<T>): Promise<T>
  /**
   * Optional. Restores complete sessions exactly as another store recorded them (session ids, seqs,
   * event ids, types, message ids, content hashes, texts, `recordedAt`), in source order. The store
   * recomputes the chain link of every event it writes and refuses (`IMPORT_FAILED`, naming the
   * record's `line` and seq) one that differs from the source's; the links of events it already has
   * are checked too. Each session is all or nothing: sessions are written in batches, and a failing
   * batch is written again one session per transaction, so every session before the failing one is
   * committed and nothing after it is. Idempotent: events already stored (same seq, same link) are
   * skipped, and a longer log of a session extends it. Throws `MESSAGE_CONFLICT` (stored events
   * differ, or an original message belongs to another session), `SESSION_EXISTS` (other attributes),
   * `INVALID_INPUT` for malformed records. An error the source throws stops the import: the complete
   * sessions it yielded before are committed, then the earliest error in source order is thrown.
   * Content hashes are taken as given: verify them first when the source is not trusted (`importEvents`
   * of `@turnlog/audit` does).
   */
  importSessions?(
    sessions: AsyncIterable<ImportedSession> | Iterable<ImportedSession>,
    options?: ImportSessionsOptions,
  ): Promise<ImportSessionsResult>
}
