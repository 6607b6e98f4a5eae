/**
 * The bench's command line: which workloads, how big, where (the options are listed in main.ts).
 * @packageDocumentation
 */
/** Every workload name `--only` accepts. */
export const WORKLOADS = [
  'append',
  'emmett',
  'single',
  'retry',
  'load',
  'flush',
  'rebuild',
  'rss',
  'import',
  'storage',
  'pglite',
  'telemetry',
  'langgraph',
  'langgraph-storage',
  'rls',
  'scale',
] as const

/** The parsed command line (see the options in main.ts). */
export interface Args {
  quick: boolean
  sessions: number
  messages: number
  runs: number
  adminUrl: string
  out: string
  only: Set<string> | null
  groupCommit: boolean | { maxBatches: number; maxInFlight: number } | undefined
  /** The `scale` workload (only with `--only scale`): messages and sessions of the grown database, and the size it is first measured at. */
  scaleMessages: number
  scaleSessions: number
  scaleBase: number
}

/** Parses the command line; throws on an unknown workload or fewer than 3 runs. */
export function parseArgs(argv: readonly string[]): Args {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const quick = argv.includes('--quick')
  const only = get('only') === undefined ? null : new Set((get('only') ?? '').split(','))
  for (const name of only ?? []) {
    if (!(WORKLOADS as readonly string[]).includes(name)) throw new Error(`unknown workload ${name}; known: ${WORKLOADS.join(', ')}`)
  }
  const runs = Number(get('runs') ?? 3)
  if (!Number.isSafeInteger(runs) || runs < 3) throw new Error('--runs must be at least 3 (every figure is a median of ≥ 3 runs)')
  const scaleMessages = Number(get('scale-messages') ?? 5_000_000)
  const scaleSessions = Number(get('scale-sessions') ?? 50_000)
  const scaleBase = Number(get('scale-base') ?? 100_000)
  for (const [name, n] of [
    ['scale-messages', scaleMessages],
    ['scale-sessions', scaleSessions],
    ['scale-base', scaleBase],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`)
  }
  if (scaleBase >= scaleMessages) throw new Error('--scale-base must be below --scale-messages')
  if (scaleSessions > scaleMessages) throw new Error('--scale-sessions must be at most --scale-messages')
  const gc = get('group-commit')
  const [maxBatches, maxInFlight] = (gc ?? '').split(',').map(Number)
  const groupCommit = gc === undefined ? undefined : gc === 'off' ? false : { maxBatches: maxBatches ?? 32, maxInFlight: maxInFlight ?? 2 }
  return {
    groupCommit,
    quick,
    sessions: Number(get('sessions') ?? (quick ? 120 : 1000)),
    messages: Number(get('messages') ?? (quick ? 60 : 100)),
    runs,
    adminUrl: get('database-url') ?? process.env['TURNLOG_BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    out: get('out') ?? 'bench-results',
    only,
    scaleMessages,
    scaleSessions,
    scaleBase,
  }
}
