import type { PersistenceScore } from './score-persistence.js'
import type { DemoAudit } from './audit-demo-sessions.js'

/** One line of the demo's timeline. */
export interface DemoStep {
  readonly n: number
  /** A short label: `turn`, `tool calls`, `rewind`, `SIGKILL`, … */
  readonly action: string
  /** What happened, with shortened ids. */
  readonly detail: string
  /** The session version after the step (null when the step wrote nothing). */
  readonly version: number | null
}

/** turnlog's side of the demo's score, read back from the database. */
export interface TurnlogScore extends PersistenceScore {
  /** True when `load()` returns exactly the runtime's in-memory live list (ids, order, content). */
  readonly liveMatches: boolean
  /** True when the fork's live list is the parent's list up to the fork point plus the fork's own turn. */
  readonly forkMatches: boolean
}

/** The machine summary `turnlog demo --json` prints. */
export interface DemoSummary {
  readonly database: { readonly kind: 'postgres' | 'embedded'; readonly where: string; readonly kept: boolean }
  readonly sessionId: string
  readonly forkSessionId: string
  readonly steps: readonly DemoStep[]
  readonly turnlog: TurnlogScore & { readonly events: number; readonly liveCount: number }
  readonly audit: DemoAudit
  readonly cursorPersister: PersistenceScore & {
    readonly rows: number
    /** How many messages a resume from the naive table would replay (the correct live list: `correctLiveCount`). */
    readonly resumeCount: number
    readonly correctLiveCount: number
  }
  /** What each message of the script is (id → label), to read the id lists. */
  readonly labels: Readonly<Record<string, string>>
  /** True when turnlog lost, duplicated and staled nothing and the audit found nothing at error or over. */
  readonly ok: boolean
  readonly durationMs: number
}
