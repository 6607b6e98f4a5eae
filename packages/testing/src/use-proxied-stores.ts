import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from './create-test-database.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

/** What {@link useProxiedStores} hands to its callback: a database, a TCP proxy to it and a store on each path. */
export interface ProxiedStores {
  /** The fresh test database. */
  readonly db: TestDatabase
  /** The proxy between `viaProxy` and the server (faults: a lost acknowledgement, a dropped connection). */
  readonly proxy: TcpProxy
  /** A store connected straight to the database (migrated it; the side that checks). */
  readonly direct: PostgresStore
  /** A store connected through the proxy (`migrate: false`, a pool of 2). */
  readonly viaProxy: PostgresStore
}

/**
 * The setup of the lost-acknowledgement tests: in `beforeAll`, a fresh database, a store on it, a TCP
 * proxy to its server and a second store through the proxy, handed to `ready`; in `afterAll`, both
 * stores and the proxy closed and the database dropped (whatever was created). Call it at the top level
 * of a test file or inside a `describe`.
 * @example
 * ```ts
 * let proxied: ProxiedStores
 * useProxiedStores((p) => (proxied = p))
 * ```
 */
export function useProxiedStores(ready: (opened: ProxiedStores) => void): void {
  let db: TestDatabase | undefined
  let proxy: TcpProxy | undefined
  let direct: PostgresStore | undefined
  let viaProxy: PostgresStore | undefined
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    direct = await openStore({ connectionString: db.connectionString })
    const url = new URL(db.connectionString)
    proxy = await startTcpProxy({ targetHost: url.hostname, targetPort: Number(url.port || 5432) })
    viaProxy = await openStore({ connectionString: proxy.url(db.connectionString), migrate: false, pool: { max: 2 } })
    ready({ db, proxy, direct, viaProxy })
  })
  afterAll(async () => {
    await viaProxy?.close()
    await direct?.close()
    await proxy?.close()
    await db?.drop()
  })
}
