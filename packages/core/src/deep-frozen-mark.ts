import { ObjectStamp } from './object-stamp.js'

/**
 * The mark of a value core has frozen all the way down (`toFrozenJson`'s copies, payloads restored from
 * a store's rows), with a slot for the payload's content hash once it is known. A mark is added before
 * the value is frozen (object-stamp.ts) but counts only once {@link confirmDeepFrozen} says the freeze
 * went through: a freeze that throws half-way (a hostile `Proxy` inside) leaves a mark that claims nothing.
 */
class DeepFrozenMark extends ObjectStamp {
  #frozen = false
  #hash: string | undefined

  constructor(target: object, hash: string | undefined) {
    super(target)
    this.#hash = hash
  }

  static has(value: object): boolean {
    return #frozen in value && value.#frozen
  }

  static confirm(value: object): void {
    if (#frozen in value) value.#frozen = true
  }

  static hashOf(value: object): string | undefined {
    return #frozen in value && value.#frozen ? value.#hash : undefined
  }

  static setHash(value: object, hash: string): boolean {
    if (!(#frozen in value && value.#frozen)) return false
    value.#hash = hash
    return true
  }
}

/**
 * Marks `value`, about to be frozen all the way down, optionally with its known content hash. Only for
 * core's own fresh, extensible objects (never a frozen or shared one); the mark counts once the caller
 * has frozen everything in it and called {@link confirmDeepFrozen}. Internal to core.
 */
export function markDeepFrozen(value: object, hash?: string): void {
  new DeepFrozenMark(value, hash)
}

/** Confirms the mark of a value {@link markDeepFrozen} marked, now frozen all the way down. */
export function confirmDeepFrozen(value: object): void {
  DeepFrozenMark.confirm(value)
}

/** True when `value` carries a confirmed mark (no walk, no `Proxy` trap asked). */
export function isMarkedDeepFrozen(value: object): boolean {
  return DeepFrozenMark.has(value)
}

/** The content hash recorded on a confirmed mark, if any. */
export function markedContentHash(value: object): string | undefined {
  return DeepFrozenMark.hashOf(value)
}

/** Records `hash` on a value with a confirmed mark; false (and nothing recorded) otherwise. */
export function setMarkedContentHash(value: object, hash: string): boolean {
  return DeepFrozenMark.setHash(value, hash)
}
