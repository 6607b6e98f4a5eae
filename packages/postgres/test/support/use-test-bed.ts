import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type ConnectionStringConfig, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { createLoginRole, dropLoginRoles, type LoginRole, type LoginRoleOptions } from '../security/support/security-fixtures.js'

/**
 * What the setup of a test file that connects in several ways gets from {@link useTestBed}: its own
 * migrated database, and ways to open stores, create login roles and start other resources that are all
 * released in `afterAll`.
 */
export interface TestBed {
  /** The file's own database on the test server, migrated. */
  readonly db: TestDatabase
  /** A store on the database as its owner, with the default options (it migrates: nothing is pending). */
  admin(): Promise<PostgresStore>
  /**
   * A store on `connectionString` (a role's, a proxy's): by default it does not migrate (a role may not)
   * and has a pool of 2; `options` override that.
   */
  open(connectionString: string, options?: Omit<ConnectionStringConfig, 'connectionString'>): Promise<PostgresStore>
  /** A login role of the database ({@link createLoginRole}), dropped after the database. */
  role(prefix: string, options: LoginRoleOptions): Promise<LoginRole>
  /** Releases a resource the setup started (a proxy, a pooler) in `afterAll`. */
  defer(release: () => Promise<unknown>): void
}

/**
 * In `beforeAll`: a fresh migrated database, handed to `setup` with the means to open what the file
 * needs. In `afterAll`: what was opened or deferred released in reverse order (so stores close before
 * the proxy they go through), then the database dropped, then the login roles dropped (roles are
 * cluster-wide). Each step is skipped if the setup failed before it. Call it at the top level of a test
 * file or inside a `describe`; `setup` may keep the bed to create roles or stores in a test.
 */
export function useTestBed(setup: (bed: TestBed) => Promise<void>): void {
  let db: TestDatabase | undefined
  const releases: (() => Promise<unknown>)[] = []
  const roles: LoginRole[] = []
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    const own = db
    const track = (store: PostgresStore): PostgresStore => {
      releases.push(() => store.close())
      return store
    }
    await setup({
      db: own,
      admin: async () => track(await openStore({ connectionString: own.connectionString })),
      open: async (connectionString, options = {}) =>
        track(await openStore({ migrate: false, pool: { max: 2 }, ...options, connectionString })),
      role: async (prefix, options) => {
        const role = await createLoginRole(own, prefix, options)
        roles.push(role)
        return role
      },
      defer: (release) => {
        releases.push(release)
      },
    })
  })
  afterAll(async () => {
    for (const release of releases.reverse()) await release()
    await db?.drop()
    await dropLoginRoles(roles)
  })
}
