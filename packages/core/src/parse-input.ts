import { z } from 'zod'

/**
 * The zod namespace core validates with, re-exported so the packages built on core (`@turnlog/postgres`,
 * `@turnlog/audit`) write their argument schemas with the same zod (one copy, one version) and hand
 * them to {@link parseInput}.
 */
export { z }
import { TurnlogError, isTurnlogError } from './turnlog-error.js'

/**
 * Parses an argument of a public function with a zod schema and returns zod's output (a copy for
 * objects, so later reads do not touch the caller's value again). Anything the schema refuses - and
 * any error raised while reading the value (a throwing getter, a Proxy trap, a revoked Proxy) - is
 * `INVALID_INPUT` naming `field` (and the path inside it), with the zod error or the raised error as
 * `cause`. Never throws anything else.
 */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  try {
    if (
      typeof field !== 'string' ||
      typeof schema !== 'object' ||
      schema === null ||
      typeof (schema as { safeParse?: unknown }).safeParse !== 'function'
    ) {
      throw new TurnlogError('INVALID_INPUT', 'parseInput needs a zod schema, the value and a field name', { details: { field: 'schema' } })
    }
    return parseOrThrow(schema, value, field)
  } catch (cause) {
    // zod read a throwing getter or Proxy (while parsing, or while describing the issue)
    if (isTurnlogError(cause)) throw cause
    const name = typeof field === 'string' ? field : 'input'
    throw new TurnlogError('INVALID_INPUT', `${name} cannot be read (${describeError(cause)})`, { details: { field: name }, cause })
  }
}

function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue ? issue.path.map(String).join('.') : ''
  const where = path === '' ? field : `${field}.${path}`
  throw new TurnlogError('INVALID_INPUT', `${where}: ${issue?.message ?? 'invalid'}`, {
    details: { field: where, issues: result.error.issues.map((i) => ({ code: i.code, path: i.path.map(String), message: i.message })) },
    cause: result.error,
  })
}

/**
 * Runs `body` (sync, or async: then its rejection), the work of a pure function of core on caller-supplied values, and turns an error that
 * is not a `TurnlogError` - which only the input can cause there: a throwing getter, a Proxy trap, a
 * value JSON cannot hold - into `INVALID_INPUT` for `what`, keeping it as `cause`.
 */
export function guardInput<T>(what: string, body: () => T): T {
  const name = typeof what === 'string' ? what : 'input'
  const convert = (error: unknown): never => {
    if (isTurnlogError(error)) throw error
    throw new TurnlogError('INVALID_INPUT', `${name}: the input cannot be read (${describeError(error)})`, {
      details: { field: name },
      cause: error,
    })
  }
  try {
    const result = body()
    // an async body: its rejection is converted the same way
    return (result instanceof Promise ? result.catch(convert) : result) as T
  } catch (error) {
    return convert(error)
  }
}

/** A short, never-throwing description of something thrown. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 200)
    return typeof error === 'string' ? error.slice(0, 200) : typeof error
  } catch {
    return 'an unreadable error'
  }
}
