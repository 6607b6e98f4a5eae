import type { Command } from 'commander'

/** An argument of a command, as `--help --json` describes it. */
export interface HelpArgument {
  readonly name: string
  readonly required: boolean
  readonly variadic: boolean
  readonly description: string
}

/** An option of a command, as `--help --json` describes it (`default` and `choices` when it has them). */
export interface HelpOption {
  readonly flags: string
  readonly description: string
  readonly default?: unknown
  readonly choices?: readonly string[]
}

/** A subcommand, as the program's `--help --json` lists it. */
export interface HelpSubcommand {
  readonly name: string
  readonly usage: string
  readonly description: string
}

/**
 * What `turnlog --help --json` (or `turnlog <command> --help --json`, `turnlog help <command> --json`)
 * prints: the command's name with its parents (`turnlog replay`), its usage line, description,
 * arguments, options (the program's: the global ones), subcommands (empty but for the program), and
 * `help`, the text `--help` prints without `--json`.
 */
export interface HelpDocument {
  readonly command: string
  readonly usage: string
  readonly description: string
  readonly arguments: readonly HelpArgument[]
  readonly options: readonly HelpOption[]
  readonly commands: readonly HelpSubcommand[]
  readonly help: string
}

/** The name of `command` with the names of its parents (`turnlog replay`). */
function commandPath(command: Command): string {
  const names: string[] = []
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}

/** The {@link HelpDocument} of `command`, whose help as text is `text`. */
export function helpDocument(command: Command, text: string): HelpDocument {
  const helper = command.createHelp()
  const path = commandPath(command)
  return {
    command: path,
    usage: `${path} ${command.usage()}`,
    description: command.description(),
    arguments: command.registeredArguments.map((a) => ({
      name: a.name(),
      required: a.required,
      variadic: a.variadic,
      description: a.description,
    })),
    options: helper.visibleOptions(command).map((o) => ({
      flags: o.flags,
      description: o.description,
      ...(o.defaultValue === undefined ? {} : { default: o.defaultValue as unknown }),
      ...(o.argChoices === undefined ? {} : { choices: [...o.argChoices] }),
    })),
    commands: helper.visibleCommands(command).map((c) => ({
      name: c.name(),
      usage: `${path} ${c.name()} ${c.usage()}`,
      description: c.description(),
    })),
    help: text,
  }
}
