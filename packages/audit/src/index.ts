/**
 * `@turnlog/audit`: invariant checks over a store (`audit`), chain verification, export and import of
 * event files, transcript reconciliation and import, reports. Line helpers of the export format are in
 * `@turnlog/audit/internal`.
 * @packageDocumentation
 */
export { verifyChain, type ChainBreak, type ChainBreakKind, type ChainVerification } from './verify-chain.js'
export { verifyExport } from './verify-export.js'
export { audit } from './audit.js'
export * from './audit-report.js'
export { renderFindingLine, renderReportText } from './render-report-text.js'
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportSessions,
  type ExportEndRecord,
  type ExportEventRecord,
  type ExportHeader,
  type ExportSelection,
  type ExportSessionRecord,
  type ExportSessionsOptions,
} from './export-sessions.js'
export { importEvents, type ImportEventsOptions, type ImportProgress, type ImportResult } from './import-events.js'
export { importTranscript, transcriptMessageId, type ImportTranscriptOptions, type ImportTranscriptResult } from './import-transcript.js'
