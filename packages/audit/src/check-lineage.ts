/**
 * The fork lineage of a session checked against its chained log. Neither the session line of an export
 * (`parent`) nor the session's row in the database (`getSession().parent`) is covered by any chain link,
 * but a fork's log begins with a `session_forked` event whose data (covered by the link of seq 1) names
 * the same parent, version and fork point: the store writes both from one `fork` call. A session line
 * or row that names another parent, another version or another fork point, or a fork without that
 * event, or a plain session with one, was edited.
 */

/** A session line's `parent`, or a session row's (`SessionInfo.parent`). */
export interface LineageParent {
  readonly sessionId: string
  readonly version: number
  readonly at: string
}

/** The fields of an event the check reads. */
export interface LineageEvent {
  readonly seq: unknown
  readonly type: unknown
  readonly data: unknown
}

/**
 * What is wrong, by kind: the lineage and the `session_forked` event name different parents
 * (`parent_mismatch`); a fork without its `session_forked` event at seq 1 (`missing_fork_event`); a
 * `session_forked` event in a session with no lineage (`unexpected_fork_event`); one at another seq
 * than 1 (`misplaced_fork_event`). The audit reports them as `evidence.problem` of `lineage_mismatch`.
 */
export type LineageProblemKind = 'parent_mismatch' | 'missing_fork_event' | 'unexpected_fork_event' | 'misplaced_fork_event'

/** One lineage problem: its kind, the explanation, and the parent the `session_forked` event names (if any). */
export interface LineageIssue {
  readonly problem: LineageProblemKind
  readonly text: string
  readonly event: LineageParent | null
}

function describeParent(p: LineageParent): string {
  return `${p.sessionId} at version ${p.version}, message ${p.at}`
}

/** The parent a `session_forked` event's data names (fields as stored, whatever their type). */
function eventParent(data: unknown): LineageParent {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>
  return { sessionId: d['parentSessionId'] as string, version: d['parentVersion'] as number, at: d['at'] as string }
}

/**
 * What is wrong with one event of a session given the parent its lineage (`subject`: the session line
 * of an export, or the session row) names, if anything: seq 1 of a fork must be its `session_forked`
 * event naming that parent, version and fork point; no other event may be one.
 */
export function lineageIssue(parent: LineageParent | null, e: LineageEvent, subject = 'the session line'): LineageIssue | undefined {
  if (e.type !== 'session_forked') {
    return e.seq === 1 && parent !== null
      ? {
          problem: 'missing_fork_event',
          text: `${subject} names a fork parent (${describeParent(parent)}) but seq 1 is ${JSON.stringify(e.type)}, not the session_forked event a fork begins with`,
          event: null,
        }
      : undefined
  }
  const named = eventParent(e.data)
  if (parent === null)
    return {
      problem: 'unexpected_fork_event',
      text: `seq ${String(e.seq)} is a session_forked event but ${subject} names no fork parent`,
      event: named,
    }
  if (e.seq !== 1)
    return {
      problem: 'misplaced_fork_event',
      text: `seq ${String(e.seq)} is a session_forked event; only seq 1 of a fork is`,
      event: named,
    }
  if (named.sessionId !== parent.sessionId || named.version !== parent.version || named.at !== parent.at) {
    return {
      problem: 'parent_mismatch',
      text: `${subject}'s fork parent (${describeParent(parent)}) is not the one its chained session_forked event names (${String(named.sessionId)} at version ${String(named.version)}, message ${String(named.at)})`,
      event: named,
    }
  }
  return undefined
}

/** {@link lineageIssue}'s explanation for a session line of an export, if anything is wrong. */
export function lineageProblem(parent: LineageParent | null, e: LineageEvent): string | undefined {
  return lineageIssue(parent, e)?.text
}

/** A fork (its lineage names a parent) with no events at all: a fork's log begins with `session_forked`. */
export function emptyForkIssue(parent: LineageParent | null, events: number, subject = 'the session line'): LineageIssue | undefined {
  return parent !== null && events === 0
    ? {
        problem: 'missing_fork_event',
        text: `${subject} names a fork parent (${describeParent(parent)}) but the session has no events (a fork begins with session_forked)`,
        event: null,
      }
    : undefined
}

/** {@link emptyForkIssue}'s explanation for a session line of an export, if anything is wrong. */
export function emptyForkProblem(parent: LineageParent | null, events: number): string | undefined {
  return emptyForkIssue(parent, events)?.text
}
