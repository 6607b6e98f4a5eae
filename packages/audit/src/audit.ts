import {
  TurnlogError,
  foldSession,
  isTurnlogError,
  parseSessionId,
  type SessionInfo,
  type SessionState,
  type SessionStore,
  type StoredEvent,
} from '@turnlog/core'
import { checkKnownKeys, checkOptions, optionKeys, parseSessionIdArgument } from '@turnlog/core/internal'
import {
  AUDIT_CHECKS,
  FINDING_KINDS,
  countFindings,
  type AuditCheck,
  type AuditOptions,
  type AuditReport,
  type AuditTarget,
  type Finding,
  type FindingKind,
} from './audit-report.js'
import { chainFindings } from './findings/chain-findings.js'
import { clockFindings } from './findings/clock-findings.js'
import { conflictFindings } from './findings/conflict-findings.js'
import { foldFindings } from './findings/fold-findings.js'
import { liveDivergenceFindings } from './findings/live-divergence-findings.js'
import { duplicateFindings, pairingFindings, partialFindings, turnFindings } from './findings/live-view-findings.js'
import { lineageFindings } from './findings/lineage-findings.js'
import { SharedIdTracker } from './findings/shared-id-tracker.js'
import type { SessionAudit } from './findings/make-finding.js'
import { projectionFindings } from './findings/projection-findings.js'
import { syncFindings } from './findings/sync-findings.js'
import { parseTranscript, transcriptFindings, type ExternalMessage } from './findings/transcript-findings.js'
import { ChainVerifier } from './verify-chain.js'
import { checkStore } from './check-store.js'

/** Sessions per page when auditing `{ all: true }`. */
const PAGE_SIZE = 100

/** Every option of `audit`: a misspelt one (`chekcs`) is refused, never an audit run without it. */
const AUDIT_OPTIONS = optionKeys<AuditOptions>({ transcript: true, live: true, onProgress: true, checks: true })

const KIND_ORDER = new Map<FindingKind, number>((Object.keys(FINDING_KINDS) as FindingKind[]).map((k, i) => [k, i]))

function selectedChecks(options: AuditOptions): ReadonlySet<AuditCheck> {
  if (options.checks === undefined) return new Set(Object.keys(AUDIT_CHECKS) as AuditCheck[])
  if (!Array.isArray(options.checks)) throw new TurnlogError('INVALID_INPUT', 'checks must be an array of check names')
  for (const c of options.checks as readonly unknown[]) {
    // a non-string is named by its type: hasOwn and JSON.stringify throw on some (a bigint, a null-prototype object)
    if (typeof c !== 'string' || !Object.hasOwn(AUDIT_CHECKS, c)) {
      const name = typeof c === 'string' ? JSON.stringify(c) : `(a ${c === null ? 'null' : typeof c})`
      throw new TurnlogError('INVALID_INPUT', `unknown check ${name}; known: ${Object.keys(AUDIT_CHECKS).join(', ')}`, {
        details: { check: typeof c === 'string' ? c : name },
      })
    }
  }
  return new Set(options.checks)
}

/** Findings of one session: by first seq (findings without a seq last), then registry order. Stable. */
function sortFindings(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => {
      const sa = a.f.seqs[0] ?? Number.POSITIVE_INFINITY
      const sb = b.f.seqs[0] ?? Number.POSITIVE_INFINITY
      if (sa !== sb) return sa < sb ? -1 : 1
      const ka = KIND_ORDER.get(a.f.kind) ?? 0
      const kb = KIND_ORDER.get(b.f.kind) ?? 0
      return ka !== kb ? ka - kb : a.i - b.i
    })
    .map(({ f }) => f)
}

/** The messages a compaction event covers, with their content hashes (read defensively: malformed entries are left out). */
function coveredOf(e: StoredEvent): { id: string; contentHash: string | null }[] {
  // a malformed event is the fold's to report, not a reason to fail the audit
  if (e.type !== 'messages_compacted' || !Array.isArray(e.data.covered)) return []
  return e.data.covered.flatMap((c: unknown) => {
    if (typeof c !== 'object' || c === null || typeof (c as { id?: unknown }).id !== 'string') return []
    const hash = (c as { contentHash?: unknown }).contentHash
    return [{ id: (c as { id: string }).id, contentHash: typeof hash === 'string' ? hash : null }]
  })
}

/** Summary message ids placed by compactions, each with the ids it covers. */
function placedSummaries(events: readonly StoredEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const e of events) {
    if (e.type !== 'messages_compacted') continue
    const covered = coveredOf(e).map((c) => c.id)
    for (const id of Array.isArray(e.data.summary) ? e.data.summary : []) if (typeof id === 'string') out.set(id, covered)
  }
  return out
}

