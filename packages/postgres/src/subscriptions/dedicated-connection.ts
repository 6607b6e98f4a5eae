import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import type { ClientBase, ClientConfig, Pool } from 'pg'

/**
 * One database session that belongs to one subscription consumer: it holds the consumer's advisory
 * lock and its LISTEN, so it must never be shared or returned to a pool in that state.
 */
export interface DedicatedConnection {
  /** The session (a `pg.Client`, or a client checked out of a `pg.Pool`). */
  readonly client: ClientBase
  /** Ends the session; the server then drops its advisory locks and LISTENs. Never throws. */
  close(): Promise<void>
}

/** Opens a {@link DedicatedConnection}. */
export type DedicatedConnectionFactory = () => Promise<DedicatedConnection>

/**
 * A factory that opens a new `pg.Client` per consumer, with TCP keep-alive on (so a dead peer is
 * noticed and its lock released). `config` is the store's connection settings (pool-only fields are
 * ignored by `pg.Client`).
 */
export function dedicatedConnectionFromConfig(config: ClientConfig): DedicatedConnectionFactory {
  return async () => {
    const pg = await import('pg')
    const client = new pg.default.Client({ keepAlive: true, ...config })
    // a broken idle connection emits 'error'; the consumer notices at its next query
    client.on('error', () => {})
    await client.connect()
    return {
      client,
      close: async () => {
        await client.end().catch(() => {})
      },
    }
  }
}

/**
 * A factory that checks a client out of the caller's `pg.Pool` per consumer and destroys it on close
 * (never returns it: it held a session lock and a LISTEN). Each running consumer occupies one pool slot.
 */
export function dedicatedConnectionFromPool(pool: Pool): DedicatedConnectionFactory {
  return async () => {
    const client = await pool.connect()
    const onError = (): void => {}
    client.on('error', onError)
    return {
      client,
      close: async () => {
        client.removeListener('error', onError)
        client.release(true)
      },
    }
  }
}

/**
 * A Kysely instance whose only connection is `client`. Queries take the connection one holder at a
 * time (a FIFO mutex), so a transaction on it never interleaves with another statement; code inside a
 * transaction must use the transaction, never this instance (it would wait for itself).
 * `destroy()` does not close the client.
 */
export function kyselyOnClient(client: ClientBase): Kysely<unknown> {
  let queue: Promise<void> = Promise.resolve()
  const pool: PostgresPool = {
    connect: async (): Promise<PostgresPoolClient> => {
      const previous = queue
      let release!: () => void
      queue = new Promise<void>((resolve) => {
        release = resolve
      })
      await previous
      let released = false
      return {
        query: ((text: string, parameters: readonly unknown[]) =>
          client.query(text, [...parameters])) as unknown as PostgresPoolClient['query'],
        release: () => {
          if (released) return
          released = true
          release()
        },
      }
    },
    end: async () => {},
  }
  return new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) })
}
