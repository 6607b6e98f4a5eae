import { isAbsolute, join, resolve } from 'node:path'
import { CliError } from './cli-error.js'

/** Where the CLI keeps its embedded database when no Postgres URL is given, relative to the cwd. */
export const DEFAULT_DATA_DIR = '.turnlog'

/** The environment variables the CLI reads for a Postgres URL, in order of precedence. */
export const DATABASE_URL_ENV = ['TURNLOG_DATABASE_URL', 'DATABASE_URL'] as const

/** The database a command runs against. */
export type DatabaseTarget =
  | {
      readonly kind: 'postgres'
      readonly connectionString: string
      /** The URL with its password replaced by `***`, safe to print. */
      readonly where: string
      /** Which option or variable gave the URL. */
      readonly source: '--database-url' | (typeof DATABASE_URL_ENV)[number]
    }
  | {
      readonly kind: 'embedded'
      /** Absolute path of the PGlite data directory. */
      readonly dataDir: string
      readonly where: string
      readonly source: '--data-dir' | 'default'
    }

/** The global options that choose a database. */
export interface DatabaseOptions {
  readonly databaseUrl?: string | undefined
  readonly dataDir?: string | undefined
}

/**
 * Replaces every password in a connection string with `***`, so that it can be printed: the URL's own
 * (`postgresql://app:secret@db/app`), one in the query (`?password=…`, `?sslpassword=…`, which
 * node-postgres reads too), one of a keyword string given by mistake (`host=db password=secret`), and
 * the one of a URL that does not parse (a `/` or `@` left unencoded in the password): there everything
 * between `user:` and the last `@` is hidden.
 */
export function redactUrl(url: string): string {
  let text: string
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    text = u.toString()
  } catch {
    text = url.replace(/\/\/([^:@/]*):.*@/, '//$1:***@')
  }
  return text.replace(/(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&#]*)/gi, '$1***')
}

function postgres(url: string, source: Extract<DatabaseTarget, { kind: 'postgres' }>['source']): DatabaseTarget {
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new CliError(
      'USAGE',
      `${source} must be a postgres:// or postgresql:// URL, got ${JSON.stringify(redactUrl(url).slice(0, 80))}`,
      {
        hint: 'Example: --database-url postgresql://user:password@localhost:5432/app',
      },
    )
  }
  return { kind: 'postgres', connectionString: url, where: redactUrl(url), source }
}

/**
 * Chooses the database: `--database-url`, else `--data-dir` (embedded), else `TURNLOG_DATABASE_URL`,
 * else `DATABASE_URL`, else the embedded PGlite database in `./.turnlog/`. Giving both
 * `--database-url` and `--data-dir` is a usage error.
 */
export function resolveDatabase(options: DatabaseOptions, env: Readonly<Record<string, string | undefined>>, cwd: string): DatabaseTarget {
  if (options.databaseUrl !== undefined && options.dataDir !== undefined) {
    throw new CliError('USAGE', '--database-url and --data-dir are mutually exclusive', {
      hint: 'Use --database-url for Postgres, or --data-dir for the embedded database.',
    })
  }
  if (options.databaseUrl !== undefined) return postgres(options.databaseUrl, '--database-url')
  if (options.dataDir !== undefined) {
    const dir = isAbsolute(options.dataDir) ? options.dataDir : resolve(cwd, options.dataDir)
    return { kind: 'embedded', dataDir: dir, where: dir, source: '--data-dir' }
  }
  for (const name of DATABASE_URL_ENV) {
    const value = env[name]
    if (value !== undefined && value !== '') return postgres(value, name)
  }
  const dir = join(cwd, DEFAULT_DATA_DIR)
  return { kind: 'embedded', dataDir: dir, where: dir, source: 'default' }
}
