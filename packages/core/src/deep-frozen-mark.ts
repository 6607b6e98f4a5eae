import { ObjectStamp } from './object-stamp.js'

/**
 * The mark of a value core has frozen all the way down (`toFrozenJson`'s copies, payloads and `meta`
 * restored from a store's rows), with a slot for the payload's content hash once it is known.
 */
class DeepFrozenMark extends ObjectStamp {
  #hash: string | undefined

  constructor(target: object, hash: string | undefined) {
    super(target)
    this.#hash = hash
  }

  static has(value: object): boolean {
    return #hash in value
  }

  static hashOf(value: object): string | undefined {
    return #hash in value ? value.#hash : undefined
  }

  static setHash(value: object, hash: string): boolean {
    if (!(#hash in value)) return false
    value.#hash = hash
    return true
  }
}

/**
 * Marks `value` as frozen all the way down, optionally with its known content hash. The caller must
 * freeze it (and everything in it) right after, and must not call this on a frozen or shared object:
 * only core's own fresh copies are marked. Internal to core.
 */
export function markDeepFrozen(value: object, hash?: string): void {
  new DeepFrozenMark(value, hash)
}

/** True when `value` carries {@link markDeepFrozen}'s mark (no walk, no `Proxy` trap asked). */
export function isMarkedDeepFrozen(value: object): boolean {
  return DeepFrozenMark.has(value)
}

/** The content hash recorded on a marked value, if any. */
export function markedContentHash(value: object): string | undefined {
  return DeepFrozenMark.hashOf(value)
}

/** Records `hash` on a marked value; false (and nothing recorded) when `value` is not marked. */
export function setMarkedContentHash(value: object, hash: string): boolean {
  return DeepFrozenMark.setHash(value, hash)
}
