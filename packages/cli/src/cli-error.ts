import { EXIT_CODES, type ExitCode } from './exit-codes.js'

/**
 * Codes of the errors the CLI itself raises (the library's codes are in `docs/errors.md`). Stable:
 * never renamed or reused.
 */
export const CLI_ERROR_CODES = {
  USAGE: 'The command line is malformed: unknown command or option, missing or invalid argument.',
  FILE_NOT_FOUND: 'An input file named on the command line does not exist.',
  FILE_ERROR: 'A file could not be read or written (permissions, disk full, a directory).',
  AMBIGUOUS_ID: 'A shortened id matches more than one session: give more digits or the full id.',
  DATABASE_NOT_FOUND: 'A read-only command found no turnlog database where the options and environment point (it creates none).',
  DEMO_FAILED: 'The demo script did not behave as turnlog promises (a bug: please report it).',
  PACKAGE_MISSING: 'An optional package the command needs is not installed (`@turnlog/hermes` for `turnlog import --format hermes`).',
  INTERNAL: 'An unexpected error: neither a library nor a CLI error (a bug: please report it with the command line).',
} as const

/** A stable code of an error raised by the CLI. */
export type CliErrorCode = keyof typeof CLI_ERROR_CODES

/** CLI codes that exit 2 (usage): the command line named something that is not there or is malformed. */
const USAGE_CLI_CODES: ReadonlySet<CliErrorCode> = new Set<CliErrorCode>(['USAGE', 'FILE_NOT_FOUND', 'AMBIGUOUS_ID', 'DATABASE_NOT_FOUND'])

/** An error raised by the CLI, with a stable code, an exit code and a hint that says what to do. */
export class CliError extends Error {
  /** Stable code from {@link CLI_ERROR_CODES}. */
  readonly code: CliErrorCode
  /** The exit code the process ends with. */
  readonly exitCode: ExitCode
  /** What the user can do about it, when known. */
  readonly hint: string | undefined

