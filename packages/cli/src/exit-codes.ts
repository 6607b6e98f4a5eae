/**
 * The exit codes of the `turnlog` command. Scripts may rely on them; they never change meaning.
 */
export const EXIT_CODES = {
  /** Success: the command did what was asked and found nothing at or over `--fail-on`. */
  ok: 0,
  /** Findings: an audit (or `rebuild --verify`, or the demo's self-check) found problems at or over `--fail-on`. */
  findings: 1,
  /** Usage error: unknown command or option, a malformed argument, a session or file that does not exist. */
  usage: 2,
  /** Runtime error: the database could not be reached or failed, a file could not be written, a corrupt log. */
  runtime: 3,
} as const

/** One of {@link EXIT_CODES}. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES]
