/** `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`: the timestamp form turnlog stores and accepts. */
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/

/** Days in `month` (1-12) of `year`, proleptic Gregorian (0000 is a leap year, as 2000). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/**
 * True when `value` is an ISO-8601 timestamp of a real instant: `YYYY-MM-DDTHH:MM:SS`, an optional
 * fraction of 1 to 9 digits, and `Z` or an offset `±HH:MM`, every field in range (month 01-12, a day
 * its month has, hour 00-23, minute and second 00-59, offset hours 00-23). `Date.parse` alone is
 * lenient: it reads `2024-02-30` as March 1 and `T24:00:00` as the next day, so a timestamp checked by
 * it alone could be stored as one date and read back as another.
 */
export function isIsoTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const m = ISO_TIMESTAMP.exec(value)
  if (m === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false
  if (hour > 23 || minute > 59 || second > 59) return false
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false
  return !Number.isNaN(Date.parse(value))
}
