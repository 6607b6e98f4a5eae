import { sql, type Kysely } from 'kysely'

/**
 * 0007: a set-based write path for `importEvents` (see docs/schema.md, "Import").
 *
 * - `turnlog.import_events` inserts many sessions' events in one statement. The caller supplies each
 *   event's chain link (the export file's); the function computes every link itself from the previous
 *   event's (the previous row of the call, else the stored event), stores the link it computed, and
 *   raises `TLC02` on the first event whose computed link differs from the supplied one. One event's
 *   link depends only on the previous supplied link and the event's own fields, so every link is
 *   checked in one pass (a window function), without a per-row trigger call and its lookup.
 * - The chain triggers (`events_link`, which also checks commit order since 0005, and
 *   `events_link_scrubbed`) skip a row only when it already carries a link and the inserting role is `turnlog_owner`:
 *   only SECURITY DEFINER functions run as the owner, and writers may not insert `hash` at all (0003),
 *   so the one path that stores a link it did not compute row by row is this function, which
 *   verified it. The projection and notify statement triggers fire as for every insert.
 *
 * Released migrations are never edited; later changes get new files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: importEvents calls `import_events`. */
export async function down(): Promise<void> {
  throw new Error('0007_speed_up_import cannot be reverted')
}

const SQL = String.raw`
-- The row triggers of the chain skip rows import_events linked (and verified) itself. Recreated with the
-- same name, function and order (BEFORE triggers fire in name order).
do $do$
declare
  r record;
begin
  for r in select t.tgname::text as name, t.tgfoid::regproc::text as fn from pg_catalog.pg_trigger t
            where t.tgrelid = 'turnlog.events'::regclass and not t.tgisinternal
              and t.tgname in ('events_link', 'events_link_scrubbed')
  loop
    execute format('drop trigger %I on turnlog.events', r.name);
    execute format('create trigger %I before insert on turnlog.events for each row when (%s) execute function %s()',
      r.name,
      case r.name when 'events_link_scrubbed' then 'new.payload_digest is not null and ' else '' end
        || '(new.hash is null or current_user <> ''turnlog_owner'')',
      r.fn);
  end loop;
end
$do$;

-- The stored predecessor of the first event of a session in an import_events call (the same checks as
-- the link trigger: it must exist, TLC01; its transaction must not be later than this one, 40001).
create function turnlog.import_predecessor(p_session uuid, p_seq bigint) returns bytea language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_hash bytea;
  v_tx xid8;
begin
  select e.hash, e.tx_id into v_hash, v_tx from turnlog.events e where e.session_id = p_session and e.seq = p_seq - 1;
  if v_hash is null then
    raise exception 'turnlog: event % of session % has no predecessor', p_seq, p_session using errcode = 'TLC01';
  end if;
  if v_tx > pg_current_xact_id() then
    raise exception 'turnlog: session % was appended to by a later transaction that committed first; retry the transaction', p_session
      using errcode = '40001',
            detail = format('this transaction id %s, event %s written by transaction %s', pg_current_xact_id(), p_seq - 1, v_tx),
            hint = 'subscriptions deliver in transaction-id order; see docs/subscriptions.md';
  end if;
  return v_hash;
end
$fn$;

-- Raised by import_events for the first event whose supplied link is not the one it computes.
create function turnlog.import_link_mismatch(p_session uuid, p_seq bigint, p_supplied bytea, p_computed bytea) returns bytea
language plpgsql set search_path = pg_catalog, pg_temp as $fn$
begin
  raise exception 'turnlog: the chain link of event % of session % does not verify', p_seq, p_session
    using errcode = 'TLC02',
          detail = json_build_object('sessionId', p_session, 'seq', p_seq, 'suppliedHash', encode(p_supplied, 'hex'),
                                     'computedHash', encode(p_computed, 'hex'))::text;
end
$fn$;

-- Inserts events of sessions that exist and the caller may act on (TLS01 otherwise, as for an unknown
-- session), in argument order, and returns how many. Each argument is one column, its values joined by
-- U+001E, an empty value being null (JSON.stringify never writes a raw U+001E, and ids, hex digits,
-- numbers and timestamps hold none): splitting one text is cheaper than json_array_elements (which
-- validates the whole array and then parses it again) or a text[] literal. Per event: session, seq,
-- event id, type, message id, content hash (hex), payload and data (JSON texts), recorded_at,
-- payload_digest (hex; only for a caller that may insert that column: a scrubbed event, see 0003) and
-- the expected chain link (hex). The link stored is the one computed here from the previous row's
-- expected link (same session, seq - 1) or the stored predecessor; a difference raises TLC02 (detail: a
-- JSON object with sessionId, seq, suppliedHash, computedHash) before the statement ends, so nothing
-- of the call is written. By induction every stored link is computed from the stored predecessor.
create function turnlog.import_events(p_sessions text, p_seqs text, p_event_ids text, p_types text, p_message_ids text,
  p_content_hashes text, p_payloads text, p_data text, p_recorded_at text, p_digests text, p_hashes text)
returns bigint language plpgsql security definer set search_path = pg_catalog, pg_temp set jit = off as $fn$
declare
  v_count bigint;
begin
  perform turnlog.accessible_session_tenant(s.id)
     from (select distinct x::uuid as id from unnest(string_to_array(p_sessions, E'\x1e')) as x) s;
  if p_digests ~ '[^\x1e]'
     and not pg_catalog.has_column_privilege(turnlog.caller_role(), 'turnlog.events', 'payload_digest', 'INSERT') then
    raise exception 'permission denied to insert events.payload_digest (redaction only)' using errcode = '42501';
  end if;
  -- subqueries, not CTEs: a CTE holding a volatile call is materialized (a copy of every payload)
  insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, payload_digest, hash)
  select c.session_id, c.seq, c.event_id, c.type, c.message_id, c.content_hash, c.payload, c.data, c.recorded_at, c.payload_digest,
         case when c.link = c.hash then c.link else turnlog.import_link_mismatch(c.session_id, c.seq, c.hash, c.link) end
    from (
      select l.*,
             case when l.payload_digest is null
                  then turnlog.chain_hash(l.prev, l.session_id, l.seq, l.event_id, l.type, l.message_id, l.content_hash, l.data, l.payload)
                  -- a scrubbed event: the digest stands for the payload (events_link_scrubbed, 0003)
                  else sha256(l.prev
                    || convert_to(l.session_id::text || E'\n' || l.seq::text || E'\n' || l.event_id::text || E'\n' || l.type || E'\n'
                       || coalesce(l.message_id::text, '') || E'\n' || coalesce(encode(l.content_hash, 'hex'), '') || E'\n', 'UTF8')
                    || sha256(convert_to(l.data::text, 'UTF8'))
                    || l.payload_digest) end as link
        from (
          select i.*,
                 case when i.seq = 1 then '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea
                      when lag(i.session_id) over w = i.session_id and lag(i.seq) over w = i.seq - 1 then lag(i.hash) over w
                      else turnlog.import_predecessor(i.session_id, i.seq) end as prev
            from (
              select t.session_id::uuid as session_id, t.seq::bigint as seq, t.event_id::uuid as event_id, t.type,
                     t.message_id::uuid as message_id, decode(t.content_hash, 'hex') as content_hash,
                     t.payload::json as payload, t.data::json as data, t.recorded_at::timestamptz as recorded_at,
                     decode(t.digest, 'hex') as payload_digest, decode(t.hash, 'hex') as hash, t.ord
                from rows from (unnest(string_to_array(p_sessions, E'\x1e', '')), unnest(string_to_array(p_seqs, E'\x1e', '')),
                                unnest(string_to_array(p_event_ids, E'\x1e', '')), unnest(string_to_array(p_types, E'\x1e', '')),
                                unnest(string_to_array(p_message_ids, E'\x1e', '')), unnest(string_to_array(p_content_hashes, E'\x1e', '')),
                                unnest(string_to_array(p_payloads, E'\x1e', '')), unnest(string_to_array(p_data, E'\x1e', '')),
                                unnest(string_to_array(p_recorded_at, E'\x1e', '')), unnest(string_to_array(p_digests, E'\x1e', '')),
                                unnest(string_to_array(p_hashes, E'\x1e', '')))
                     with ordinality as t(session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, digest, hash, ord)
            ) i
          window w as (order by i.ord)
        ) l
    ) c
   order by c.ord;
  get diagnostics v_count = row_count;
  return v_count;
end
$fn$;

alter function turnlog.import_predecessor(uuid, bigint) owner to turnlog_owner;
alter function turnlog.import_link_mismatch(uuid, bigint, bytea, bytea) owner to turnlog_owner;
alter function turnlog.import_events(text, text, text, text, text, text, text, text, text, text, text) owner to turnlog_owner;
revoke all on function turnlog.import_predecessor(uuid, bigint) from public;
revoke all on function turnlog.import_link_mismatch(uuid, bigint, bytea, bytea) from public;
revoke all on function turnlog.import_events(text, text, text, text, text, text, text, text, text, text, text) from public;
grant execute on function turnlog.import_events(text, text, text, text, text, text, text, text, text, text, text) to turnlog_writer;
`
