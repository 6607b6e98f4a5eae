-- The chain. Skips a row only when it already carries a link and the inserting role is turnlog_owner:
-- only SECURITY DEFINER functions run as the owner, and writers may not insert hash at all (grants.sql),
-- so the one path that stores a link it did not compute row by row is import_events, which verified it.
create trigger events_link before insert on turnlog.events
  for each row when (new.hash is null or current_user <> 'turnlog_owner') execute function turnlog.events_link();

-- The arbiter of message ids fires before the projection (AFTER triggers also fire in name order), so a
-- statement that loses does no projection work.
create trigger events_claim_ids after insert on turnlog.events
  referencing new table as new_events
  for each statement execute function turnlog.events_claim_ids();

create trigger events_notify after insert on turnlog.events
  for each statement execute function turnlog.events_notify();

create trigger events_project after insert on turnlog.events
  referencing new table as new_events
  for each statement execute function turnlog.events_project();
