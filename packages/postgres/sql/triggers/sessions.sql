-- Locks the session row before the update takes a transaction id (functions/sessions_lock_before_update.sql).
create trigger sessions_lock_before_update before update on turnlog.sessions
  for each row execute function turnlog.sessions_lock_before_update();
