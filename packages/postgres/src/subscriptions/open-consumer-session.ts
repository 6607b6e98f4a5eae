import { TurnlogError } from '@turnlog/core'
import { sql, type Kysely } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'
import { kyselyOnClient, type DedicatedConnectionFactory } from './dedicated-connection.js'
import { claimInProcess, releaseInProcess, tryLockSubscription } from './subscription-lock.js'

/** The channel the `events_notify` trigger notifies on every commit that inserted events. */
export const EVENTS_CHANNEL = 'turnlog_events'

/** Everything a running subscription needs from its store. */
export interface SubscriptionHost {
  /** The store's Kysely: PGlite consumers run on it; `lag()` and `catchUp()` read through it. */
  readonly db: Kysely<unknown>
  readonly flavor: 'postgres' | 'pglite'
  /** Opens the consumer's own Postgres session (lock, LISTEN); required on Postgres. */
  readonly dedicatedConnection: DedicatedConnectionFactory | undefined
  /**
   * Runs a handler call marked as inside the store's calls: the store's `close()` from it refuses (it
   * would wait for itself). `holdsConnection`: the call runs in the consumer's transaction on the store's
   * own connection (PGlite, transactional), where the store's own calls refuse too.
   */
  readonly inside?: <T>(fn: () => Promise<T>, holdsConnection?: boolean) => Promise<T>
}

/**
 * The server-side TCP settings of a consumer's session, each set unless the server, database or role
 * sets that one (at their defaults, the OS's keep-alive: 2 h 11 min on Linux). If the consumer's
 * host or network goes away, the server ends the session after about 25 s of silence, which releases
 * the name's lock for a waiting consumer: keep-alive probes after 10 s idle, 5 s apart, on an idle
 * connection; `tcp_user_timeout` (ms) when the server has sent something unacknowledged (a
 * notification), which stops keep-alive until retransmission gives up (≈ 15 min on Linux). The
 * client's own keep-alive (`keepAlive` of `pg`) cannot do this: only the server can end the session
 * that holds the lock. Per setting, not all or none: an operator who sets only the keep-alive still
 * gets the `tcp_user_timeout`, without which a holder that vanished with data in flight keeps the lock
 * for the kernel's retransmission time.
 */
const CONSUMER_TCP_SETTINGS: Readonly<Record<string, string>> = {
  tcp_keepalives_idle: '10',
  tcp_keepalives_interval: '5',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '25000',
}

/** A consumer's place to run statements, with its lock. */
export interface ConsumerSession {
  readonly db: Kysely<unknown>
  tryLock(): Promise<boolean>
  listen(onNotify: () => void): Promise<void>
  close(): Promise<void>
}

/** How a consumer session behaves. */
export interface ConsumerSessionOptions {
  /** The subscription's name: the lock's key, and the connection's `application_name`. */
  readonly name: string
  /** LISTEN for commits (else `listen` does nothing). */
  readonly listen: boolean
  /** Called when the connection reports an error: the next statement then reports it broken. */
  readonly onBroken: () => void
}

/**
 * Opens the session a consumer runs on. PGlite: the store's own Kysely (one connection, one process),
 * an in-process claim, polling only. Postgres: a dedicated connection (`host.dedicatedConnection`),
 * visible in `pg_stat_activity` as `turnlog subscription <name>`, with the name's advisory lock and
 * LISTEN on {@link EVENTS_CHANNEL}.
 */
export async function openConsumerSession(host: SubscriptionHost, options: ConsumerSessionOptions): Promise<ConsumerSession> {
  const { name } = options
  if (host.flavor === 'pglite') {
    const owner = host.db
    let claimed = false
    return {
      db: owner,
      tryLock: async () => (claimed ||= claimInProcess(owner, name)),
      listen: async () => {},
      close: async () => {
        if (claimed) releaseInProcess(owner, name)
        claimed = false
      },
    }
  }
  const factory = host.dedicatedConnection
  if (factory === undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      'this store has no connection settings for a subscription (opened with { kysely }): pass { connectionString } in the subscribe options',
      { details: { field: 'options.connectionString' } },
    )
  }
  let connection
  try {
    connection = await factory()
  } catch (error) {
    throw mapDatabaseError(error)
  }
  const { client } = connection
  const db = kyselyOnClient(client)
  let onNotification: ((message: { channel: string }) => void) | null = null
  const onError = (): void => options.onBroken() // the next statement reports the broken connection
  client.on('error', onError)
  try {
    // visible in pg_stat_activity; a vanished consumer's session ends (see CONSUMER_TCP_SETTINGS)
    const tcp = JSON.stringify(CONSUMER_TCP_SETTINGS)
    await sql`
      select set_config('application_name', ${`turnlog subscription ${name}`.slice(0, 63)}, false),
             (select count(set_config(k.name, k.value, false))
                from jsonb_each_text(${tcp}::jsonb) as k(name, value)
               where not exists (select from pg_catalog.pg_settings s
                                  where s.name = k.name and s.source <> 'default'))`.execute(db)
  } catch (error) {
    client.removeListener('error', onError)
    await connection.close()
    throw error
  }
  return {
    db,
    tryLock: () => tryLockSubscription(db, name),
    listen: async (onNotify) => {
      if (!options.listen) return
      onNotification = (message) => {
        if (message.channel === EVENTS_CHANNEL) onNotify()
      }
      client.on('notification', onNotification)
      await sql.raw(`listen ${EVENTS_CHANNEL}`).execute(db)
    },
    close: async () => {
      if (onNotification !== null) client.removeListener('notification', onNotification)
      client.removeListener('error', onError)
      await connection.close()
    },
  }
}
