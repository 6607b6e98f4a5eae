/**
 * A JSON text escape that `jsonb` refuses: `\u0000`, or a surrogate (`\ud800`–`\udfff`; JSON.stringify
 * writes only lone ones as escapes), preceded by an even number of backslashes (an odd number makes
 * the backslash before `u` an escaped one: `"a\\u0000b"` is a backslash followed by the text u0000). A
 * regular expression whose source is the same in JavaScript and in Postgres (`~`, advanced regular
 * expressions): the saver stores metadata text as it is, and `list`'s filter casts to `jsonb` only the
 * rows this does not match.
 */
export const JSONB_UNSAFE_ESCAPE = String.raw`(^|[^\\])(\\\\)*\\u(0000|[dD][89abcdefABCDEF][0-9a-fA-F]{2})`

const unsafe = new RegExp(JSONB_UNSAFE_ESCAPE)

/** Whether a JSON text holds an escape `jsonb` refuses ({@link JSONB_UNSAFE_ESCAPE}). */
export function hasJsonbUnsafeEscape(jsonText: string): boolean {
  return unsafe.test(jsonText)
}

/**
 * Postgres `jsonb` containment (`a @> b`) of two JSON values, for the rows whose text `jsonb` refuses:
 * an object contains an object whose every key it has with a value containing that key's value; an
 * array contains an array whose every element is contained in one of its elements; scalars are equal
 * (numbers by value). Like `@>`, an array contains a scalar it holds only at the top level.
 */
export function jsonContains(a: unknown, b: unknown, top = true): boolean {
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return top && !isContainer(b) && a.some((x) => !isContainer(x) && x === b)
    return b.every((y) =>
      a.some(
        (x) => (isContainer(y) ? isContainer(x) && Array.isArray(x) === Array.isArray(y) : !isContainer(x)) && jsonContains(x, y, false),
      ),
    )
  }
  if (isContainer(a)) {
    if (!isContainer(b) || Array.isArray(b)) return false
    const object = a as Record<string, unknown>
    return Object.entries(b as Record<string, unknown>).every(([key, value]) => {
      if (!Object.prototype.hasOwnProperty.call(object, key)) return false
      const mine = object[key]
      if (isContainer(mine) !== isContainer(value) || Array.isArray(mine) !== Array.isArray(value)) return false
      return jsonContains(mine, value, false)
    })
  }
  return !isContainer(b) && a === b
}

const isContainer = (value: unknown): boolean => typeof value === 'object' && value !== null
