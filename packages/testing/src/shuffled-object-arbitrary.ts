import fc from 'fast-check'

/** `[key, value]` entries; `undefined` values mean "field absent". */
export type Entries = [string, unknown][]

/**
 * An object of the `known` entries and then the `extras`, keys in a random order: an `undefined`
 * value is left out and of a repeated key the first stays. Built with `Object.fromEntries`, so that a
 * `__proto__` key becomes a plain own property (as `JSON.parse` makes it), never the prototype.
 */
export function shuffledObjectArb(
  known: fc.Arbitrary<readonly (readonly [string, unknown])[]>,
  extras: fc.Arbitrary<readonly (readonly [string, unknown])[]>,
): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(known, extras)
    .chain(([fields, more]) => {
      const seen = new Set<string>()
      const all: Entries = []
      for (const [k, v] of [...fields, ...more]) {
        if (v === undefined || seen.has(k)) continue
        seen.add(k)
        all.push([k, v])
      }
      return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length })
    })
    .map((entries) => Object.fromEntries(entries) as Record<string, unknown>)
}