/**
 * The placed compaction summaries a fork inherited: its copies (`data.inheritedFrom`) of messages an
 * ancestor placed as a summary, each with the ids it covers (in the ancestor). A fork's copies carry
 * no mark of it, so the ancestors' logs are read, nearest first and each up to the version it was
 * forked at (keyset pages, only compactions and appends of the copies' ids kept), until every copy is
 * traced to the session that appended it. An ancestor that cannot be read (gone, another tenant's
 * under row level security) ends the walk: the copies left are judged as plain messages. Also returns
 * the messages those summaries cover, by id, with their content hashes (`covered`: the fork's log
 * never held them; a history transcript of the fork does).
 */
async function inheritedSummaries(
  store: SessionStore,
  sessionId: string,
  parent: SessionInfo['parent'],
  events: readonly StoredEvent[],
): Promise<{ summaries: Map<string, string[]>; covered: Map<string, string> }> {
  const out = new Map<string, string[]>()
  const coveredHashes = new Map<string, string>()
  const pending = new Set<string>()
  for (const e of events) {
    if (e.type === 'message_appended' && typeof e.data.inheritedFrom === 'string' && typeof e.messageId === 'string')
      pending.add(e.messageId)
  }
  const visited = new Set<string>([sessionId])
  let at = parent
  while (at !== null && pending.size > 0 && !visited.has(at.sessionId)) {
    visited.add(at.sessionId)
    const compactions: StoredEvent[] = []
    const appendedHere: string[] = []
    let next: SessionInfo['parent']
    try {
      for await (const e of store.events(at.sessionId, { toSeq: at.version })) {
        if (e.type === 'messages_compacted') compactions.push(e)
        // an original append (a summary's too): the trace of this id ends here
        else if (e.type === 'message_appended' && e.data.inheritedFrom === undefined && pending.has(e.messageId))
          appendedHere.push(e.messageId)
      }
      next = (await store.getSession(at.sessionId)).parent
    } catch (error) {
      if (isTurnlogError(error, 'SESSION_NOT_FOUND')) break
      throw error
    }
    for (const [id, covered] of placedSummaries(compactions)) if (pending.has(id)) out.set(id, covered)
    for (const e of compactions) {
      if (e.type !== 'messages_compacted') continue
      const summary: unknown[] = Array.isArray(e.data.summary) ? e.data.summary : []
      if (!summary.some((id) => typeof id === 'string' && out.has(id))) continue
      for (const c of coveredOf(e)) if (c.contentHash !== null) coveredHashes.set(c.id, c.contentHash)
    }
    for (const id of appendedHere) pending.delete(id)
    at = next
  }
  return { summaries: out, covered: coveredHashes }
}

/** Audits one session: reads its events once, then runs the selected checks on them. */
async function auditSession(
  store: SessionStore,
  sessionId: string,
  checks: ReadonlySet<AuditCheck>,
  transcript: readonly ExternalMessage[] | undefined,
  options: AuditOptions,
  sharedIds: SharedIdTracker | null,
): Promise<Finding[]> {
  const before = await store.getSession(sessionId)
  const verifier = new ChainVerifier(sessionId)
  const events: StoredEvent[] = []
  for await (const e of store.events(sessionId)) {
    verifier.push(e)
    events.push(e)
  }
  const after = await store.getSession(sessionId)
  const chain = verifier.finish(before.version, after.version)

  let state: SessionState | null = null
  let foldError: unknown = null
  try {
    state = foldSession(events)
  } catch (error) {
    foldError = error
  }
  let audit: SessionAudit = {
    sessionId,
    parentSessionId: before.parent?.sessionId ?? null,
    tenantId: before.tenantId,
    events,
    bySeq: new Map(events.map((e) => [e.seq, e])),
    state,
    summaries: placedSummaries(events),
    inheritedCovered: new Map(),
  }
  // a fork's inherited live list is judged like its parent's: the summaries the parent placed count here too
  if (state !== null && before.parent !== null && (checks.has('turns') || (checks.has('transcript') && transcript !== undefined))) {
    const inherited = await inheritedSummaries(store, sessionId, before.parent, events)
    if (inherited.summaries.size > 0)
      audit = { ...audit, summaries: new Map([...inherited.summaries, ...audit.summaries]), inheritedCovered: inherited.covered }
  }

  const findings: Finding[] = []
  if (checks.has('chain')) findings.push(...chainFindings(audit, chain))
  if (checks.has('lineage')) findings.push(...lineageFindings(audit, before.parent))
  if (checks.has('fold')) findings.push(...foldFindings(audit, foldError))
  // the projection check compares with the same fold: when the log cannot be folded, the fold_anomaly says so
  if (checks.has('projection') && state !== null) {
    const { drift } = await store.rebuild({ sessionId, verify: true })
    findings.push(...projectionFindings(audit, drift))
  }
  if (state !== null) {
    if (checks.has('pairing')) findings.push(...pairingFindings(audit, state))
    if (checks.has('duplicates')) findings.push(...duplicateFindings(audit, state))
    if (checks.has('turns')) findings.push(...turnFindings(audit, state))
    if (checks.has('partials')) findings.push(...partialFindings(audit, state))
    if (checks.has('transcript') && transcript !== undefined) findings.push(...transcriptFindings(audit, state, transcript))
    if (checks.has('live') && options.live !== undefined) findings.push(...liveDivergenceFindings(audit, state, options.live))
  }
  // data of the log itself: needs no fold, so a log that cannot be folded is still checked
  if (checks.has('clock')) findings.push(...clockFindings(audit))
  if (checks.has('conflicts')) findings.push(...conflictFindings(audit, await store.conflicts(sessionId)))
  if (checks.has('sync')) findings.push(...syncFindings(audit))
  if (sharedIds !== null) findings.push(...sharedIds.check(audit))
  return sortFindings(findings)
}

