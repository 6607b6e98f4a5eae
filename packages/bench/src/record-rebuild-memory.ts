import type { RebuildMemory } from './measure-rebuild-memory.js'
import { record } from './record.js'
import type { Summary } from './stats.js'

/** Rebuild memory at two database sizes: the heap held after GC (flat is the goal) and the peak resident set (reported). */
export function recordRebuildMemory(small: RebuildMemory, large: RebuildMemory): void {
  const n = (s: Summary): string => s.median.toFixed(0)
  record({
    workload: `rebuild memory held: peak heap after GC, at ${large.sessions} sessions vs at ${small.sessions}`,
    unit: 'MiB',
    turnlog: large.liveHeapPeak,
    baseline: small.liveHeapPeak,
    baselineName: `at ${small.sessions} sessions`,
    goal: '≤ 1.2× (flat)',
    goalRatio: 1.2,
    higherIsBetter: false,
    notes: `child processes with --expose-gc, a collection every 10 sessions; medians of 3`,
  })
  record({
    workload: `rebuild peak RSS, at ${large.sessions} sessions vs at ${small.sessions}`,
    unit: 'MiB',
    turnlog: large.rssPeak,
    baseline: small.rssPeak,
    baselineName: `at ${small.sessions} sessions`,
    goal: 'reported',
    goalRatio: null,
    higherIsBetter: false,
    notes: `child processes, medians of 3; RSS before the rebuild ${n(small.rssBefore)} / ${n(large.rssBefore)} MiB; rebuild ${small.seconds.median.toFixed(1)} / ${large.seconds.median.toFixed(1)} s. The resident set follows V8's heap sizing (it grows while allocation is fast, whatever is still in use), so it moves from run to run`,
  })
}
