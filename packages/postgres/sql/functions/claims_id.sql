-- Whether a message_appended event claims its id in message_ids (an original append does, a fork's copy
-- does not), for the two kinds of event that can break a rule the claim's primary key does not guard: a
-- fork's copy (data.inheritedFrom) and any append into a fork session. Refuses the statement (TLA01)
-- when a copy does not name the session's fork parent in data.inheritedFrom (a session without a
-- parent holds no copies), or when the session already holds the id (another message_appended of it, in
-- the log or in the same statement): a session holds a message id once. An original append elsewhere
-- needs neither check: the session's own claim refuses a second one (23505 on message_ids_pkey).
-- Called by events_claim_ids (as the owner) only for those events; owner only.
create function turnlog.claims_id(p_session uuid, p_seq bigint, p_message uuid, p_label text, p_parent uuid)
returns boolean language plpgsql set search_path = pg_catalog, pg_temp as $fn$
begin
  if p_label is not null and p_label is distinct from p_parent::text then
    raise exception using errcode = 'TLA01',
      message = format('event %s of session %s copies message %s from %s, but a copy must name the session''s fork parent (%s) in data.inheritedFrom',
                       p_seq, p_session, p_message, p_label, coalesce(p_parent::text, 'none: the session is not a fork'));
  end if;
  if exists (select 1 from turnlog.events e
              where e.message_id = p_message and e.session_id = p_session
                and e.type = 'message_appended' and e.seq <> p_seq) then
    raise exception using errcode = 'TLA01',
      message = format('event %s of session %s appends message %s, which the session already holds (a session holds a message id once)',
                       p_seq, p_session, p_message);
  end if;
  return p_label is null;
end
$fn$;
