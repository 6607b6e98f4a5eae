import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The function 0004 replaces, as `sql/` holds it now. */
const FILE = 'functions/project_event.sql'

/**
 * The sessions whose projection the earlier `project_event` left wrong for a log written around the
 * store (both found by the raw-log differential): two live messages at one position (an append placed
 * at its seq next to the last summary of a compaction that placed more summaries than it covered), a
 * position past the session's version (the next append would collide), or a live message still
 * partial although a `message_finalized` of it follows the event holding its content (a summary
 * finalized while pending, placed partial). One grouped pass over `live_messages` and a probe per
 * partial live row; those sessions are replayed by the new `project_event` (their row locks are taken
 * first, as `rebuild_sessions_unchecked` requires).
 */
const REPAIR_SQL = `
do $repair$
declare
  v_ids uuid[];
begin
  select coalesce(array_agg(c.session_id order by c.session_id), '{}') into v_ids from (
    select l.session_id from turnlog.live_messages l join turnlog.sessions s on s.session_id = l.session_id
     group by l.session_id, s.version
    having count(distinct l.position) < count(*) or max(l.position) > s.version
    union
    select l.session_id from turnlog.live_messages l
     where l.partial
       and exists (select 1 from turnlog.events f
                    where f.message_id = l.message_id and f.session_id = l.session_id
                      and f.type = 'message_finalized' and f.seq > l.event_seq)) c;
  if cardinality(v_ids) > 0 then
    perform 1 from turnlog.sessions where session_id = any (v_ids) order by session_id for update;
    perform turnlog.rebuild_sessions_unchecked(v_ids);
  end if;
end
$repair$;
`

/**
 * 0004: `project_event` places a compaction's summaries as the spec does in two cases only a log
 * written around the store (an import) reaches: it keeps every live position at most the applying
 * event's seq (a compaction that would leave one past it numbers the live list again), so an append,
 * placed at its seq, always sorts last; and a summary finalized while it was pending is placed final.
 * Before it, such a log could leave an append and a summary at one position (`load` ordered the two
 * arbitrarily) or a finalized summary partial. Replaces the function in place (signature, owner and
 * privileges stay) and replays the sessions already affected; a no-op on a database 0001 created from
 * these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(replacementSql()).execute(db)
}

/** {@link FILE} made `create or replace function`, then {@link REPAIR_SQL}. */
function replacementSql(): string {
  return schemaFile(FILE).replace(/^create function /m, 'create or replace function ') + REPAIR_SQL
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0004_repair_compaction_placement cannot be reverted')
}
