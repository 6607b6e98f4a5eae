/**
 * A JSON copy of a value the AI SDK hands over: its messages may carry `undefined` fields (absent in
 * JSON, so absent after a load) and objects made by `structuredClone` in another realm, which turnlog
 * refuses as not plain. The copy is what a client receives over the wire.
 */
export function plainJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}
