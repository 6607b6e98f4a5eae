/** Summary of repeated measurements. */
export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly runs: readonly number[]
}

/** Median, min and max of `values`. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const median = sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
  return { median, min: sorted[0] ?? 0, max: sorted[sorted.length - 1] ?? 0, runs: values }
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return 0
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i] ?? 0
}

/** Runs `tasks` with at most `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, task: (item: T, worker: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (;;) {
        const i = next++
        if (i >= items.length) return
        await task(items[i] as T, worker)
      }
    }),
  )
}

/** Runs `work`: its result, and its rate (`count` things done over the seconds it took). */
export async function timedRate<T>(count: number, work: () => Promise<T>): Promise<{ readonly rate: number; readonly result: T }> {
  const t0 = performance.now()
  const result = await work()
  return { rate: count / ((performance.now() - t0) / 1000), result }
}
