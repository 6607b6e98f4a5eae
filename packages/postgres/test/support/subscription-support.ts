import { afterAll, beforeAll } from '@jest/globals'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore, type SubscribeOptions, type Subscription, type SubscriptionConfig } from '@turnlog/postgres'
import {
  createTestDatabase,
  findPostgresBinDir,
  migrateByOpening,
  startPrivateCluster,
  type PrivateCluster,
  type TestDatabase,
} from '@turnlog/testing'

/**
 * The setup of the commit-order subscription tests: a store on a fresh, migrated database of a Postgres
 * server of the file's own (when the binaries are there, about 1 s; else the shared test server), handed
 * to `ready` in `beforeAll`; closed, dropped and stopped in `afterAll`. The visibility horizon is
 * cluster-wide: on the shared server a transaction of another test file (in its own database) would hold
 * these events back. Correctness does not depend on it, only the waiting time. `ready` also gets the
 * cluster's admin URL (undefined on the shared server), for a test that needs a second database there,
 * and the database's connection string, for a test that needs a connection or a store of its own.
 */
export function usePrivateClusterStore(
  ready: (store: PostgresStore, adminUrl: string | undefined, connectionString: string) => void,
): void {
  let cluster: PrivateCluster | undefined
  let db: TestDatabase | undefined
  let store: PostgresStore | undefined
  beforeAll(async () => {
    cluster = findPostgresBinDir() === undefined ? undefined : await startPrivateCluster()
    db = await createTestDatabase({
      ...(cluster === undefined ? {} : { adminUrl: cluster.adminUrl }),
      migrate: migrateByOpening,
    })
    store = await openStore({ connectionString: db.connectionString, migrate: false })
    ready(store, cluster?.adminUrl, db.connectionString)
  }, 60_000)
  afterAll(async () => {
    await store?.close()
    await db?.drop()
    await cluster?.stop()
  })
}

export { gate } from './gate.js'

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `predicate` every 10 ms until it holds. After `timeoutMs` it fails naming `what` and, when given
 * a `store`, the oldest open transaction of the cluster then: delivery waits for the cluster-wide
 * visibility horizon, which any open transaction holds back. Given subscriptions, it also names each
 * one's state, error, checkpoint, delivered count and whether it was held back: a stalled consumer shows there.
 */
export async function waitFor(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  store?: PostgresStore,
  subscriptions: readonly Subscription[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > deadline) {
      if (store === undefined) throw new Error(`timed out waiting for ${what}`)
      const holder = await store.oldestOpenTransaction().catch((e: unknown) => `(could not ask: ${String(e)})`)
      const subs = subscriptions.map((s) => ({
        name: s.name,
        state: s.state,
        error: s.error?.code ?? null,
        checkpoint: s.checkpoint,
        delivered: s.delivered,
        heldBack: s.heldBack,
      }))
      throw new Error(
        `timed out waiting for ${what}; oldest open transaction in the cluster: ${JSON.stringify(holder)}` +
          (subs.length === 0 ? '' : `; subscriptions: ${JSON.stringify(subs)}`),
      )
    }
    await sleep(10)
  }
}

/** Subscribes `store` with a handler that records the seq of each event it is handed, in order. */
export function subscribeRecordingSeqs(
  store: PostgresStore,
  config: SubscriptionConfig,
  options?: SubscribeOptions,
): { sub: Subscription; seen: number[] } {
  const seen: number[] = []
  const sub = store.subscribe(
    config,
    (e) => {
      seen.push(e.seq)
    },
    options,
  )
  return { sub, seen }
}

/**
 * A new session of `store` with `n` user messages (`message 1` … `message n`) appended one per
 * transaction (so each has a transaction id of its own); returns the session and its messages.
 */
export async function sessionWith(store: PostgresStore, n: number): Promise<{ session: SessionId; messages: Message[] }> {
  const session = await store.createSession()
  const messages: Message[] = []
  for (let i = 1; i <= n; i++) {
    const m = createMessage({ role: 'user', content: `message ${i}` })
    messages.push(m)
    await store.append(session, [m])
  }
  return { session, messages }
}
