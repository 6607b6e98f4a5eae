/**
 * A driver hook for tests: every statement a `pg.Client` of one database sends is logged with the time
 * it was handed to the driver (`start`: before it can reach the server) and the time its result was
 * handed back (`end`: after the server replied), optionally holding the reply back. It patches
 * `pg.Client.prototype.query`, so it sees every path of a store (Kysely's unnamed statements, the named
 * prepared statements of a `directConnection` store, transactions) without the store knowing.
 */
import pg from 'pg'

/** One statement as the driver saw it. */
export interface LoggedStatement {
  readonly text: string
  readonly values: readonly unknown[]
  /** `performance.now()` when the statement was handed to the driver. */
  readonly start: number
  /** `performance.now()` when its result (or error) was handed back; NaN while in flight. */
  end: number
}

/** What {@link logStatements} returns. */
export interface StatementLog {
  /** The statements sent to the database so far, in the order they were sent. */
  readonly statements: LoggedStatement[]
  /** How long to hold a statement's reply back (ms), decided when it is sent; default none. */
  hold: (statement: LoggedStatement) => number
  /**
   * An error to fail a statement with instead of sending it (after its hold), decided when it is sent;
   * default none. For refusals the server makes too rarely to provoke (a deadlock, a serialization failure).
   */
  fail: (statement: LoggedStatement) => Error | undefined
  /** Removes the hook. */
  restore(): void
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Logs the statements sent to `database` (its name) until `restore()`. One log at a time. */
export function logStatements(database: string): StatementLog {
  const proto = pg.Client.prototype as unknown as { query: Query }
  const original = proto.query
  const log: StatementLog = {
    statements: [],
    hold: () => 0,
    fail: () => undefined,
    restore: () => {
      proto.query = original
    },
  }
  proto.query = function (this: pg.Client, ...args: unknown[]): unknown {
    const [config, second, third] = args
    const submittable = typeof config === 'object' && config !== null && typeof (config as { submit?: unknown }).submit === 'function'
    if ((this as unknown as { database?: string }).database !== database || submittable) return original.apply(this, args)
    const callback = (typeof second === 'function' ? second : third) as ((error: unknown, result: unknown) => void) | undefined
    const values = Array.isArray(second) ? second : ((config as { values?: unknown[] } | null)?.values ?? [])
    const text = typeof config === 'string' ? config : String((config as { text?: unknown }).text)
    const entry: LoggedStatement = { text, values, start: performance.now(), end: Number.NaN }
    log.statements.push(entry)
    const ms = log.hold(entry)
    const failure = log.fail(entry)
    if (failure !== undefined) {
      const refused = sleep(ms).then(() => {
        entry.end = performance.now()
        throw failure
      })
      if (callback === undefined) return refused
      refused.catch((error: unknown) => callback(error, undefined))
      return undefined
    }
    if (callback !== undefined) {
      const rest = typeof second === 'function' ? [config] : [config, second]
      return original.apply(this, [
        ...rest,
        (error: unknown, result: unknown) => {
          void sleep(ms).then(() => {
            entry.end = performance.now()
            callback(error, result)
          })
        },
      ])
    }
    return (original.apply(this, args) as Promise<unknown>).then(
      async (result) => {
        await sleep(ms)
        entry.end = performance.now()
        return result
      },
      async (error: unknown) => {
        await sleep(ms)
        entry.end = performance.now()
        throw error
      },
    )
  }
  return log
}

/** The sessions an append statement writes (`append_messages`: `$1`; `append_batches`: the JSON list in `$1`). */
export function appendedSessions(s: LoggedStatement): string[] {
  if (s.text.includes('turnlog.append_messages(')) return [String(s.values[0])]
  if (s.text.includes('turnlog.append_batches(')) return JSON.parse(String(s.values[0])) as string[]
  return []
}
