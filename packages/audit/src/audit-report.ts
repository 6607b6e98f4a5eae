import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import type { Message } from '@turnlog/core'

/** How bad a finding is, from least to most severe. */
export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const

/**
 * `info`: worth knowing, nothing is wrong. `warning`: likely a runtime bug or an interrupted turn; no
 * data lost. `error`: the conversation the model sees is wrong (duplicates, unpaired tools, drift).
 * `critical`: history was lost or changed (tampering, deleted events, a turn missing from the log).
 */
export type Severity = (typeof SEVERITIES)[number]

/** True when severity `a` is at least as severe as `b`. */
export function severityAtLeast(a: Severity, b: Severity): boolean {
  for (const [field, s] of [
    ['a', a],
    ['b', b],
  ] as const) {
    if (!SEVERITIES.includes(s))
      throw new TurnlogError('INVALID_INPUT', `${field} must be one of ${SEVERITIES.join(', ')}`, { details: { field } })
  }
  return SEVERITIES.indexOf(a) >= SEVERITIES.indexOf(b)
}

/**
 * The check groups {@link AuditOptions.checks} can select. Each finding kind belongs to one group.
 * `transcript` and `live` run only when their input (`options.transcript`, `options.live`) is given.
 */
export const AUDIT_CHECKS = {
  chain: 'hash chain, seqs, content hashes and version (the same checks as verifyChain)',
  lineage: "the session row's fork lineage against its chained session_forked event",
  projection: 'inline projection against the fold of the log (store.rebuild({ verify: true }))',
  fold: 'events the fold could not apply as written',
  pairing: 'tool-call pairing of the live view',
  duplicates: 'the same content live more than once under different ids',
  turns: 'user messages with no assistant reply between them',
  partials: 'live messages still marked partial (streaming never finished)',
  clock: 'message createdAt going backwards in log order',
  conflicts: 'recorded MESSAGE_CONFLICT attempts',
  sync: "messages sync retracted because the caller's list no longer held them",
  identity: 'message ids appended in two sessions without a fork (only with { all: true })',
  transcript: 'reconciliation with an external transcript (options.transcript)',
  live: "reconciliation with the agent's in-memory list (options.live)",
} as const

/** A check group name. */
export type AuditCheck = keyof typeof AUDIT_CHECKS

/** What the registry says about one finding kind. */
export interface FindingKindInfo {
  /** The severity findings of this kind get unless the kind documents otherwise (`variable`). */
  readonly severity: Severity
  /** The check group that produces it. */
  readonly check: AuditCheck
  /** What it means. */
  readonly description: string
  /** The incident it is the evidence of. */
  readonly incident: string
  /** True when single findings may carry another severity than the default (documented per kind). */
  readonly variable?: true
}

/**
 * The registry of finding kinds: default severity, check group, meaning and the incident each one
 * signals. {@link FindingKind} is derived from it, and `docs/audit.md` is tested against it, so code
 * and docs cannot drift. Kinds are never renamed or reused.
 */
