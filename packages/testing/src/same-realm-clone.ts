/** NUL, a lone surrogate, an astral character and a right-to-left override: text real tool output holds. */
export const HOSTILE_TEXT = 'c\u0000\ud800\u{1F600}\u202eתל'

/**
 * What `structuredClone` makes of a value in the realm the application runs in: fresh plain objects and
 * arrays, own enumerable keys, no brand, nothing frozen. (Jest's `structuredClone` builds its objects
 * in the host realm, which core refuses as not plain data, so the clone is written out here.)
 */
export function sameRealmClone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => sameRealmClone(v)) as T
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, {
      value: sameRealmClone((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out as T
}
