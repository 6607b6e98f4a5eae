import type { PGlite } from '@electric-sql/pglite'
import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { checkMethods } from './check-arguments.js'
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
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
    let text = 'begin'
    if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`
    if (settings.accessMode) text += ` ${settings.accessMode}`
    await connection.executeQuery(CompiledQuery.raw(text))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release
    this.#release = null
    release?.()
  }

  async destroy(): Promise<void> {
    if (this.#config.closeOnDestroy === true && !this.#config.pglite.closed) await this.#config.pglite.close()
  }
}

class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite

  constructor(pglite: PGlite) {
    this.#pglite = pglite
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (compiledQuery.parameters.length === 0) {
      // the simple protocol: allows several statements (migrations), like node-postgres does
      const results = await this.#pglite.exec(compiledQuery.sql)
      const last = results[results.length - 1]
      return {
        rows: (last?.rows ?? []) as R[],
        ...(last?.affectedRows !== undefined ? { numAffectedRows: BigInt(last.affectedRows) } : {}),
      }
    }
    const result = await this.#pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters], { rowMode: 'object' })
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
