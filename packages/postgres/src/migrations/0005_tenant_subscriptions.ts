import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The functions 0005 creates or replaces, as `sql/` holds them now. */
const FUNCTION_FILES = [
  'functions/events_notify.sql',
  'functions/subscription_create.sql',
  'functions/subscription_move.sql',
  'functions/subscription_renew_lease.sql',
  'functions/subscription_record_error.sql',
  'functions/subscription_drop.sql',
  'functions/subscription_rebase.sql',
] as const

/**
 * The table change, a no-op on a table `sql/tables/subscriptions.sql` created (it has
 * `subscription_id`): the column `tenant_id` (existing rows get none), the key `(name, tenant_id)`
 * (nulls not distinct) instead of the primary key on `name`, and a surrogate primary key
 * `subscription_id`, both columns last as the file has them.
 */
const TABLE_SQL = `
do $do$
begin
  if not exists (select 1 from pg_catalog.pg_attribute
                  where attrelid = 'turnlog.subscriptions'::regclass and attname = 'subscription_id' and not attisdropped) then
    alter table turnlog.subscriptions add column tenant_id text;
    alter table turnlog.subscriptions drop constraint subscriptions_pkey;
    alter table turnlog.subscriptions alter column name set not null;
    alter table turnlog.subscriptions add column subscription_id bigint generated always as identity primary key;
    alter table turnlog.subscriptions add constraint subscriptions_name_tenant_key unique nulls not distinct (name, tenant_id);
  end if;
end
$do$;
drop policy if exists subscriptions_tenant on turnlog.subscriptions;
`

/** The new functions' owner and the privileges sql/ownership.sql and sql/grants.sql give them and the table. */
const PRIVILEGES_SQL = `
alter function turnlog.subscription_create(text, text, xid8, bigint) owner to turnlog_owner;
alter function turnlog.subscription_move(text, text, xid8, bigint, xid8, bigint, bigint) owner to turnlog_owner;
alter function turnlog.subscription_renew_lease(text, text, double precision) owner to turnlog_owner;
alter function turnlog.subscription_record_error(text, text, json) owner to turnlog_owner;
alter function turnlog.subscription_drop(text, text) owner to turnlog_owner;
alter function turnlog.subscription_rebase(text, text, xid8, bigint) owner to turnlog_owner;
revoke all on turnlog.subscriptions from public;
revoke all on turnlog.subscriptions from turnlog_writer, turnlog_reader;
grant select on turnlog.subscriptions to turnlog_writer, turnlog_reader;
revoke all on function turnlog.events_notify() from public;
revoke all on function turnlog.subscription_create(text, text, xid8, bigint) from public;
grant execute on function turnlog.subscription_create(text, text, xid8, bigint) to turnlog_writer;
revoke all on function turnlog.subscription_move(text, text, xid8, bigint, xid8, bigint, bigint) from public;
grant execute on function turnlog.subscription_move(text, text, xid8, bigint, xid8, bigint, bigint) to turnlog_writer;
revoke all on function turnlog.subscription_renew_lease(text, text, double precision) from public;
grant execute on function turnlog.subscription_renew_lease(text, text, double precision) to turnlog_writer;
revoke all on function turnlog.subscription_record_error(text, text, json) from public;
grant execute on function turnlog.subscription_record_error(text, text, json) to turnlog_writer;
revoke all on function turnlog.subscription_drop(text, text) from public;
grant execute on function turnlog.subscription_drop(text, text) to turnlog_writer;
revoke all on function turnlog.subscription_rebase(text, text, xid8, bigint) from public;
grant execute on function turnlog.subscription_rebase(text, text, xid8, bigint) to turnlog_writer;
`

/**
 * 0005: subscription checkpoints belong to a tenant. `turnlog.subscriptions` gets `tenant_id` (existing
 * rows: none; docs/operations.md says how to assign them) and is keyed by `(name, tenant_id)`, so two
 * tenants may use the same name; a row policy shows a caller its tenant's checkpoints only (the rule of
 * sessions). Writers lose every write privilege on the table (so they can no longer lock it in a mode
 * that blocks consumers) and write checkpoints through the new SECURITY DEFINER functions
 * `subscription_create`, `subscription_move`, `subscription_renew_lease`, `subscription_record_error`,
 * `subscription_drop` and `subscription_rebase`, which apply the same rule. `events_notify` becomes
 * SECURITY DEFINER so that a tenant's insert still sees every tenant's listening lease. A no-op on a
 * database 0001 created from these files (docs/security.md, docs/subscriptions.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(migrationSql()).execute(db)
}

/** The whole step: table, functions, policy, ownership and privileges. */
function migrationSql(): string {
  const functions = FUNCTION_FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function ')).join('\n')
  return [TABLE_SQL, functions, schemaFile('policies/subscriptions.sql'), PRIVILEGES_SQL].join('\n')
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0005_tenant_subscriptions cannot be reverted')
}
