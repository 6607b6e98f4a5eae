export { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'

/** Every item of an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
