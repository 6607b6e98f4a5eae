import type { Summary } from './stats.js'

/** One row of the results table. */
export interface Row {
  workload: string
  unit: string
  turnlog: Summary
  baseline: Summary | null
  baselineName: string
  ratio: number | null
  goal: string
  met: boolean | null
  notes: string
}

/** The rows of the results table, in the order the workloads ran. */
export const rows: Row[] = []
/** Records a row; the ratio is turnlog's median over the baseline's (both in the row's unit). */
export function record(row: Omit<Row, 'ratio' | 'met'> & { higherIsBetter: boolean; goalRatio: number | null }): void {
  const ratio = row.baseline === null ? null : row.turnlog.median / row.baseline.median
  const met = ratio === null || row.goalRatio === null ? null : row.higherIsBetter ? ratio >= row.goalRatio : ratio <= row.goalRatio
  const { higherIsBetter: _h, goalRatio: _g, ...rest } = row
  rows.push({ ...rest, ratio, met })
  const fmt = (s: Summary | null): string => (s === null ? '—' : `${s.median.toFixed(1)} (${s.min.toFixed(1)}–${s.max.toFixed(1)})`)
  console.error(
    `${row.workload}: turnlog ${fmt(row.turnlog)} ${row.unit}; ${row.baselineName} ${fmt(row.baseline)}; ratio ${ratio?.toFixed(2) ?? '—'} (goal ${row.goal})`,
  )
}