export const FINDING_KINDS = {
  chain_break: {
    severity: 'critical',
    check: 'chain',
    description:
      'An event does not hash to its stored chain link, or a redaction does not check out (a scrubbed payload without its record).',
    incident:
      'The event (or the stored hash before it) was changed after it was written, or a redaction was forged or undone: tampering or storage corruption.',
  },
  content_hash_mismatch: {
    severity: 'critical',
    check: 'chain',
    description: "A message event's payload does not hash to its stored content hash.",
    incident: 'The stored bytes of a message were rewritten outside the store.',
  },
  seq_gap: {
    severity: 'critical',
    check: 'chain',
    description: 'Seqs are missing between two stored events, or at the head of the log.',
    incident: 'Events were deleted from the middle (or the start) of the log.',
  },
  seq_duplicate: {
    severity: 'critical',
    check: 'chain',
    description: 'Two events carry the same seq, or seqs go backwards.',
    incident: 'The log was written around the store (an import or a copy without its keys).',
  },
  truncated_log: {
    severity: 'critical',
    check: 'chain',
    description: "The session's version is beyond the last stored event.",
    incident: 'Events were deleted from the tail of the log (the last turns are gone).',
  },
  version_mismatch: {
    severity: 'critical',
    check: 'chain',
    description: "Events exist beyond the session's version.",
    incident: 'Events were inserted around the store (raw SQL): the chain trigger linked them, the version was not moved.',
  },
  lineage_mismatch: {
    severity: 'critical',
    check: 'lineage',
    description:
      "The session row's fork lineage (parent session, parent version, fork point) is not the one its chained session_forked event names, " +
      'or the row names a parent and the log does not begin with session_forked, or the row names none and the log has one.',
    incident:
      'The sessions row was edited after the fact (raw SQL): the fork now claims another parent or fork point than it was made from, or a plain session claims to be a fork (or a fork not to be one). The chain covers the event, not the row.',
  },
  projection_drift: {
    severity: 'error',
    check: 'projection',
    description: 'The inline projection (turnlog.live_messages) differs from the fold of the log.',
    incident:
      'The projection table was edited, or a projection bug: load() returns another list than the log says. Repair with store.rebuild().',
  },
  fold_anomaly: {
    severity: 'error',
    check: 'fold',
    description: 'An event the fold could not apply as written (unknown message, not live, duplicate append, unknown type).',
    incident: 'An event names a message that does not exist or is no longer live: a writer around the store, or a store bug.',
  },
  unanswered_tool_call: {
    severity: 'warning',
    check: 'pairing',
    description: 'A live assistant tool call has no tool result after it.',
    incident: 'An interrupt or a crash between the call and its result; providers reject the request until the wire view repairs it.',
  },
  orphan_tool_result: {
    severity: 'error',
    check: 'pairing',
    description: 'A live tool result answers no earlier tool call.',
    incident:
      'The call was dropped (a repair, a compaction that split the pair) or the result was written before its call (wall-clock ordering).',
  },
  duplicate_tool_result: {
    severity: 'error',
    check: 'pairing',
    description: 'Several live tool results answer one tool call id.',
    incident: 'A retried tool or a re-inserted transcript wrote the result twice; providers reject the request.',
  },
  duplicate_tool_call: {
    severity: 'error',
    check: 'pairing',
    description: 'One tool call id is opened more than once in the live view.',
    incident:
      'Two tool calls with one id in one assistant message, a later message that calls the id again before any result answered it, ' +
      'or an AI SDK UI tool part still open beside the answered part of the same call; providers reject the request until the wire view repairs it.',
  },
  reused_tool_call_id: {
    severity: 'warning',
    check: 'pairing',
    description: 'A live tool call id is called again after a result answered its earlier call: a new call under the same id.',
    incident:
      'A provider or runtime that numbers its tool calls per turn (call_0 each time), or a re-inserted transcript (then also live_duplicate_copy). ' +
      'Each call pairs with the results after it; providers that want every id once in a request (Anthropic) reject it until the wire view renames the later calls.',
  },
  live_duplicate_copy: {
    severity: 'error',
    check: 'duplicates',
    variable: true,
    description: 'The same content (role, content, tool_call_id: one content hash) is live more than once under different message ids.',
    incident:
      'A runtime re-inserted its transcript (a lost "already written" marker, #92231), or a platform redelivery without a stable id. ' +
      'Error when a copy carries tool calls, is a tool result or a system message (their ids make a repeat impossible); warning for plain text, which a user may repeat.',
  },
  consecutive_user_messages: {
    severity: 'warning',
    check: 'turns',
    description: 'Two user messages in the live view with no assistant message between them.',
    incident: 'The reply to the first one was lost (a late flush, a crash before the write), or a redelivered inbound message.',
  },
  partial_never_finalized: {
    severity: 'warning',
    check: 'partials',
    description: 'A live message is still marked partial: its stream was never finalized.',
    incident: 'The process died or disconnected mid-stream; the user may have seen more than the log holds.',
  },
  clock_regression: {
    severity: 'warning',
    check: 'clock',
    description: "A message's createdAt is earlier than that of the message entered just before it in log (seq) order.",
    incident:
      "The writer's wall clock went backwards (an NTP step, a VM restored from a snapshot, hosts with skewed clocks), a runtime timestamped messages itself, or a message created earlier was appended after a later one (two writers racing on the session, a message held back before its append); order is the log's, the times are out of it.",
  },
  message_conflict_attempt: {
    severity: 'warning',
    check: 'conflicts',
    description: 'A write tried to store other content under a known message id (or an id of another session) and was refused.',
    incident:
      'A message edited in place without revise() (#92881), a copied id, or two runtimes sharing ids; the caller got MESSAGE_CONFLICT.',
  },
  sync_retraction: {
    severity: 'info',
    check: 'sync',
    description: "sync retracted live messages because the caller's list no longer held them (a messages_retracted event marked sync).",
    incident:
      'A runtime that keeps its list as its state dropped messages (a deliberate edit, a trimmed context, or a bug that lost them); no rewind was asked for.',
  },
  shared_message_id: {
    severity: 'error',
    check: 'identity',
    description: 'One message id was appended (not inherited through a fork) in two sessions.',
    incident:
      'Two writers put the same new id into two sessions in the same instant (the cross-session check is exact only for sequential writers), or a runtime that shares ids between conversations.',
  },
  lost_turn: {
    severity: 'critical',
    check: 'transcript',
    variable: true,
    description: 'The transcript has a message the log never stored (error when the log has the id but never that content).',
    incident: 'A late flush, a crash, a skipped write (#50372, #46053): the user saw a turn the log does not have.',
  },
  unexpected_message: {
    severity: 'error',
    check: 'transcript',
    variable: true,
    description:
      'The log has a live message the transcript does not (info for system and developer messages, which transcripts often omit).',
    incident: 'A duplicate write, an injected message, or a transcript that lost a turn on its side.',
  },
  order_mismatch: {
    severity: 'error',
    check: 'transcript',
    description: 'Messages the transcript and the live view share are in another order.',
    incident: 'Ordering by wall clock instead of the log sequence, or a reordering repair in the runtime.',
  },
  live_divergence: {
    severity: 'error',
    check: 'live',
    variable: true,
    description:
      "The agent's in-memory list and the log's live view disagree: a message only in memory (error), only in the log (warning), " +
      'with other content (error), no longer live in the log (error), or in another order (error).',
    incident: 'An unflushed turn, an in-place edit the log never saw (#92881), or a runtime repair of its list that the log does not know.',
  },
} as const satisfies Record<string, FindingKindInfo>

