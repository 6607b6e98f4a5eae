/** Deeper than this, values are left as they are (turnlog refuses more than 64 levels anyway). */
const MAX_DEPTH = 80

/** True for a plain object made in another JavaScript realm (another `vm` context, Jest's test sandbox). */
function isForeignPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) !== null) return false
  const ctor: unknown = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value
  return typeof ctor === 'function' && ctor.name === 'Object' && Object.prototype.toString.call(value) === '[object Object]'
}

/**
 * A copy of `value` in which every plain object is a plain object of this realm: the SDK copies items
 * with `structuredClone`, which under a test runner's sandbox (Jest's `vm` context) makes objects whose
 * prototype is another realm's `Object.prototype`, and turnlog accepts plain objects only. Everything
 * else (arrays are walked; a `Date`, a typed array, a class instance, a function, a cycle) is kept as it
 * is, for turnlog to accept or refuse as JSON.
 */
export function sameRealmCopy(value: unknown, depth = 0, ancestors: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH || ancestors.has(value)) return value
  const isArray = Array.isArray(value)
  const proto: unknown = Object.getPrototypeOf(value)
  if (!isArray && proto !== Object.prototype && proto !== null && !isForeignPlainObject(value)) return value
  ancestors.add(value)
  try {
    if (isArray) {
      const out: unknown[] = new Array<unknown>(value.length)
      for (let i = 0; i < value.length; i++) if (i in value) out[i] = sameRealmCopy(value[i], depth + 1, ancestors)
      return out
    }
    const out: Record<string, unknown> = proto === null ? (Object.create(null) as Record<string, unknown>) : {}
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, {
        value: sameRealmCopy((value as Record<string, unknown>)[key], depth + 1, ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  } finally {
    ancestors.delete(value)
  }
}
