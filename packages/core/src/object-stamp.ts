/**
 * The base class of core's private marks (the `isMessage` brand, the deep-frozen mark and its content
 * hash). Its constructor returns the object it is given, so `new SubClass(target)` adds the subclass's
 * private fields to `target` itself: the mark lives on the value, not in a registry.
 *
 * Why not a `WeakSet` or `WeakMap`: V8 processes every entry of a weak collection whose key is young
 * one by one in each young-generation scavenge; a `load` of 100 messages added hundreds of such entries
 * and made scavenges 10–20 times longer (docs/performance.md, "scale"). A private field is an ordinary
 * slot of the object: free for the garbage collector, and still invisible from outside its class — not
 * an own key (`Reflect.ownKeys`, `Object.getOwnPropertySymbols` do not list it), never copied by spread,
 * `Object.assign`, `structuredClone` or `JSON.stringify`, not forgeable (only the class can add it), and
 * a `Proxy` around a marked object does not carry it (`#field in proxy` is false, and asks no trap).
 *
 * A mark must be added before the object is frozen: adding a private field to a non-extensible object
 * works today but is being disallowed (TC39 "Non-extensible applies to private"). Writing an existing
 * one (the content hash, computed later) stays allowed on a frozen object.
 */
export class ObjectStamp {
  /** Returns `target`: the subclass's field initialisers then run on it. */
  constructor(target: object) {
    return target
  }
}
