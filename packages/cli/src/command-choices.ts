import type { Severity } from '@turnlog/audit'
import { EVENT_TYPES, type EventType } from '@turnlog/core'

/**
 * The choices of the CLI's enumerated options, kept in this light module so that building the command
 * tree (and `--help`) loads no database or audit code; each command's module is imported when it runs.
 */

/** The views `turnlog replay` can show. */
export const REPLAY_VIEWS = ['live', 'transcript', 'wire'] as const

/** A replay view. */
export type ReplayView = (typeof REPLAY_VIEWS)[number]

/** The severities `--fail-on` accepts, least severe first (the audit's `SEVERITIES`). */
export const AUDIT_SEVERITIES = ['info', 'warning', 'error', 'critical'] as const satisfies readonly Severity[]

// compile-time check that no severity of the audit is missing here
const everySeverity: Record<Severity, true> = { info: true, warning: true, error: true, critical: true }
void everySeverity

/** The formats `turnlog import` reads. */
export const IMPORT_FORMATS = ['turnlog', 'openai-jsonl', 'hermes'] as const

/** An import format. */
export type ImportFormat = (typeof IMPORT_FORMATS)[number]

/** Where a new `turnlog tail` subscription starts. */
export const TAIL_STARTS = ['start', 'now'] as const

/** A `turnlog tail --from` value. */
export type TailStart = (typeof TAIL_STARTS)[number]

/** The event types `turnlog tail --types` takes, for its help: the library's `EVENT_TYPES` (core is light to load). */
export const EVENT_TYPE_NAMES: readonly EventType[] = EVENT_TYPES