/** A finding kind: a key of {@link FINDING_KINDS}. */
export type FindingKind = keyof typeof FINDING_KINDS

/** One problem the audit found, located by session, seqs, event ids and message ids. */
export interface Finding {
  readonly kind: FindingKind
  readonly severity: Severity
  readonly sessionId: string
  /** The messages involved (may be empty). */
  readonly messageIds: readonly string[]
  /** The seqs of the events involved, ascending (may be empty). */
  readonly seqs: readonly number[]
  /** The events involved (may be empty). */
  readonly eventIds: readonly string[]
  /** One line for humans. */
  readonly explanation: string
  /** Machine-readable details, JSON-serialisable; the shape depends on the kind (see docs/audit.md). */
  readonly evidence?: Readonly<Record<string, unknown>>
}

/** What an audit covered: one session, or every session of the store. */
export type AuditTarget = string | { readonly all: true }

/** Progress of an audit, after each session. */
export interface AuditProgress {
  readonly done: number
  /** Sessions to audit, or null when unknown (`{ all: true }` pages through the store). */
  readonly total: number | null
  readonly sessionId: string
}

/** Options of `audit`. */
export interface AuditOptions {
  /**
   * An external transcript of the session to reconcile with the log: turnlog JSONL objects
   * (`{ id, payload, … }`, or their serialized text), or provider messages (`{ role, content, … }`)
   * with or without an `id`. One session only.
   */
  readonly transcript?: readonly unknown[]
  /** The agent's in-memory live list, to compare with the log's live view. One session only. */
  readonly live?: readonly Message[]
  /** Called after each session. */
  readonly onProgress?: (progress: AuditProgress) => void
  /** The check groups to run; default all (`transcript` and `live` only with their input). */
  readonly checks?: readonly AuditCheck[]
}

/** Finding counts of a report. */
export interface AuditCounts {
  /** Every severity, zero included. */
  readonly bySeverity: Readonly<Record<Severity, number>>
  /** Kinds that occur, in registry order. */
  readonly byKind: Readonly<Partial<Record<FindingKind, number>>>
}

/**
 * The audit report. Its JSON form (`JSON.stringify(report)`) is stable: `formatVersion` changes only
 * when a field changes meaning or goes away; new fields and finding kinds may be added within a version.
 */
export interface AuditReport {
  readonly formatVersion: 1
  /** ISO-8601 time the audit finished. */
  readonly generatedAt: string
  readonly target: AuditTarget
  readonly sessionsAudited: number
  /** Grouped by session (in audit order), then by first seq. */
  readonly findings: readonly Finding[]
  readonly counts: AuditCounts
}

/** Counts findings by severity (every severity present) and by kind (registry order). */
export function countFindings(findings: readonly Finding[]): AuditCounts {
  if (!guardInput('findings', () => Array.isArray(findings)))
    throw new TurnlogError('INVALID_INPUT', 'findings must be an array of findings', { details: { field: 'findings' } })
  return guardInput('findings', () => countOf(findings))
}

function countOf(findings: readonly Finding[]): AuditCounts {
  const bySeverity: Record<Severity, number> = { info: 0, warning: 0, error: 0, critical: 0 }
  const kinds = new Map<FindingKind, number>()
  for (const f of findings) {
    bySeverity[f.severity]++
    kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1)
  }
  const byKind: Partial<Record<FindingKind, number>> = {}
  for (const kind of Object.keys(FINDING_KINDS) as FindingKind[]) {
    const n = kinds.get(kind)
    if (n !== undefined) byKind[kind] = n
  }
  return { bySeverity, byKind }
}

/**
 * The process exit code for a report: 0 when no finding reaches `failOn`, else 1 (the CLI's
 * `--fail-on`).
 */
export function exitCodeFor(report: Pick<AuditReport, 'findings'>, failOn: Severity): 0 | 1 {
  const findings = guardInput('report', () => (typeof report === 'object' && report !== null ? report.findings : undefined))
  if (!Array.isArray(findings))
    throw new TurnlogError('INVALID_INPUT', 'report must be an audit report (with findings)', { details: { field: 'report' } })
  // checked whatever the findings: a clean report must not pass a threshold that is no severity
  if (!SEVERITIES.includes(failOn))
    throw new TurnlogError('INVALID_INPUT', `failOn must be one of ${SEVERITIES.join(', ')}`, { details: { field: 'failOn' } })
  return guardInput('report', () => findings.some((f: Finding) => severityAtLeast(f.severity, failOn))) ? 1 : 0
}
