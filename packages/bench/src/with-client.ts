import type pg from 'pg'

/** Runs `fn` with a client of `p`, released afterwards. */
export async function withClient<T>(p: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await p.connect()
  try {
    return await fn(c)
  } finally {
    c.release()
  }
}
