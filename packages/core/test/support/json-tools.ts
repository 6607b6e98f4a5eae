/** Small helpers for property tests over JSON values. */

/** A seeded PRNG (xorshift32), so a shuffle replays with its fast-check seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1 // xorshift stays at 0 once there
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
}

/**
 * A deep copy of a JSON value with the keys of every object in a random order. `Object.fromEntries`
 * keeps a `__proto__` key an own property. (Integer-like keys always come first in JavaScript.)
 */
export function shuffleKeys(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, random))
  if (typeof value !== 'object' || value === null) return value
  const entries: [string, unknown][] = Object.entries(value).map(([k, v]) => [k, shuffleKeys(v, random)])
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const tmp = entries[i] as [string, unknown]
    entries[i] = entries[j] as [string, unknown]
    entries[j] = tmp
  }
  return Object.fromEntries(entries)
}

const LONE_SURROGATE = /\p{Cs}/gu

/** True when the string has a lone (unpaired) surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  return new RegExp(LONE_SURROGATE.source, 'u').test(text)
}

/** A deep copy with every lone surrogate (in keys and strings) replaced by U+FFFD. */
export function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd')
  if (Array.isArray(value)) return value.map((v) => wellFormed(v))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(LONE_SURROGATE, '\ufffd'), wellFormed(v)]))
}

/** Every string (keys included) in a JSON value. */
export function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap((v) => stringsOf(v))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)])
}
