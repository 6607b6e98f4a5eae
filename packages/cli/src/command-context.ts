import type { PostgresStore } from '@turnlog/postgres'
import type { CliIo } from './cli-io.js'
import type { DatabaseContext } from './cli-error.js'
import type { OpenCliStoreOptions } from './open-cli-store.js'
import { resolveDatabase, type DatabaseOptions, type DatabaseTarget } from './resolve-database.js'

/** The global options every command accepts. */
export interface GlobalOptions extends DatabaseOptions {
  /** Machine-readable output on stdout. */
  readonly json?: boolean | undefined
}

/** What a command runs with: the I/O, the output mode and the database. */
export class CommandContext {
  /** The process I/O. */
  readonly io: CliIo
  /** True under `--json`: stdout carries exactly one JSON document. */
  readonly json: boolean
  /** The database options given on the command line. */
  readonly options: GlobalOptions
  #database: DatabaseContext | undefined
  #announced = false

  constructor(io: CliIo, options: GlobalOptions) {
    this.io = io
    this.options = options
    this.json = options.json === true
  }

  /** The database the last store was opened on, for error hints. */
  get database(): DatabaseContext | undefined {
    return this.#database
  }

  /** Resolves the database from the options and the environment. */
  target(): DatabaseTarget {
    return resolveDatabase(this.options, this.io.env, this.io.cwd)
  }

  /**
   * Opens the store on `target` (default: {@link CommandContext.target}), runs `fn`, closes it.
   * Pending migrations run first on the embedded database (it is the CLI's own) and when `migrate` is
   * true (commands that write: demo, import); read-only commands leave a Postgres schema alone, so a
   * read-only role can run them and schema changes stay a deliberate `turnlog migrate`.
   *
   * Says on stderr which database it uses (not under `--json`, whose stderr stays empty). Only a
   * command that may create a database (`create`: migrate, import) starts a new embedded one; the
   * others throw `DATABASE_NOT_FOUND` when the embedded directory holds no database yet.
   */
  async withStore<T>(
    fn: (store: PostgresStore) => Promise<T>,
    options: OpenCliStoreOptions & { target?: DatabaseTarget } = {},
  ): Promise<T> {
    const target = options.target ?? this.target()
    this.#database = { kind: target.kind, where: target.where }
    this.announce(target)
    // loaded on first use: building the command tree and --help load no database code
    const { openCliStore } = await import('./open-cli-store.js')
    const opened = await openCliStore(target, { migrate: options.migrate ?? target.kind === 'embedded', create: options.create === true })
    try {
      return await fn(opened.store)
    } finally {
      await opened.close()
    }
  }

  /** Says once, on stderr, which database the command uses and why (not under `--json`). */
  announce(target: DatabaseTarget): void {
    if (this.json || this.#announced) return
    this.#announced = true
    const source =
      target.source === 'default' ? 'default: none of --database-url, --data-dir, TURNLOG_DATABASE_URL, DATABASE_URL is set' : target.source
    this.io.err(`turnlog: database: ${target.kind === 'postgres' ? 'Postgres' : 'embedded'} ${target.where} (${source})\n`)
  }

  /** Prints the command's result: `json` under `--json`, else the human text. */
  print(json: unknown, human: () => string): void {
    if (this.json) this.io.out(`${JSON.stringify(json)}\n`)
    else {
      const text = human()
      if (text !== '') this.io.out(text.endsWith('\n') ? text : `${text}\n`)
    }
  }
}
