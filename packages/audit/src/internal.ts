/**
 * `@turnlog/audit/internal`: the export file's line helpers, shared with the tests and tools of the
 * workspace, outside the public API (no stability promise). Applications import `turnlog`.
 * @packageDocumentation
 */
export { BIDI_CONTROLS, isBidiControl } from './bidi-control.js'
export { exportedChainHash, toJsonLine } from './export-sessions.js'
export { numberedLines, type NumberedLine } from './numbered-lines.js'
