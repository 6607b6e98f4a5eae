import type {
  AppendResult,
  CompactResult,
  ConflictRecord,
  ImportSessionsResult,
  LoadResult,
  RebuildResult,
  RedactResult,
  ReviseResult,
  RewindResult,
  SessionId,
  SessionInfo,
  SessionPage,
  SessionState,
  SyncResult,
  Transcript,
} from '@turnlog/core'
import type { TelemetryAttributes } from './store-telemetry.js'

/**
 * What each store call's span says about its result (docs/operations.md, "Tracing and metrics").
 * `turnlog.messages.appended` and `turnlog.messages.duplicates` also feed the counters of those names.
 */
export const spanAttributes = {
  createSession: (id: SessionId): TelemetryAttributes => ({ 'gen_ai.conversation.id': id }),
  getSession: (info: SessionInfo): TelemetryAttributes => ({ 'turnlog.session.version': info.version }),
  sessions: (page: SessionPage): TelemetryAttributes => ({ 'turnlog.sessions.count': page.sessions.length }),
  append: (r: AppendResult): TelemetryAttributes => ({
    'turnlog.session.version': r.version,
    'turnlog.messages.appended': r.appended.length,
    'turnlog.messages.duplicates': r.duplicates.length,
  }),
  sync: (r: SyncResult): TelemetryAttributes => ({
    'turnlog.session.version': r.version,
    'turnlog.messages.appended': r.appended.length,
    'turnlog.messages.retracted': r.retracted.length,
    'turnlog.messages.revised': r.revised.length,
    'turnlog.messages.summary': r.compacted.reduce((n, c) => n + c.summary.length, 0),
  }),
  load: (r: LoadResult): TelemetryAttributes => ({ 'turnlog.session.version': r.version, 'turnlog.messages.count': r.messages.length }),
  state: (s: SessionState): TelemetryAttributes => ({ 'turnlog.session.version': s.version }),
  transcript: (t: Transcript): TelemetryAttributes => ({ 'turnlog.session.version': t.version, 'turnlog.entries.count': t.entries.length }),
  rewind: (r: RewindResult): TelemetryAttributes => ({
    'turnlog.session.version': r.version,
    'turnlog.messages.retracted': r.retracted.length,
  }),
  compact: (r: CompactResult): TelemetryAttributes => ({
    'turnlog.session.version': r.version,
    'turnlog.messages.summary': r.summary.length,
  }),
  revise: (r: ReviseResult): TelemetryAttributes => ({
    'turnlog.session.version': r.version,
    'turnlog.message.revision': r.revision,
    'turnlog.unchanged': r.unchanged,
  }),
  fork: (child: SessionId): TelemetryAttributes => ({ 'turnlog.fork.session_id': child }),
  rebuild: (r: RebuildResult): TelemetryAttributes => ({
    'turnlog.sessions.count': r.sessions,
    'turnlog.sessions.rewritten': r.rewritten,
    'turnlog.drift.count': r.drift.length,
  }),
  redact: (r: RedactResult): TelemetryAttributes => ({ 'turnlog.session.version': r.version, 'turnlog.sessions.count': r.sessions.length }),
  conflicts: (records: readonly ConflictRecord[]): TelemetryAttributes => ({ 'turnlog.conflicts.count': records.length }),
  importSessions: (r: ImportSessionsResult): TelemetryAttributes => ({
    'turnlog.sessions.count': r.sessions,
    'turnlog.events.written': r.eventsWritten,
  }),
  findSessionIds: (ids: SessionId[]): TelemetryAttributes => ({ 'turnlog.sessions.count': ids.length }),
  countConflicts: (n: number): TelemetryAttributes => ({ 'turnlog.conflicts.count': n }),
} as const
