import { TurnlogError, type JsonValue } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'

/** A point in a turnlog session's history: what a checkpoint's `messages` channel holds. */
export interface MessagesRef {
  readonly sessionId: string
  /** The session version (`load(sessionId, { at: version })` gives the messages). */
  readonly version: number
}

/**
 * The root turnlog session of a live (not deleted) LangGraph thread, created (with its row in
 * `turnlog_langgraph.threads`) when the thread has none. Runs inside the caller's transaction.
 */
export async function rootSessionOf(store: PostgresStore, threadId: string, tenantId: string | undefined): Promise<string> {
  const found = await liveRoot(store, threadId)
  if (found !== undefined) return found
  const metadata: JsonValue = { langgraph: { threadId } }
  const created = await store.createSession({ ...(tenantId === undefined ? {} : { tenantId }), metadata })
  const { rows } = await sql<{ root_session_id: string }>`
    insert into turnlog_langgraph.threads (root_session_id, thread_id) values (${created}::uuid, ${threadId})
    on conflict do nothing
    returning root_session_id::text`.execute(store.db)
  if (rows.length === 0) {
    // another writer created the thread first (the unique index made this insert wait for it)
    const other = await liveRoot(store, threadId)
    if (other === undefined) throw new TurnlogError('DB_ERROR', `thread ${threadId} has no root session`)
    return other
  }
  await sql`insert into turnlog_langgraph.sessions (session_id, root_session_id) values (${created}::uuid, ${created}::uuid)`.execute(
    store.db,
  )
  return created
}

async function liveRoot(store: PostgresStore, threadId: string): Promise<string | undefined> {
  const { rows } = await sql<{ root_session_id: string }>`
    select root_session_id::text from turnlog_langgraph.threads where thread_id = ${threadId} and deleted_at is null`.execute(store.db)
  return rows[0]?.root_session_id
}

/** Records a session taken for a branch of a thread (a fork of `from`, or a new session when nothing could be inherited). */
export async function recordBranchSession(store: PostgresStore, sessionId: string, from: string): Promise<void> {
  await sql`
    insert into turnlog_langgraph.sessions (session_id, root_session_id, forked_from)
    select ${sessionId}::uuid, root_session_id, ${from}::uuid from turnlog_langgraph.sessions where session_id = ${from}::uuid
    on conflict do nothing`.execute(store.db)
}

/** Every turnlog session of the live thread `threadId` (root first), and its root; undefined when there is none. */
export async function sessionsOfThread(store: PostgresStore, threadId: string): Promise<{ root: string; sessions: string[] } | undefined> {
  const root = await liveRoot(store, threadId)
  if (root === undefined) return undefined
  const { rows } = await sql<{ session_id: string }>`
    select session_id::text from turnlog_langgraph.sessions where root_session_id = ${root}::uuid
     order by (session_id = ${root}::uuid) desc, created_at, session_id`.execute(store.db)
  return { root, sessions: rows.map((r) => r.session_id) }
}
