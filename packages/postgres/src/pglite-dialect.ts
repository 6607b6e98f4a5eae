import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite'
import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { checkMethods } from './check-arguments.js'
import {
  AbortedTransactionError,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'

/** Configuration of {@link PGliteDialect}. */
export interface PGliteDialectConfig {
  /** An open PGlite instance (the caller keeps ownership unless `closeOnDestroy`). */
  readonly pglite: PGlite
  /** Close the PGlite instance when the Kysely instance is destroyed. */
  readonly closeOnDestroy?: boolean
}

/**
 * A Kysely dialect for embedded PGlite (kysely 0.28 ships none). PGlite is one connection, so the
 * driver hands it out to one holder at a time; everything else (SQL, compiler, adapter) is the
 * Postgres dialect's.
 */
export class PGliteDialect implements Dialect {
  readonly #config: PGliteDialectConfig

  /** Throws `INVALID_INPUT` unless `config.pglite` is a PGlite instance (by shape) and `closeOnDestroy` a boolean. */
  constructor(config: PGliteDialectConfig) {
    checkMethods(
      guardInput('config', () => (typeof config === 'object' && config !== null ? config.pglite : undefined)),
      'config.pglite',
      'a PGlite instance',
      ['query', 'exec', 'close'],
    )
    const closeOnDestroy = guardInput('config', () => config.closeOnDestroy)
    if (closeOnDestroy !== undefined && typeof closeOnDestroy !== 'boolean') {
      throw new TurnlogError('INVALID_INPUT', 'config.closeOnDestroy must be a boolean', { details: { field: 'config.closeOnDestroy' } })
    }
    this.#config = { pglite: config.pglite, ...(closeOnDestroy === undefined ? {} : { closeOnDestroy }) }
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#config)
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler()
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter()
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db)
  }
}

class PGliteDriver implements Driver {
  readonly #config: PGliteDialectConfig
  readonly #connection: PGliteConnection
  #queue: Promise<void> = Promise.resolve()
  #release: (() => void) | null = null

  constructor(config: PGliteDialectConfig) {
    this.#config = config
    this.#connection = new PGliteConnection(config.pglite)
  }

  async init(): Promise<void> {
    await this.#config.pglite.waitReady
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // a FIFO mutex: each acquirer waits for the previous holder's release
    const previous = this.#queue
    let release!: () => void
    this.#queue = new Promise<void>((resolve) => {
      release = resolve
    })
    await previous
    this.#release = release
    return this.#connection
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (connection as PGliteConnection).begin(settings)
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).end(false)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PGliteConnection).end(true)
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release
    this.#release = null
    release?.()
  }

  async destroy(): Promise<void> {
    // a transaction nobody ended (a caller's controlled transaction left open) holds the instance's
    // transaction lock: roll it back, or closing the instance (and every later statement on a
    // caller's instance) would wait for it forever
    if (!this.#config.pglite.closed) await this.#connection.end(true).catch(() => {})
    if (this.#config.closeOnDestroy === true && !this.#config.pglite.closed) await this.#config.pglite.close()
  }
}

/**
 * PGlite decodes every text field of a result with a `TextDecoder` that strips a leading U+FEFF (byte
 * order mark), and offers no hook before that decoding: a text value that starts with one would be
 * stored whole and come back without it. Such a parameter (or array element) is refused instead, so
 * nothing is lost silently. JSON parameters never start with one (their text starts with `{`, `[`,
 * `"`, …), so BOMs inside JSON values (payloads, metadata, meta) are stored and returned exactly.
 */
function refuseLeadingBom(parameters: readonly unknown[]): void {
  const stack: unknown[] = [...parameters]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === 'string') {
      if (value.charCodeAt(0) === 0xfeff) {
        throw new TurnlogError(
          'INVALID_INPUT',
          'a text value starting with U+FEFF (byte order mark) cannot be stored on PGlite: PGlite drops that character when it reads the value back',
          {
            details: { reason: 'pglite-leading-bom' },
          },
        )
      }
    } else if (Array.isArray(value)) {
      stack.push(...(value as unknown[]))
    }
  }
}

