import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'

/** A line of input with its 1-based line number. */
export interface NumberedLine {
  readonly line: number
  readonly text: string
}

/** Checks that `source` is an iterable or async iterable; `INVALID_INPUT` otherwise. */
export function checkSource(source: unknown): void {
  if (
    source === null ||
    typeof source !== 'object' ||
    !guardInput('lines', () => Symbol.asyncIterator in source || Symbol.iterator in source)
  ) {
    throw new TurnlogError('INVALID_INPUT', 'lines must be an iterable or async iterable of strings')
  }
}

/** The lines of one item of a source: a trailing `\n` or `\r\n` is ignored, several complete lines are split on `\n`. */
function* itemLines(item: unknown, first: number): Generator<NumberedLine> {
  if (typeof item !== 'string') {
    throw new TurnlogError('IMPORT_FAILED', `line ${first}: expected a string, got ${typeof item}`, { details: { line: first } })
  }
  if (!item.includes('\n')) {
    yield { line: first, text: item.endsWith('\r') ? item.slice(0, -1) : item }
    return
  }
  let line = first
  for (const part of item.replace(/\r?\n$/, '').split('\n')) yield { line: line++, text: part.endsWith('\r') ? part.slice(0, -1) : part }
}

/**
 * Yields the lines of `source` with 1-based line numbers. Each item is a line (a trailing `\n` or
 * `\r\n` is ignored); an item holding several complete lines is split on `\n`.
 */
export async function* numberedLines(source: AsyncIterable<string> | Iterable<string>): AsyncGenerator<NumberedLine> {
  checkSource(source)
  let line = 0
  const asyncItems = guardInput('lines', () => (source as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator]?.())
  const syncItems = asyncItems === undefined ? guardInput('lines', () => (source as Iterable<unknown>)[Symbol.iterator]()) : undefined
  let finished = false
  try {
    for (;;) {
      let next: IteratorResult<unknown>
      try {
        if (asyncItems !== undefined) next = await asyncItems.next()
        else {
          next = (syncItems as Iterator<unknown>).next()
          // as `for await` did: a promise item is awaited (a thenable that is not a promise stays an item)
          if (next.done !== true && next.value instanceof Promise) next = { done: false, value: await next.value }
        }
      } catch (cause) {
        // the source itself failed (a read error, a throwing iterator or item): the import's input is at fault
        if (isTurnlogError(cause)) throw cause
        let reason: string = typeof cause
        try {
          if (cause instanceof Error) reason = cause.message
        } catch {
          // a revoked Proxy thrown as an error
        }
        throw new TurnlogError('IMPORT_FAILED', `line ${line + 1}: the lines could not be read (${reason})`, {
          details: { line: line + 1 },
          cause,
        })
      }
      if (next.done === true) {
        finished = true
        return
      }
      for (const numbered of itemLines(next.value, line + 1)) {
        line = numbered.line
        yield numbered
      }
    }
  } finally {
    // stopped early (the consumer failed or broke off): close the source, as `for await` did
    if (!finished) await Promise.resolve(asyncItems?.return?.() ?? syncItems?.return?.()).catch(() => {})
  }
}

/** {@link numberedLines} of a source that is not async: no promise per line. */
export function* numberedLinesSync(source: Iterable<unknown>): Generator<NumberedLine> {
  let line = 0
  for (const item of source) {
    for (const numbered of itemLines(item, line + 1)) {
      line = numbered.line
      yield numbered
    }
  }
}