  constructor(code: CliErrorCode, message: string, options: { hint?: string; exitCode?: ExitCode; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'CliError'
    this.code = code
    this.exitCode = options.exitCode ?? (USAGE_CLI_CODES.has(code) ? EXIT_CODES.usage : EXIT_CODES.runtime)
    this.hint = options.hint
  }
}

/** A failure, described for the user and for scripts. */
export interface ErrorReport {
  /** A stable code: a library code (`SESSION_NOT_FOUND`, `DB_TRANSIENT`, …) or a CLI code. */
  readonly code: string
  readonly message: string
  /** What to do about it. */
  readonly hint: string | undefined
  readonly exitCode: ExitCode
  /** Machine-readable details of a library error. */
  readonly details: Readonly<Record<string, unknown>>
  /** The message of the underlying error, when it adds something to `message`. */
  readonly cause: string | undefined
}

/**
 * The shape check of `isTurnlogError` (`@turnlog/core`), repeated here so that the error path loads no
 * library code: a `TurnlogError` by name with a string code.
 */
function isTurnlogError(error: unknown): error is Error & { readonly code: string; readonly details: Readonly<Record<string, unknown>> } {
  if (typeof error !== 'object' || error === null) return false
  const e = error as { name?: unknown; code?: unknown }
  return e.name === 'TurnlogError' && typeof e.code === 'string'
}

/** Library codes that mean "the command named something that is not there or is malformed". */
const USAGE_CODES = new Set(['INVALID_INPUT', 'SESSION_NOT_FOUND', 'UNKNOWN_MESSAGE'])

/** Where the database was: shown in hints about connection failures. */
export interface DatabaseContext {
  /** `postgres` with a redacted URL, or `embedded` with its directory. */
  readonly kind: 'postgres' | 'embedded'
  /** The redacted URL, or the directory. */
  readonly where: string
}

const POSTGRES_SOURCES = '--database-url, TURNLOG_DATABASE_URL or DATABASE_URL'

function nodeCodeOf(error: unknown): string | undefined {
  let e: unknown = error
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * True when node-postgres gave up connecting after `connectionTimeoutMillis` (a server that accepts
 * the TCP connection but never answers, a firewall that drops packets): its error has no Node code,
 * only the message `Connection terminated due to connection timeout`, somewhere in the cause chain.
 */
function isConnectTimeout(error: unknown): boolean {
  let e: unknown = error
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const message = (e as { message?: unknown }).message
    if (typeof message === 'string' && /\bconnection timeout\b/i.test(message)) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

/** True when `error` or one of its causes carries the code `code`. */
function hasCode(error: unknown, code: string): boolean {
  let e: unknown = error
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    if ((e as { code?: unknown }).code === code) return true
    e = (e as { cause?: unknown }).cause
  }
  return false
}

function sqlStateOf(error: unknown): string | undefined {
  if (!isTurnlogError(error)) return undefined
  const s = error.details['sqlState']
  return typeof s === 'string' ? s : undefined
}

function connectionHint(error: unknown, code: string, db: DatabaseContext | undefined): string | undefined {
  if (db === undefined || db.kind !== 'postgres') return undefined
  const node = nodeCodeOf(error)
  const state = sqlStateOf(error)
  const at = `Postgres at ${db.where}`
  if (node === 'ECONNREFUSED') {
    return `Nothing accepts connections at ${db.where}. Start the server, or fix the URL (${POSTGRES_SOURCES}); with none of them set, turnlog uses the embedded database in ./.turnlog/.`
  }
  if (node === 'ENOTFOUND' || node === 'EAI_AGAIN')
    return `The host of ${at} does not resolve: check the host name in the URL (${POSTGRES_SOURCES}).`
  if (node === 'ETIMEDOUT' || node === 'EHOSTUNREACH' || node === 'ENETUNREACH' || code === 'DB_TIMEOUT' || isConnectTimeout(error)) {
    return `${at} did not answer in time: check the host, the port and any firewall between here and the server.`
  }
  if (state === '28P01' || state === '28000')
    return `${at} refused the credentials: check the user and password in the URL (${POSTGRES_SOURCES}).`
  if (state === '3D000') return `The database in the URL does not exist on the server: create it (\`createdb <name>\`) or fix the URL.`
  if (code === 'DB_TRANSIENT') return `The connection to ${at} failed; the command is safe to run again.`
  return undefined
}

function hintFor(error: unknown, code: string, db: DatabaseContext | undefined): string | undefined {
  const connection = connectionHint(error, code, db)
  if (connection !== undefined) return connection
  // a failed migration says itself what to do (the roles step names `turnlog migrate --roles-sql`)
  const own = (error as { details?: { hint?: unknown } }).details?.hint
  if (code === 'MIGRATION_FAILED' && typeof own === 'string') return own
  const state = sqlStateOf(error)
  if (state === '42P01' || state === '3F000' || state === '42703' || state === '42883') {
    return 'The turnlog schema is missing or older than this turnlog: run `turnlog migrate` (as a role that may change the schema).'
  }
  switch (code) {
    case 'SESSION_NOT_FOUND':
      return 'List the sessions with `turnlog sessions` (and check you are on the right database).'
    case 'MIGRATION_FAILED':
      return 'The schema was left at its previous version. Check the role may create the `turnlog` schema, then run `turnlog migrate`.'
    case 'PERMISSION_DENIED':
      return 'The database role lacks a privilege: grant it access to the `turnlog` schema, or connect as the owner.'
    case 'CORRUPT_LOG':
      return 'Run `turnlog audit --all` to see what is wrong, and `turnlog rebuild --verify` to check the projections.'
    case 'SUBSCRIPTION_LOCKED':
      return 'Another consumer holds this subscription name: stop it first, or pick another --name (or none, for an ephemeral subscription).'
    case 'DATA_DIR_LOCKED':
      return 'PGlite allows one process per data directory: wait for that process to finish (or stop it). A lock of a process that no longer runs is taken over by itself.'
    case 'DATA_DIR_INVALID':
      return 'Point --data-dir at the right directory, at a new or empty one to start a new database, or restore this one from a backup.'
    case 'VERSION_CONFLICT':
      return 'Another writer changed the session meanwhile: run the command again.'
    case 'DB_ERROR':
      if (db?.kind === 'embedded')
        return `The embedded database in ${db.where} failed; if another program wrote to that directory, restore it from a backup.`
      return undefined
    default:
      return undefined
  }
}

function causeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown }).cause
  if (cause === undefined || cause === null) return undefined
  const text = cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : undefined
  const message = (error as { message?: unknown }).message
  return text === undefined || text === '' || (typeof message === 'string' && message.includes(text)) ? undefined : text
}

