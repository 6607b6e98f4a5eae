import { TurnlogError } from '@turnlog/core'
import { checkKnownKeys, guardInput } from '@turnlog/core/internal'

/** The cluster-wide group roles turnlog's schema is built on (see docs/security.md). */
export const TURNLOG_ROLES = ['turnlog_owner', 'turnlog_writer', 'turnlog_reader'] as const

/** Options of {@link rolesSql}. */
export interface RolesSqlOptions {
  /** The login that will run `turnlog migrate`: the script grants it `turnlog_owner`. */
  readonly migrator?: string
}

/** A role name as a quoted SQL identifier. */
function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * The SQL a DBA runs once per cluster (as a superuser or a role with `CREATEROLE`) so that a login
 * without `CREATEROLE` can run turnlog's migrations: it creates the three `NOLOGIN` group roles when
 * they are missing (idempotent, safe to run again) and, with `migrator`, grants that login
 * `turnlog_owner`. The migration's roles step then only checks that they exist. `turnlog migrate
 * --roles-sql` prints it. Throws `INVALID_INPUT` for a migrator name that is not a role name.
 */
export function rolesSql(options: RolesSqlOptions = {}): string {
  if (typeof options !== 'object' || options === null)
    throw new TurnlogError('INVALID_INPUT', 'rolesSql options must be an object', { details: { field: 'options' } })
  // a throwing getter or revoked Proxy is the caller's input: INVALID_INPUT, not a raw error
  const migrator: unknown = guardInput('rolesSql options', () => options.migrator)
  // a misspelt `migrator` would print a script that grants nobody turnlog_owner
  checkKnownKeys(options, ['migrator'], 'options', 'rolesSql')
  // 63 bytes, not characters: Postgres cuts a longer name to 63 bytes, so the script would grant
  // turnlog_owner to another role, the one named by the cut name
  if (
    migrator !== undefined &&
    (typeof migrator !== 'string' || migrator === '' || new TextEncoder().encode(migrator).length > 63 || migrator.includes('\u0000'))
  ) {
    throw new TurnlogError('INVALID_INPUT', 'migrator must be a role name (1-63 bytes in UTF-8, no NUL)', {
      details: { field: 'options.migrator' },
    })
  }
  const create = TURNLOG_ROLES.map(
    (r) => `  if not exists (select 1 from pg_catalog.pg_roles where rolname = '${r}') then\n    create role ${r} nologin;\n  end if;`,
  ).join('\n')
  const lines = [
    '-- turnlog: the cluster roles, once per cluster, as a superuser or a role with CREATEROLE (docs/operations.md)',
    'do $turnlog_roles$',
    'begin',
    create,
    'end',
    '$turnlog_roles$;',
  ]
  if (migrator !== undefined) {
    lines.push('-- the login that runs `turnlog migrate` acts as the schema owner', `grant turnlog_owner to ${quoteIdentifier(migrator)};`)
  } else {
    lines.push('-- then let the login that runs `turnlog migrate` act as the schema owner:', '-- grant turnlog_owner to <migrating login>;')
  }
  return `${lines.join('\n')}\n`
}