/**
 * Audits one session, or every session of the store (`{ all: true }`, paged, one session's events in
 * memory at a time), and returns a report of findings: tampering and lost events (the chain),
 * a fork lineage edited in the session row, projection drift, fold anomalies, tool-call pairing, duplicated live copies, lost replies,
 * unfinished streams, clocks that went backwards, refused conflicting writes, messages `sync` retracted (info) and (with `{ all: true }`) ids shared by two
 * sessions; with `options.transcript` / `options.live` (one session only), the differences from an
 * external transcript or from the agent's in-memory list. The registry {@link FINDING_KINDS} lists
 * every kind. An audit never writes.
 *
 * Throws `SESSION_NOT_FOUND` for an unknown session, `INVALID_INPUT` for bad options or a malformed
 * transcript, and for a key that is not an option (`details.field` naming it: `options.chekcs`, with
 * `details.suggestion` when an option is near) or not `all` in the `{ all: true }` target.
 * @example
 * ```ts
 * const report = await audit(store, { all: true })
 * if (exitCodeFor(report, 'error') !== 0) console.log(renderReportText(report))
 * ```
 */
export async function audit(store: SessionStore, target: AuditTarget, options: AuditOptions = {}): Promise<AuditReport> {
  checkStore(store, ['getSession', 'events', 'sessions', 'conflicts', 'rebuild'])
  checkOptions(options, 'audit options', AUDIT_OPTIONS)
  const checks = selectedChecks(options)
  const all = typeof target === 'object' && target !== null && (target as { all?: unknown }).all === true
  if (!all && typeof target !== 'string') throw new TurnlogError('INVALID_INPUT', 'target must be a session id or { all: true }')
  // `{ all: true, tenantId }` would audit every tenant's sessions: the target has no other key
  if (all) checkKnownKeys(target as object, ['all'], 'target', 'audit')
  if (all && (options.transcript !== undefined || options.live !== undefined)) {
    throw new TurnlogError('INVALID_INPUT', 'transcript and live compare with one session; give a session id, not { all: true }')
  }
  if (options.live !== undefined && !Array.isArray(options.live))
    throw new TurnlogError('INVALID_INPUT', 'live must be an array of messages')
  const transcript = options.transcript === undefined ? undefined : parseTranscript(options.transcript)

  const sharedIds = all && checks.has('identity') ? new SharedIdTracker() : null
  const findings: Finding[] = []
  let done = 0
  const visit = async (sessionId: string, total: number | null): Promise<void> => {
    findings.push(...(await auditSession(store, sessionId, checks, transcript, options, sharedIds)))
    done++
    options.onProgress?.({ done, total, sessionId })
  }
  if (all) {
    let after: string | undefined
    for (;;) {
      const page = await store.sessions({ limit: PAGE_SIZE, ...(after === undefined ? {} : { after }) })
      for (const s of page.sessions) await visit(s.sessionId, null)
      if (page.next === null) break
      after = page.next
    }
  } else {
    await visit(parseSessionIdArgument(target, 'target'), 1)
  }
  return {
    formatVersion: 1,
    generatedAt: new Date().toISOString(),
    target: all ? { all: true } : parseSessionId(target),
    sessionsAudited: done,
    findings,
    counts: countFindings(findings),
  }
}
