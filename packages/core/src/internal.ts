/**
 * `@turnlog/core/internal`: building blocks the other turnlog packages (postgres, audit, hermes,
 * testing) share with core, outside the public API: input guards (`guardInput`, `parseInput`,
 * `checkOptions`, `checkKnownKeys`), the incremental projection (`StructureBuilder`, `newStructure`, `applyEvent`,
 * `projectionRows`; the one-shot spec `projectStructure` is public), `withApplyTo`, which stores use to
 * give a write's result its `applyTo`, `payloadContentHash` (the content hash with a caller's SHA-256: the
 * store's native one), `toolPairingOfDistinct` (the pairing of a list a store read, whose ids are
 * distinct), `checkCompactionPairing` / `compactionPairingSplits` (the tool pairs a compaction would
 * split: the rule `compact` refuses by, shared with the session model), `toFrozenJsonField` (a frozen JSON copy whose errors name the argument), `isIsoTimestamp` (a
 * timestamp string of a real date and time: every reader of one checks it so), and `ImportedSessionHead`, the checked attributes of an imported
 * session that the export-file reader and the import writer share. No stability promise: they change with the packages that use them.
 * Applications import `turnlog` (or `@turnlog/core`).
 * @packageDocumentation
 */
export { guardInput, parseInput } from './parse-input.js'
export { checkOptions } from './check-options.js'
export { checkKnownKeys, optionKeys } from './check-known-keys.js'
export { parseMessageIdArgument, parseSessionIdArgument, withField } from './id-arguments.js'
export { StructureBuilder, applyEvent, newStructure, projectionRows } from './project-structure.js'
export { withApplyTo } from './apply-to-live.js'
export { messageEnvelope, type EnvelopeSource } from './message-envelope.js'
export { payloadContentHash } from './content-hash.js'
export { toolPairingOfDistinct } from './tool-pairing.js'
export {
  checkCompactionPairing,
  compactionPairingSplits,
  type CompactionPairingInput,
  type CompactionPairingSplit,
} from './compaction-pairing.js'
export { toFrozenJsonField } from './json-value.js'
export type { ImportedSessionHead } from './imported-session-head.js'
export { isIsoTimestamp } from './is-iso-timestamp.js'
