import type { PostgresCursor, PostgresPool, PostgresPoolClient } from 'kysely'
import type { Pool, PoolClient, QueryResult } from 'pg'

/**
 * The pool a store gives Kysely over a `pg` pool it opened: the same connections, with Kysely's
 * queries sent through `pg`'s callback form of `client.query`. Kysely calls the promise form, which
 * kept every result's rows alive through young collections (promoted, then freed by mark-compacts):
 * the same 100-message read cost 3.50 M instructions a call through the promise form against 2.74 M
 * through the callback form (docs/performance.md, "load"). Cursors go to `pg` as they are.
 */
export function callbackQueryPool(pool: Pool): PostgresPool {
  const wrappers = new WeakMap<PoolClient, PostgresPoolClient>()
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect()
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = callbackClient(client)
        wrappers.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}

/** `client` with `query(text, values)` answered through `pg`'s callback form. */
function callbackClient(client: PoolClient): PostgresPoolClient {
  const query = (textOrCursor: string | PostgresCursor<unknown>, parameters?: readonly unknown[]): unknown => {
    if (typeof textOrCursor !== 'string') return client.query(textOrCursor as never)
    return new Promise<QueryResult>((resolve, reject) => {
      // Kysely hands over a copy of its parameters already (`[...compiledQuery.parameters]`): passed as they are
      client.query(textOrCursor, (parameters ?? []) as unknown[], (error: Error | undefined, result: QueryResult) => {
        if (error) reject(error)
        else resolve(result)
      })
    })
  }
  return { query: query as PostgresPoolClient['query'], release: (destroy?: boolean) => client.release(destroy) }
}
