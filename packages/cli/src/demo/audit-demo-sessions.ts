import { audit, exitCodeFor, type Finding, type Severity } from '@turnlog/audit'
import type { Message, SessionStore } from '@turnlog/core'

/** The demo's audit result. */
export interface DemoAudit {
  /** True when no finding is at `warning` or over. */
  readonly ok: boolean
  /** One line for the timeline. */
  readonly summary: string
  readonly sessions: number
  readonly findings: readonly Finding[]
  readonly bySeverity: Readonly<Record<Severity, number>>
}

/**
 * Audits the demo's sessions with `@turnlog/audit`; the first one is also reconciled with the
 * runtime's in-memory live list (`live`), the check that catches an unflushed turn.
 */
export async function auditDemoSessions(store: SessionStore, sessions: readonly string[], live: readonly Message[]): Promise<DemoAudit> {
  const findings: Finding[] = []
  const bySeverity: Record<Severity, number> = { info: 0, warning: 0, error: 0, critical: 0 }
  let i = 0
  for (const sessionId of sessions) {
    const report = await audit(store, sessionId, i === 0 ? { live } : {})
    findings.push(...report.findings)
    for (const [s, n] of Object.entries(report.counts.bySeverity) as [Severity, number][]) bySeverity[s] += n
    i++
  }
  const ok = exitCodeFor({ findings }, 'warning') === 0
  const summary =
    `${sessions.length} session(s), the first also reconciled with the runtime's in-memory list: ` +
    (findings.length === 0
      ? '0 findings (0 lost, 0 duplicated, pairing ok, chain verified)'
      : `${findings.length} finding(s): ${findings.map((f) => `${f.severity} ${f.kind}`).join(', ')}`)
  return { ok, summary, sessions: sessions.length, findings, bySeverity }
}
