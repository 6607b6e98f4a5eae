import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import type { Args } from './parse-args.js'
import { rows } from './record.js'
import type { Summary } from './stats.js'

/** The bench's report inputs besides the recorded rows. */
export interface ReportInput {
  readonly args: Args
  /** The server's settings, as `select name, setting, unit from pg_settings` returned them. */
  readonly settings: readonly { name: string; setting: string; unit: string | null }[]
  /** When the run started (ms since the epoch). */
  readonly started: number
}

/** Writes `latest.json` and `latest.md` (the results table, the machine, the server) under `--out` and prints the markdown. */
export function writeReport({ args, settings, started }: ReportInput): void {
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '?',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  }
  const result = {
    when: new Date().toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(' ')}`.trim(),
    machine,
    postgres: Object.fromEntries(settings.map((r) => [r.name, r.unit ? `${r.setting} (${r.unit})` : r.setting])),
    sessions: args.sessions,
    messagesPerSession: args.messages,
    runs: args.runs,
    seconds: Math.round((Date.now() - started) / 1000),
    rows,
  }
  const table = [
    '| workload | turnlog | baseline | ratio | goal | met |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const f = (s: Summary | null): string =>
        s === null
          ? '—'
          : `${s.median.toFixed(s.median < 10 ? 2 : 0)} ${r.unit} (${s.min.toFixed(s.min < 10 ? 2 : 0)}–${s.max.toFixed(s.max < 10 ? 2 : 0)})`
      return `| ${r.workload} | ${f(r.turnlog)} | ${r.baselineName}: ${f(r.baseline)} | ${r.ratio === null ? '—' : r.ratio.toFixed(2) + '×'} | ${r.goal} | ${r.met === null ? '—' : r.met ? 'yes' : 'no'} |`
    }),
    '',
    ...rows.filter((r) => r.notes).map((r) => `- ${r.workload}: ${r.notes}`),
  ].join('\n')
  const markdown = `# turnlog bench, ${result.when}\n\nCommand: \`${result.command}\`; ${result.seconds} s. Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}. Postgres: ${JSON.stringify(result.postgres)}.\n\n${table}\n`
  mkdirSync(args.out, { recursive: true })
  writeFileSync(join(args.out, 'latest.json'), JSON.stringify(result, null, 2))
  writeFileSync(join(args.out, 'latest.md'), markdown)
  console.log(markdown)
}