/** `String(value)`, or a placeholder for a value whose conversion throws (`{ toString: 0 }`, a revoked Proxy). */
function printable(value: unknown): string {
  try {
    return String(value)
  } catch {
    return '(a thrown value that cannot be printed)'
  }
}

/** Unicode's Bidi_Control characters: ALM, LRM, RLM, the embeddings and overrides, the isolates. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/**
 * `text` made safe to print on a terminal: C0 and C1 control characters (ESC, BEL, CR, line breaks), DEL,
 * the line and paragraph separators and the bidi controls are written as `\xNN` / `\uNNNN`. An error's
 * message and cause can quote its input (JSON.parse quotes the start of a malformed line of an import
 * file), and a hostile file must not set the terminal's title, clear the screen, fake a line of output
 * or reorder what is shown. Loads no library code (the error path of a usage error stays light).
 */
export function terminalSafe(text: string): string {
  let out = ''
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`
    else if (c === 0x2028 || c === 0x2029 || BIDI_CONTROLS.test(ch)) out += `\\u${c.toString(16).padStart(4, '0')}`
    else out += ch
  }
  return out
}

/** Turns any thrown value into an {@link ErrorReport}: its code, a message, a hint and an exit code. */
export function describeError(error: unknown, db?: DatabaseContext): ErrorReport {
  const cause = typeof error === 'object' && error !== null ? causeOf(error) : undefined
  if (error instanceof CliError) {
    return { code: error.code, message: error.message, hint: error.hint, exitCode: error.exitCode, details: {}, cause }
  }
  // a URL node-postgres cannot parse (a `/`, `@` or `#` left unencoded in the password) fails at the first
  // query as a DB_ERROR "Invalid URL"; it is a malformed option value: a usage error, exit 2
  if (db?.kind === 'postgres' && hasCode(error, 'ERR_INVALID_URL')) {
    return {
      code: 'USAGE',
      message: `the database URL does not parse: ${db.where}`,
      hint: 'Percent-encode the special characters of the user name and password in the URL (/ is %2F, @ is %40, # is %23, : is %3A).',
      exitCode: EXIT_CODES.usage,
      details: {},
      cause: undefined,
    }
  }
  if (isTurnlogError(error)) {
    const exitCode = USAGE_CODES.has(error.code) ? EXIT_CODES.usage : EXIT_CODES.runtime
    return { code: error.code, message: error.message, hint: hintFor(error, error.code, db), exitCode, details: error.details ?? {}, cause }
  }
  const message = error instanceof Error ? error.message : printable(error)
  const node = nodeCodeOf(error)
  if (node !== undefined) {
    const code: CliErrorCode = 'FILE_ERROR'
    return { code, message, hint: undefined, exitCode: EXIT_CODES.runtime, details: { nodeCode: node }, cause }
  }
  const code: CliErrorCode = 'INTERNAL'
  return {
    code,
    message,
    hint: 'This looks like a bug in turnlog; please report it with the command you ran.',
    exitCode: EXIT_CODES.runtime,
    details: {},
    cause,
  }
}
