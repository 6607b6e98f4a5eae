import { sql, type Kysely } from 'kysely'

/**
 * A checkpoint row's `checkpoint` and `metadata` as `json` (the text as the saver wrote it) instead of
 * `jsonb` (its binary form, which spends a length and an offset on every key and value: ≈ 200 B for a
 * typical checkpoint, 65 for its metadata, against ≈ 125 and 45 as text). The saver only reads the
 * row back whole; the metadata filter of `list` casts to `jsonb` where it compares. The view over the
 * rows is created again for the type (`json_each_text`); `checkpoint_row`, which returned the view's
 * row type, is dropped (unused since 0002).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop function if exists turnlog_langgraph.checkpoint_row(text, text, text)`.execute(db)
  // the view over the rows depends on the columns' type: dropped and created again from its own
  // definition, with json_each_text for jsonb_each_text (its only jsonb-only call)
  await sql`
    do $do$
    declare
      v_def text := pg_get_viewdef('turnlog_langgraph.checkpoint_rows'::regclass);
    begin
      drop view turnlog_langgraph.checkpoint_rows;
      alter table turnlog_langgraph.checkpoints
        alter column checkpoint type json using checkpoint::json,
        alter column metadata drop default,
        alter column metadata type json using metadata::json,
        alter column metadata set default '{}'::json;
      execute 'create view turnlog_langgraph.checkpoint_rows as ' || replace(v_def, 'jsonb_each_text(', 'json_each_text(');
    end
    $do$`.execute(db)
}
