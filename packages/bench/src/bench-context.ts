import type { PostgresStore } from '@turnlog/postgres'
import type pg from 'pg'
import type { Args, WORKLOADS } from './parse-args.js'

/** What every workload of a bench run shares: the command line, the databases and the connections. */
export interface BenchContext {
  readonly args: Args
  /** True when `--only` names the workload (or there is no `--only`). */
  readonly wants: (name: (typeof WORKLOADS)[number]) => boolean
  /** A connection to the admin database (`--database-url`), to create and drop databases. */
  readonly admin: pg.Client
  /** The run's own database. */
  readonly dbName: string
  readonly connectionString: string
  /** The raw baseline's pool on the run's database (its tables in `bench_raw`). */
  readonly rawPool: pg.Pool
  /** turnlog's store on the run's database. */
  readonly store: PostgresStore
  /** Concurrent writers of the append workloads. */
  readonly writers: number
  /** Databases a workload created besides the run's own: main drops them at the end, whatever happened. */
  readonly extraDatabases: string[]
}
