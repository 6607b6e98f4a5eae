import { createRequire } from 'node:module'
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { describeError, terminalSafe } from './cli-error.js'
import type { CliIo } from './cli-io.js'
import {
  AUDIT_SEVERITIES,
  EVENT_TYPE_NAMES,
  IMPORT_FORMATS,
  REPLAY_VIEWS,
  TAIL_STARTS,
  type ImportFormat,
  type ReplayView,
  type TailStart,
} from './command-choices.js'
import { CommandContext, type GlobalOptions } from './command-context.js'
import { EXIT_CODES, type ExitCode } from './exit-codes.js'
import { helpDocument } from './help-document.js'

const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version

/** Parses a comma-separated list; repeating the option adds to it (`--types a,b --types c`). */
function commaList(value: string, previous: readonly string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  ]
}

function integer(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value)
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    }
    return n
  }
}

/** The hint of a usage error, on stderr and in the `--json` error document. */
const USAGE_HINT = 'Run `turnlog --help` or `turnlog <command> --help` for usage.'

const GLOBAL_HELP = `
Database (in this order):
  --database-url <url>       a Postgres URL
  --data-dir <dir>           the embedded PGlite database in <dir>
  $TURNLOG_DATABASE_URL      a Postgres URL
  $DATABASE_URL              a Postgres URL
  (none of these)            the embedded PGlite database in ./.turnlog/
  Each command names its database on stderr. Only migrate, import and demo create
  an embedded database; the others fail with DATABASE_NOT_FOUND where there is none.
  Session ids may be shortened: a unique start or end of 6+ hex digits (…9c67eeb6).

Exit codes:
  0  success
  1  findings at or over --fail-on (audit), drift (rebuild --verify)
  2  usage error: bad command, option or argument; unknown session; missing input file
  3  runtime error: database unreachable or failing, file not writable, corrupt log

Examples:
  $ turnlog demo                                   # see what turnlog does, in ~10 s
  $ turnlog sessions
  $ turnlog replay 0190c5e2-… --view transcript
  $ turnlog audit --all --fail-on warning          # in CI: exit 1 on any warning
  $ turnlog --database-url postgresql://localhost/app migrate
  $ turnlog inspect 0190c5e2-… --html session.html
  $ turnlog tail --session 0190c5e2-…              # follow a session live

Every command takes --json (one JSON document on stdout, nothing else there; tail: one per event).
Docs: docs/cli.md (in the repository, and shipped in the @turnlog/cli package)`

/**
 * Builds the `turnlog` command tree. `setExit` receives each command's exit code. Commander is told
 * to throw instead of exiting, so {@link runCli} maps its usage errors to exit code 2. Commander's own
 * stdout (help, the version) goes to `writeOut`, `io.out` unless given.
 */
