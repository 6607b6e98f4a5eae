import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { SEVERITIES, type AuditReport, type Finding } from './audit-report.js'
import { BIDI_CONTROLS } from './bidi-control.js'

/** Seqs as ranges: `[3,4,5,9]` → `3-5,9`. */
function seqRanges(seqs: readonly number[]): string {
  const parts: string[] = []
  let i = 0
  while (i < seqs.length) {
    const start = seqs[i] as number
    let end = start
    while (i + 1 < seqs.length && seqs[i + 1] === end + 1) end = seqs[++i] as number
    parts.push(start === end ? String(start) : `${start}-${end}`)
    i++
  }
  return parts.join(',')
}

/**
 * Keeps a terminal line a line: control characters (C0, C1), line/paragraph separators and every bidi
 * control (Unicode's Bidi_Control: the overrides, embeddings, isolates and the marks LRM, RLM and ALM,
 * which can make text display in another order than it is) become spaces or are removed.
 */
function safe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(BIDI_CONTROLS, '')
}

/** One line for a finding: severity, kind, session, seqs, explanation. */
export function renderFindingLine(f: Finding): string {
  if (typeof f !== 'object' || f === null)
    throw new TurnlogError('INVALID_INPUT', 'renderFindingLine needs a finding', { details: { field: 'finding' } })
  return guardInput('finding', () => findingLine(f))
}

function findingLine(f: Finding): string {
  const seqs = f.seqs.length === 0 ? '-' : seqRanges(f.seqs)
  return `${f.severity.toUpperCase().padEnd(8)} ${f.kind} session=${f.sessionId} seq=${seqs}: ${safe(f.explanation)}`
}

/**
 * The report as readable text: a header line with the counts, then one line per finding
 * (`SEVERITY kind session=… seq=…: explanation`), or `no findings`. The stable machine form is the
 * report object itself as JSON (`formatVersion: 1`, see docs/audit.md).
 */
export function renderReportText(report: AuditReport): string {
  if (typeof report !== 'object' || report === null)
    throw new TurnlogError('INVALID_INPUT', 'renderReportText needs an audit report', { details: { field: 'report' } })
  return guardInput('report', () => reportText(report))
}

function reportText(report: AuditReport): string {
  const target = typeof report.target === 'string' ? `session ${report.target}` : 'all sessions'
  const bySeverity = [...SEVERITIES]
    .reverse()
    .map((s) => `${report.counts.bySeverity[s]} ${s}`)
    .join(', ')
  const n = report.findings.length
  const header = `turnlog audit of ${target}: ${report.sessionsAudited} session(s), ${n} finding(s) (${bySeverity}) at ${report.generatedAt}`
  const lines = [header]
  if (n === 0) lines.push('no findings')
  else for (const f of report.findings) lines.push(renderFindingLine(f))
  return lines.join('\n') + '\n'
}
