/** `true` only when `A` and `B` are the same type. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

/** Compiles only when `T` is `true`: `assertType<Equal<A, B>>()` fails `pnpm typecheck` when A and B differ. */
export function assertType<T extends true>(): T | undefined {
  return undefined
}
