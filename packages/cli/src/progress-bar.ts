import cliProgress from 'cli-progress'
import type { CliIo } from './cli-io.js'

/** A progress display for a long command; every method is a no-op when progress is off. */
export interface ProgressBar {
  /** Sets the position (and the total, when it became known or changed). */
  update(done: number, total?: number, label?: string): void
  /** Removes the bar from the terminal. Idempotent. */
  stop(): void
}

const OFF: ProgressBar = { update: () => {}, stop: () => {} }

/**
 * A cli-progress bar on standard error, drawn only when standard error is a terminal and the output is
 * not `--json` (a bar in a log file or a pipe is noise). `unit` names what is counted.
 */
export function createProgressBar(
  io: CliIo,
  options: { readonly json: boolean; readonly title: string; readonly unit: string },
): ProgressBar {
  const stream = io.progressStream
  if (stream === undefined || options.json) return OFF
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${options.title} [{bar}] {percentage}% | {value}/{total} ${options.unit} | {label}`,
      hideCursor: true,
      clearOnComplete: true,
      stopOnComplete: false,
      etaBuffer: 50,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  )
  let started = false
  let stopped = false
  return {
    update(done, total, label = '') {
      if (stopped) return
      if (!started) {
        bar.start(total ?? Math.max(done, 1), done, { label })
        started = true
        return
      }
      if (total !== undefined) bar.setTotal(total)
      bar.update(done, { label })
    },
    stop() {
      if (stopped) return
      stopped = true
      if (started) bar.stop()
    },
  }
}
