import type { RebuildMemoryResult } from './child.js'
import { runChild } from './run-child.js'
import { summarize, type Summary } from './stats.js'

/** Rebuild memory at one database size, from child processes (MiB, seconds). */
export interface RebuildMemory {
  readonly sessions: number
  readonly rssPeak: Summary
  readonly rssBefore: Summary
  readonly liveHeapPeak: Summary
  readonly seconds: Summary
}

/** Three child rebuilds measuring the resident set, three (with --expose-gc) the heap held: medians. */
export async function measureRebuildMemory(connectionString: string): Promise<RebuildMemory> {
  const plain: RebuildMemoryResult[] = []
  const collected: RebuildMemoryResult[] = []
  for (let i = 0; i < 3; i++) {
    plain.push(await runChild<RebuildMemoryResult>(['rebuild-memory', connectionString]))
    collected.push(await runChild<RebuildMemoryResult>(['rebuild-memory', connectionString], ['--expose-gc']))
  }
  return {
    sessions: plain[0]?.sessions ?? 0,
    rssPeak: summarize(plain.map((r) => r.rssPeak / 2 ** 20)),
    rssBefore: summarize(plain.map((r) => r.rssBefore / 2 ** 20)),
    liveHeapPeak: summarize(collected.map((r) => (r.liveHeapPeak ?? 0) / 2 ** 20)),
    seconds: summarize(plain.map((r) => r.seconds)),
  }
}