/** A transaction the connection holds open: PGlite's own, and how to end it. */
interface OpenTransaction {
  readonly tx: PGliteTransaction
  /** Ends the transaction: rolls it back (true) or lets PGlite commit it (false). */
  readonly finish: (rollback: boolean) => void
  /** Settles when the transaction has ended: rejects when its COMMIT or ROLLBACK failed. */
  readonly outcome: Promise<void>
}

/**
 * The one connection of a PGlite instance. A transaction is one of PGlite's own (`pglite.transaction`),
 * held open from `begin` to `end`: it holds the instance's transaction lock, so every other user of the
 * instance (another store opened on it with `{ pglite }`, another Kysely instance, the caller's own
 * `pglite.query`) waits until it ends instead of running its statements inside it (where a rollback
 * took them along, acknowledged or not, and a failed statement aborted it). Outside a transaction
 * each statement runs on its own, as `pglite.query` runs it.
 */
class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite
  #open: OpenTransaction | null = null

  constructor(pglite: PGlite) {
    this.#pglite = pglite
  }

  /** Opens a transaction (PGlite sends BEGIN once every other transaction on the instance has ended). */
  async begin(settings: TransactionSettings): Promise<void> {
    if (this.#open !== null) throw new TurnlogError('INVALID_INPUT', 'a transaction is already open on this PGlite connection')
    let finish!: (rollback: boolean) => void
    const decided = new Promise<boolean>((resolve) => {
      finish = resolve
    })
    let opened!: (tx: PGliteTransaction) => void
    const open = new Promise<PGliteTransaction>((resolve) => {
      opened = resolve
    })
    const outcome = this.#pglite.transaction(async (tx) => {
      opened(tx)
      if (await decided) await tx.rollback()
    })
    // a BEGIN that failed rejects `outcome` before the transaction opened
    const tx = await Promise.race([open, outcome.then(() => open)])
    this.#open = { tx, finish, outcome }
    const characteristics = [
      ...(settings.isolationLevel ? [`isolation level ${settings.isolationLevel}`] : []),
      ...(settings.accessMode ? [settings.accessMode] : []),
    ]
    if (characteristics.length === 0) return
    try {
      await tx.exec(`set transaction ${characteristics.join(' ')}`)
    } catch (error) {
      // Kysely does not roll back a transaction whose begin failed: end it here, or it holds the instance
      await this.end(true).catch(() => {})
      throw error
    }
  }

  /**
   * Ends the open transaction (none open: nothing to do, as after a COMMIT that failed). A COMMIT that
   * the server completed as a ROLLBACK (an earlier statement failed and aborted the transaction) is
   * Kysely's `AbortedTransactionError`, as the Postgres dialect reports it: never a silent success.
   */
  async end(rollback: boolean): Promise<void> {
    const open = this.#open
    if (open === null) return
    this.#open = null
    open.finish(rollback)
    try {
      await open.outcome
    } catch (error) {
      if (!rollback && (error as { code?: unknown } | null)?.code === '25P02') throw new AbortedTransactionError()
      throw error
    }
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.#open?.tx ?? this.#pglite
    if (compiledQuery.parameters.length === 0) {
      // the simple protocol: allows several statements (migrations), like node-postgres does
      const results = await target.exec(compiledQuery.sql)
      const last = results[results.length - 1]
      return {
        rows: (last?.rows ?? []) as R[],
        ...(last?.affectedRows !== undefined ? { numAffectedRows: BigInt(last.affectedRows) } : {}),
      }
    }
    refuseLeadingBom(compiledQuery.parameters)
    const result = await target.query<R>(compiledQuery.sql, [...compiledQuery.parameters], { rowMode: 'object' })
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new TurnlogError('INVALID_INPUT', 'PGlite does not support streaming queries; page with keyset queries instead', {
      details: { operation: 'stream' },
    })
  }
}