export function createProgram(
  io: CliIo,
  setExit: (code: ExitCode) => void,
  onContext: (ctx: CommandContext) => void,
  writeOut: (text: string) => void = io.out,
): Command {
  const program = new Command('turnlog')
  const context = (command: Command): CommandContext => {
    const ctx = new CommandContext(io, command.optsWithGlobals<GlobalOptions>())
    onContext(ctx)
    return ctx
  }
  program
    .description(
      'turnlog: an event-sourced Postgres log of AI-agent conversations. Inspect, audit, replay, import, export and tail sessions.',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .option('--database-url <url>', 'Postgres connection URL (else $TURNLOG_DATABASE_URL, $DATABASE_URL, or the embedded database)')
    .option('--data-dir <dir>', 'use the embedded PGlite database in <dir> (default ./.turnlog/)')
    .option('--json', 'machine-readable output: one JSON document on stdout')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', GLOBAL_HELP)
    .showHelpAfterError(`  hint: ${USAGE_HINT}`)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => writeOut(s),
      writeErr: (s) => io.err(s),
      // a usage error reads like every other failure: its code, then the message, escaped (it quotes
      // the arguments, which a script may take from a hostile source)
      outputError: (s, write) =>
        write(
          `turnlog: error USAGE: ${s
            .replace(/^error: /, '')
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => terminalSafe(line))
            .join('\n  ')}\n`,
        ),
    })

  program
    .command('demo')
    .description('run a scripted agent session through turnlog (embedded, in a temp dir) and show what a naive persister loses')
    .addHelpText(
      'after',
      `
Uses a fresh temporary embedded database, deleted afterwards, unless --data-dir is given (kept, so
you can explore it) or --database-url is given on the command line (the demo writes new sessions there;
the URL variables are ignored so a demo never writes into a database by accident).

Examples:
  $ turnlog demo
  $ turnlog demo --data-dir ./demo-db && turnlog --data-dir ./demo-db sessions
  $ turnlog demo --json | jq .turnlog`,
    )
    .action(async (_opts: unknown, command: Command) => setExit(await (await import('./demo/run-demo.js')).runDemo(context(command))))

  program
    .command('migrate')
    .description('bring the turnlog schema up to date (demo, import and the embedded database do it by themselves)')
    .option('--roles-sql', 'print the SQL a DBA runs once per cluster to create the turnlog roles (connects to nothing)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnlog --database-url postgresql://app@db/app migrate\n  $ turnlog migrate --json\n  $ turnlog --database-url postgresql://app@db/app migrate --roles-sql | psql -U postgres app',
    )
    .action(async (opts: { rolesSql?: boolean }, command: Command) =>
      setExit(await (await import('./commands/run-migrate.js')).runMigrate(context(command), opts)),
    )

  program
    .command('sessions')
    .description('list sessions, one page at a time (keyset paging by session id)')
    .addOption(new Option('--limit <n>', 'sessions per page').argParser(integer(1, 1000)).default(50))
    .option('--after <session>', 'start after this session id (the "more:" line of the previous page)')
    .option('--tenant <id>', "only this tenant's sessions")
    .option('--all', 'every page')
    .addHelpText(
      'after',
      '\nExamples:\n  $ turnlog sessions\n  $ turnlog sessions --limit 10 --after 0190c5e2-…\n  $ turnlog sessions --all --json | jq -r ".sessions[].sessionId"',
    )
    .action(async (opts: { limit: number; after?: string; tenant?: string; all?: boolean }, command: Command) =>
      setExit(await (await import('./commands/run-sessions.js')).runSessions(context(command), opts)),
    )

  program
    .command('replay')
    .argument('<session>', 'session id')
    .description('print a session: its live list, its full transcript, or the provider wire view, now or at a past version')
    .addOption(new Option('--at <version>', 'time travel: the session as of this version').argParser(integer(0, Number.MAX_SAFE_INTEGER)))
    .addOption(new Option('--view <view>', 'what to show').choices(REPLAY_VIEWS).default('live'))
    .option(
      '--repair-pairing',
      'with --view wire: add synthetic results for unanswered tool calls, drop orphans and second results, send each call id once (the copy only)',
    )
    .addHelpText(
      'after',
      `
Views:
  live        what the model sees: the live list, ids intact, with tool-call pairing
  transcript  every content version of every message with its status, and every rewind, compaction, fork
  wire        the provider request's "messages": payloads only, no turnlog fields

Examples:
  $ turnlog replay 0190c5e2-…
  $ turnlog replay 0190c5e2-… --at 12 --view transcript
  $ turnlog replay 0190c5e2-… --view wire --json > request-messages.json`,
    )
    .action(async (session: string, opts: { at?: number; view: ReplayView; repairPairing?: boolean }, command: Command) =>
      setExit(await (await import('./commands/run-replay.js')).runReplay(context(command), session, opts)),
    )

  program
    .command('rebuild')
    .description('recompute the live-list projections from the event log (or check them with --verify)')
    .option('--session <id>', 'only this session (default: all)')
    .option('--verify', 'compare only, write nothing; exit 1 when a projection differs from its log')
    .addHelpText('after', '\nExamples:\n  $ turnlog rebuild --verify\n  $ turnlog rebuild --session 0190c5e2-…')
    .action(async (opts: { session?: string; verify?: boolean }, command: Command) =>
      setExit(await (await import('./commands/run-rebuild.js')).runRebuild(context(command), opts)),
    )

  program
    .command('audit')
    .argument('[session]', 'session id (or --all)')
    .description('check sessions for lost, duplicated or unpaired messages and broken invariants')
    .option('--all', 'every session')
    .option('--transcript <file>', "reconcile against what the user saw: a JSONL file of chat messages (the agent's own log)")
    .addOption(
      new Option('--fail-on <severity>', 'exit 1 when a finding is at or over this severity').choices(AUDIT_SEVERITIES).default('error'),
    )
    .addHelpText(
      'after',
      `
Severities: info < warning < error < critical. Exit 1 when a finding is at or over --fail-on.

Examples:
  $ turnlog audit 0190c5e2-…
  $ turnlog audit --all --fail-on warning --json > audit.json
  $ turnlog audit 0190c5e2-… --transcript agent-log.jsonl`,
    )
    .action(
      async (
        session: string | undefined,
        opts: { all?: boolean; transcript?: string; failOn: (typeof AUDIT_SEVERITIES)[number] },
        command: Command,
      ) => setExit(await (await import('./commands/run-audit.js')).runAudit(context(command), session, opts)),
    )

  program
    .command('export')
    .argument('[session]', 'session id (or --all)')
    .description('write sessions as turnlog JSONL events (hash-chained; `turnlog import` verifies and loads them)')
    .option('--all', 'every session')
    .requiredOption('-o, --output <file>', 'the file to write ("-" for stdout, not with --json)')
    .addHelpText('after', '\nExamples:\n  $ turnlog export 0190c5e2-… -o session.jsonl\n  $ turnlog export --all -o backup.jsonl')
    .action(async (session: string | undefined, opts: { all?: boolean; output: string }, command: Command) =>
      setExit(await (await import('./commands/run-export.js')).runExport(context(command), session, opts)),
    )

  program
    .command('import')
    .argument('<file>', 'the file to import')
    .description('load sessions: a turnlog export, an OpenAI-format JSONL transcript, or a hermes-agent state.db')
    .addOption(new Option('--format <format>', 'the input format (default: detected from the file)').choices(IMPORT_FORMATS))
    .option(
      '--session <id>',
      'openai-jsonl only: the session to import into (default: an id derived from the content, so importing again is a no-op)',
    )
    .addHelpText(
      'after',
      `
Formats:
  turnlog       a \`turnlog export\` file (JSONL of events; the hash chain is verified)
  openai-jsonl  one chat message per line ({"role": …, "content": …})
  hermes        a hermes-agent SQLite state.db

Examples:
  $ turnlog import backup.jsonl
  $ turnlog import chat.jsonl --format openai-jsonl --session 0190c5e2-…
  $ turnlog import ~/.hermes/state.db --format hermes`,
    )
    .action(async (file: string, opts: { format?: ImportFormat; session?: string }, command: Command) =>
      setExit(await (await import('./commands/run-import.js')).runImport(context(command), file, opts)),
    )

  program
    .command('inspect')
    .argument('<session>', 'session id')
    .description('write a self-contained HTML timeline of a session: statuses, rewinds, compactions, forks, findings')
    .requiredOption('--html <file>', 'the HTML file to write')
    .addHelpText('after', '\nExamples:\n  $ turnlog inspect 0190c5e2-… --html session.html && xdg-open session.html')
    .action(async (session: string, opts: { html: string }, command: Command) =>
      setExit(await (await import('./commands/run-inspect.js')).runInspect(context(command), session, opts)),
    )

  program
    .command('tail')
    .description('print events as they commit, in commit order, until Ctrl-C (or --limit events); --json streams JSONL')
    .option('--session <id>', "only this session's events")
    .addOption(
      new Option('--from <where>', 'where a new subscription starts: the whole log, or what commits from now on')
        .choices(TAIL_STARTS)
        .default('now'),
    )
    .addOption(new Option('--types <types>', 'only these event types, comma-separated').argParser(commaList))
    .option('--name <subscription>', 'a durable subscription: its checkpoint is kept and the next tail with this name resumes after it')
    .addOption(new Option('--limit <n>', 'stop (exit 0) after n events').argParser(integer(1, Number.MAX_SAFE_INTEGER)))
    .addHelpText(
      'after',
      `
One line per event: session, seq, type, and the message's id, role and a preview (or what the event
did). Under --json one event object per line (JSONL): the one command that streams, not one document.
Stops with exit 0 on Ctrl-C (SIGINT), SIGTERM, after --limit events, or at the next event once the
reader of stdout has gone away (in scripts, prefer --limit to \`| head\`).

Without --name it reads through an ephemeral subscription, turnlog-tail-<random>, whose checkpoint
row it deletes when it stops (a killed tail leaves the row behind: harmless, nothing waits for it). With
--name the checkpoint is durable: the next tail with that name resumes after the last event printed
(--from applies only to a new name). Needs the turnlog_writer role (it writes its checkpoint).

Embedded database (PGlite): tail polls within its own process, and holds the data directory while it
runs, so no other process can write meanwhile: there it is mostly useful to replay the log,
e.g. --from start --limit 100.

Event types (--types): ${EVENT_TYPE_NAMES.slice(0, 4).join(', ')},
  ${EVENT_TYPE_NAMES.slice(4).join(', ')}

Examples:
  $ turnlog tail
  $ turnlog tail --session 0190c5e2-… --types message_appended,message_revised
  $ turnlog tail --from start --json --limit 100 | jq -c '{seq, type, messageId}'
  $ turnlog tail --name indexer --from start --json --limit 500 > batch.jsonl   # resumable batches`,
    )
    .action(async (opts: { session?: string; from: TailStart; types?: string[]; name?: string; limit?: number }, command: Command) =>
      setExit(await (await import('./commands/run-tail.js')).runTail(context(command), opts)),
    )

  return program
}

