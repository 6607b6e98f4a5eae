import { StoreTelemetry, type TelemetryAttributes } from './store-telemetry.js'

/**
 * Method decorator of the store's public calls: the call runs through the {@link StoreTelemetry}
 * attached to the store, in span `turnlog.<operation>`; the first argument, when a string, is the
 * session id (`gen_ai.conversation.id`; not with `sessionArgument: false`, for a call whose first
 * argument is something else), and `attributes` adds what the result says (counts, version).
 * Without telemetry attached the method runs as written.
 */
export function traced<This extends object, A extends unknown[], R>(
  operation: string,
  attributes?: (result: R) => TelemetryAttributes,
  { sessionArgument = true }: { readonly sessionArgument?: boolean } = {},
) {
  const name = `turnlog.${operation}`
  return (
    method: (this: This, ...args: A) => Promise<R>,
    _context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => Promise<R>>,
  ) =>
    function (this: This, ...args: A): Promise<R> {
      const telemetry = StoreTelemetry.of(this)
      if (telemetry === undefined) return method.apply(this, args)
      return telemetry.span(operation, name, sessionArgument ? args[0] : undefined, () => method.apply(this, args), attributes)
    }
}

/**
 * As {@link traced}, for a method that returns an async generator (`events`): the span covers the
 * iteration, and `turnlog.events.count` counts what it yielded. Whether anything listens is decided
 * when the method is called (a generator made inside another store call is that call's).
 */
export function tracedIteration<This extends object, A extends unknown[], T>(operation: string) {
  const name = `turnlog.${operation}`
  return (
    method: (this: This, ...args: A) => AsyncGenerator<T>,
    _context: ClassMethodDecoratorContext<This, (this: This, ...args: A) => AsyncGenerator<T>>,
  ) =>
    function (this: This, ...args: A): AsyncGenerator<T> {
      const telemetry = StoreTelemetry.of(this)
      const source = method.apply(this, args)
      return telemetry === undefined ? source : telemetry.iterate(operation, name, args[0], source)
    }
}
