/**
 * The fork lineage of a session line checked against its chained log. The session line of an export
 * (`parent`) is not covered by any chain link, but a fork's log begins with a `session_forked` event
 * whose data (covered by the link of seq 1) names the same parent, version and fork point: the store
 * writes both from one `fork` call. A file whose session line names another parent, another version
 * or another fork point, or a fork without that event, was edited.
 */

/** A session line's `parent`. */
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

function describeParent(p: LineageParent): string {
  return `${p.sessionId} at version ${p.version}, message ${p.at}`
}

/**
 * What is wrong with one event of a session given the parent its session line names, if anything:
 * seq 1 of a fork must be its `session_forked` event naming that parent, version and fork point; no
 * other event may be one.
 */
export function lineageProblem(parent: LineageParent | null, e: LineageEvent): string | undefined {
  if (e.type !== 'session_forked') {
    return e.seq === 1 && parent !== null
      ? `the session line names a fork parent (${describeParent(parent)}) but seq 1 is ${JSON.stringify(e.type)}, not the session_forked event a fork begins with`
      : undefined
  }
  if (parent === null) return `seq ${String(e.seq)} is a session_forked event but the session line names no fork parent`
  if (e.seq !== 1) return `seq ${String(e.seq)} is a session_forked event; only seq 1 of a fork is`
  const d = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as Record<string, unknown>
  if (d['parentSessionId'] !== parent.sessionId || d['parentVersion'] !== parent.version || d['at'] !== parent.at) {
    return `the session line's fork parent (${describeParent(parent)}) is not the one its chained session_forked event names (${String(d['parentSessionId'])} at version ${String(d['parentVersion'])}, message ${String(d['at'])})`
  }
  return undefined
}

/** A fork's session line with no events at all: a fork's log begins with `session_forked`. */
export function emptyForkProblem(parent: LineageParent | null, events: number): string | undefined {
  return parent !== null && events === 0
    ? `the session line names a fork parent (${describeParent(parent)}) but the session has no events (a fork begins with session_forked)`
    : undefined
}
