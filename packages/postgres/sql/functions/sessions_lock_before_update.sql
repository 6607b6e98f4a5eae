-- Writers lock a session by updating its row. A plain UPDATE takes the transaction id before it waits for
-- the row lock, so under contention the waiters' ids need not follow the order they get the lock in
-- (and append in). With a BEFORE ROW trigger the executor locks the row first (heap_lock_tuple, which
-- takes the id only once the lock is granted) and then updates it: a transaction whose first write is
-- the session update gets an id above every earlier holder's. The trigger itself does nothing.
create function turnlog.sessions_lock_before_update() returns trigger language plpgsql as $fn$
begin
  return new;
end
$fn$;
