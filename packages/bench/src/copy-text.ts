/**
 * `COPY … FROM STDIN` text format, for the raw baseline of the import workload.
 * @packageDocumentation
 */

/** One field in COPY's text format: `\N` for null; backslash, tab, newline and carriage return escaped. */
export function copyField(value: string | null): string {
  if (value === null) return '\\N'
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
}

/** One row (with its line break) in COPY's text format. */
export function copyRow(values: readonly (string | null)[]): string {
  return `${values.map(copyField).join('\t')}\n`
}

/** A `bytea` value from hex digits, in the form `bytea` input reads (`\x…`). */
export function byteaHex(hex: string | null): string | null {
  return hex === null ? null : `\\x${hex}`
}
