/** @packageDocumentation */
export { verifyChain, type ChainBreak, type ChainBreakKind, type ChainVerification } from './verify-chain.js'
export { verifyExport } from './verify-export.js'
export { audit } from './audit.js'
export {
  AUDIT_CHECKS,
  FINDING_KINDS,
  SEVERITIES,
  countFindings,
  exitCodeFor,
  severityAtLeast,
  type AuditCheck,
  type AuditCounts,
  type AuditOptions,
  type AuditProgress,
  type AuditReport,
  type AuditTarget,
  type Finding,
  type FindingKind,
  type FindingKindInfo,
  type Severity,
} from './audit-report.js'
export { renderFindingLine, renderReportText } from './render-report-text.js'
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportSessions,
  exportedChainHash,
  toJsonLine,
  type ExportEndRecord,
  type ExportEventRecord,
  type ExportHeader,
  type ExportSelection,
  type ExportSessionRecord,
  type ExportSessionsOptions,
} from './export-sessions.js'
export { importEvents, numberedLines, type ImportEventsOptions, type ImportProgress, type ImportResult, type NumberedLine } from './import-events.js'
export { importTranscript, transcriptMessageId, type ImportTranscriptOptions, type ImportTranscriptResult } from './import-transcript.js'