/**
 * Runs the `turnlog` command line (`argv` without the node and script paths) and returns the exit
 * code. Never throws: every failure is printed (its code, its message and what to do) and mapped to
 * exit code 2 (usage) or 3 (runtime).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let exit: ExitCode = EXIT_CODES.ok
  let ctx: CommandContext | undefined
  // `--json` as an option, not an operand after `--` (`turnlog import -- --json` names a file)
  const end = argv.indexOf('--')
  const jsonArg = (end === -1 ? argv : argv.slice(0, end)).includes('--json')
  // under --json, commander's text (help, the version) is kept back and sent as one JSON object
  let commanderText = ''
  const program = createProgram(
    io,
    (code) => {
      exit = code
    },
    (c) => {
      ctx = c
    },
    jsonArg ? (text) => (commanderText += text) : io.out,
  )
  // the command whose help is shown on stdout (help on stderr is the usage error of no command)
  let helpShown: Command | undefined
  program.on('beforeAllHelp', (context: { error: boolean; command: Command }) => {
    if (!context.error) helpShown = context.command
  })
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return exit
  } catch (error) {
    if (error instanceof CommanderError) {
      // help asked for (`--help`, `help`, `help <command>`) and --version succeed; help shown because
      // no command was given is a usage error
      if (error.code === 'commander.version') {
        if (jsonArg) io.out(`${JSON.stringify({ version: VERSION })}\n`)
        return EXIT_CODES.ok
      }
      if (error.code === 'commander.helpDisplayed' || (error.code === 'commander.help' && error.exitCode === 0)) {
        if (jsonArg) io.out(`${JSON.stringify(helpDocument(helpShown ?? program, commanderText))}\n`)
        return EXIT_CODES.ok
      }
      const message = error.code === 'commander.help' ? 'a command is required' : error.message.replace(/^error: /, '')
      // the same document as every other failure (docs/cli.md): code, message, hint, cause, details
      if (jsonArg) io.out(`${JSON.stringify({ error: { code: 'USAGE', message, hint: USAGE_HINT, cause: null, details: {} } })}\n`)
      return EXIT_CODES.usage
    }
    const report = describeError(error, ctx?.database)
    if (jsonArg)
      io.out(
        `${JSON.stringify({ error: { code: report.code, message: report.message, hint: report.hint ?? null, cause: report.cause ?? null, details: report.details } })}\n`,
      )
    // the message and cause may quote a hostile input: shown escaped, never as terminal controls
    io.err(`turnlog: error ${report.code}: ${terminalSafe(report.message)}\n`)
    if (report.cause !== undefined) io.err(`  cause: ${terminalSafe(report.cause)}\n`)
    if (report.hint !== undefined) io.err(`  hint: ${terminalSafe(report.hint)}\n`)
    return report.exitCode
  }
}
