import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

/**
 * Refuses a key of an options object that is not one of its options: a misspelt option
 * (`expectedVerison`, `grupCommit`) would otherwise be ignored without a word, and the call would run
 * without what the caller asked for (an `expectedVersion` check dropped is a lost update). Throws
 * `INVALID_INPUT` with `details.field` naming the key (`options.expectedVerison`), and, when an option
 * is within edit distance 2 of it, says `did you mean expectedVersion?` (`details.suggestion`).
 *
 * Only enumerable string keys are looked at (symbols never are). A key whose value is
 * `undefined` is absent, as every option given `undefined` is: `{ ...defaults, ...opts }` with an
 * unset field passes, and a misspelt key is refused as soon as it carries a value (until then it
 * changes nothing). Reading the keys of a hostile value (a Proxy trap, a throwing getter) is
 * `INVALID_INPUT` for `field`.
 *
 * @param value - the options object (already known to be an object).
 * @param known - every option it may hold.
 * @param field - the argument's name in errors (`options`, `config`, `options.compaction`).
 * @param what - the call, for the message (`append`, `openStore`); default `field`.
 * @example
 * ```ts
 * checkKnownKeys({ expectedVerison: 3 }, ['expectedVersion'], 'options', 'append')
 * // INVALID_INPUT "append: options.expectedVerison is not an option (did you mean expectedVersion?)"
 * ```
 */
export function checkKnownKeys(value: object, known: readonly string[], field: string, what: string = field): void {
  // garbage arguments (not an object, a symbol for a name) are INVALID_INPUT too, never a TypeError
  guardInput(typeof field === 'string' ? field : 'options', () => {
    const record = value as Record<string, unknown>
    const unknown = Object.keys(record).find((key) => !known.includes(key) && record[key] !== undefined)
    if (unknown === undefined) return
    const suggestion = nearestKey(unknown, known)
    throw new TurnlogError(
      'INVALID_INPUT',
      `${what}: ${field}.${unknown} is not an option${suggestion === undefined ? ` (options: ${known.join(', ')})` : ` (did you mean ${suggestion}?)`}`,
      { details: { field: `${field}.${unknown}`, ...(suggestion === undefined ? {} : { suggestion }) } },
    )
  })
}

/** The known key nearest to `key` (edit distance at most 2, and less than the key's length), if any. */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance && d < Math.min(key.length, candidate.length)) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/**
 * The optimal string alignment distance: insertions, deletions, substitutions and transpositions of
 * two neighbours (`Verison` is one step from `Version`). Long keys are not compared (a key is a name).
 */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64 || b.length > 64) return 3
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const row = rows[i] as number[]
      const up = rows[i - 1] as number[]
      let d = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = d
    }
  }
  return (rows[a.length] as number[])[b.length] as number
}

/**
 * The option names of an options type `T`, every one of them, for {@link checkKnownKeys}: TypeScript
 * refuses a list that misses an option of `T` or names one `T` lacks, so the keys a call accepts cannot
 * drift from its type.
 * @example
 * ```ts
 * const APPEND_OPTIONS = optionKeys<AppendOptions>({ expectedVersion: true })
 * ```
 */
export function optionKeys<T extends object>(keys: { readonly [K in keyof Required<T>]: true }): readonly (keyof T & string)[] {
  if (typeof keys !== 'object' || keys === null)
    throw new TurnlogError('INVALID_INPUT', 'optionKeys needs an object of option names', { details: { field: 'keys' } })
  return guardInput('keys', () => Object.keys(keys)) as (keyof T & string)[]
}
