import { readFileSync } from 'node:fs'
/**
 * Shared fixtures of the audit tests: message builders, a realistic session (tool calls, compaction,
 * rewind, revision, fork, hostile strings) and raw-SQL access for tampering.
 */
import { createMessage, type Message, type SessionId, type SessionStore } from '@turnlog/core'
import type { Finding } from '@turnlog/audit'
import pg from 'pg'

/** Hostile text: NUL, a lone high and a lone low surrogate, an astral emoji, RTL text. */
export const WEIRD = 'nul:\u0000 hi:\ud800 lo:\udc00 emoji:😀 rtl:שלום \u2028'

export function user(content: string): Message {
  return createMessage({ role: 'user', content })
}

export function assistant(content: string): Message {
  return createMessage({ role: 'assistant', content, finish_reason: 'stop' })
}

export function system(content: string): Message {
  return createMessage({ role: 'system', content })
}

/** An assistant message calling tools (`id`, or `call_id` on request). */
export function assistantCalling(ids: readonly string[], key: 'id' | 'call_id' = 'id'): Message {
  return createMessage({
    role: 'assistant',
    content: '',
    tool_calls: ids.map((id) => ({
      [key]: id,
      type: 'function',
      function: { name: 'read_file', arguments: JSON.stringify({ path: `${id}.md` }) },
    })),
    finish_reason: 'tool_calls',
  })
}

/** A tool result (`tool_call_id`, or `call_id` on request). */
export function toolResult(id: string, content = `{"ok":true,"id":"${id}"}`, key: 'tool_call_id' | 'call_id' = 'tool_call_id'): Message {
  return createMessage({ role: 'tool', [key]: id, content })
}

/** What {@link seedRealisticSession} wrote, for assertions. */
export interface RealisticSession {
  readonly sessionId: SessionId
  readonly forkId: SessionId
  /** The session's live list after every operation, in order. */
  readonly live: readonly Message[]
  /** Every message ever appended to the session (including rewound and compacted ones), in order. */
  readonly all: readonly Message[]
}

/**
 * A session that went through everything a real agent does: a system prompt, tool calls (one with
 * `call_id` and a multi-call turn), hostile strings (NUL, lone surrogates) in payloads, a streamed
 * reply finalized, a rewound failed attempt, a revised tool result, a compaction with a summary and
 * a carried-forward copy of a covered message, more turns, and a fork.
 */
export async function seedRealisticSession(store: SessionStore): Promise<RealisticSession> {
  const sessionId = await store.createSession({ metadata: { agent: 'fixture' } })
  const all: Message[] = []
  let live: Message[] = []
  const flush = async (...messages: Message[]): Promise<void> => {
    live = [...live, ...messages]
    all.push(...messages)
    await store.flush(sessionId, live)
  }

  const sys = system('You are a careful assistant.')
  const u1 = user(`What's in README.md? ${WEIRD}`)
  await flush(sys, u1)
  const a1 = assistantCalling(['call_01'])
  await flush(a1)
  const t1 = toolResult('call_01', JSON.stringify({ ok: true, text: `# acme ${WEIRD}` }))
  await flush(t1)
  const a1b = assistant(`README.md says "# acme" and some odd bytes: ${WEIRD}`)
  await flush(a1b)

  // a multi-call turn, one provider using call_id
  const u2 = user('Compare a.md and b.md')
  const a2 = assistantCalling(['call_02', 'call_03'], 'call_id')
  await flush(u2, a2)
  const t2 = toolResult('call_02', 'a', 'call_id')
  const t3 = toolResult('call_03', 'b', 'call_id')
  await flush(t2, t3)
  // a streamed reply, then finalized with its final content
  const a2b = createMessage({ role: 'assistant', content: 'They dif' }, { status: 'partial' })
  await flush(a2b)
  await store.finalize(sessionId, a2b.id, { role: 'assistant', content: 'They differ in one line.' })
  live = live.map((m) =>
    m.id === a2b.id
      ? createMessage({ role: 'assistant', content: 'They differ in one line.' }, { id: a2b.id, createdAt: a2b.createdAt })
      : m,
  )

  // a failed attempt, rewound: the user message stays, the unanswered call goes
  const u3 = user('Run the tests')
  const failed = assistantCalling(['call_04'])
  await flush(u3, failed)
  await store.rewind(sessionId, { after: u3.id }, { reason: 'tool crashed' })
  live = live.filter((m) => m.id !== failed.id)
  const a3 = assistantCalling(['call_05'])
  const t5 = toolResult('call_05', '3 passed')
  await flush(a3, t5)
  // the tool result gets an appended note: a revision
  const revised = { role: 'tool', tool_call_id: 'call_05', content: '3 passed\n[note: 1 skipped]' }
  await store.revise(sessionId, t5.id, revised)
  live = live.map((m) => (m.id === t5.id ? createMessage(revised as never, { id: t5.id, createdAt: t5.createdAt }) : m))
  const a3b = assistant('All tests pass.')
  await flush(a3b)

  // compaction of the first two turns; the summary carries a copy of the last covered answer forward
  const covered = [u1, a1, t1, a1b, u2, a2, t2, t3, a2b]
  const summary = user('[CONTEXT COMPACTION] The user asked about README.md and two files; both were read.')
  const carried = createMessage({ role: 'assistant', content: 'They differ in one line.' })
  await store.compact(sessionId, { covered: covered.map((m) => m.id), summary: [summary, carried], reason: 'context window' })
  const coveredIds = new Set<string>(covered.map((m) => m.id))
  live = [live[0] as Message, summary, carried, ...live.filter((m) => m !== live[0] && !coveredIds.has(m.id))]
  all.push(summary, carried)

  const u4 = user('Thanks! One more: what is 2+2?')
  const a4 = assistant('4')
  await flush(u4, a4)

  const forkId = await store.fork(sessionId, { at: a3b.id, metadata: { branch: 'what-if' } })
  await store.flush(forkId, [...live.slice(0, live.findIndex((m) => m.id === a3b.id) + 1), user('And 3+3?')])
  return { sessionId, forkId, live, all }
}

/** Runs raw SQL as the test database's superuser (tampering, drift). */
export async function rawSql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  connectionString: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString })
  client.on('error', () => {})
  await client.connect()
  try {
    const result = await client.query<T>(text, values)
    return result.rows
  } finally {
    await client.end()
  }
}

/**
 * `events_claim_ids` as it was before migration 0006 (no check of copies or of appends into fork
 * sessions): the release fixture's text, made `create or replace`.
 */
const CLAIM_BEFORE_0006 = readFileSync(
  new URL('../../postgres/test/fixtures/release-13da962/functions/events_claim_ids.sql', import.meta.url),
  'utf8',
).replace(/^create function /m, 'create or replace function ')

/**
 * Runs one raw statement as the superuser the way a database before migration 0006 took it (its claim
 * trigger, in the statement's transaction; the current one is back at commit): for logs an earlier
 * release could hold, which the audit must still report.
 */
export async function rawSqlBefore0006(connectionString: string, text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString })
  client.on('error', () => {})
  await client.connect()
  try {
    await client.query('begin')
    const { rows } = await client.query<{ def: string }>("select pg_get_functiondef('turnlog.events_claim_ids()'::regprocedure) as def")
    await client.query(CLAIM_BEFORE_0006)
    await client.query(text, values)
    await client.query(rows[0]?.def ?? '')
    await client.query('commit')
  } finally {
    await client.end()
  }
}

/** The stored event id of the session's event at `seq` ('' when there is none), read with raw SQL. */
export async function eventIdAt(connectionString: string, sessionId: string, seq: number): Promise<string> {
  const rows = await rawSql<{ event_id: string }>(
    connectionString,
    'select event_id::text from turnlog.events where session_id = $1 and seq = $2',
    [sessionId, seq],
  )
  return rows[0]?.event_id ?? ''
}

/** A new session of `store` holding `messages`, appended in one batch. */
export async function sessionWith(store: SessionStore, ...messages: Message[]): Promise<string> {
  const sessionId = await store.createSession()
  if (messages.length > 0) await store.append(sessionId, messages)
  return sessionId
}

/**
 * Appends a `message_appended` event of `{ role, content: 'injected' }` at `seq` with raw SQL, around
 * the store: the chain trigger links it (its link is valid), but the session's version is not moved.
 */
export async function injectAppendedEvent(
  connectionString: string,
  sessionId: string,
  seq: number,
  role: 'user' | 'assistant',
): Promise<void> {
  await rawSql(
    connectionString,
    `
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
    values ($1, $2, gen_random_uuid(), 'message_appended', gen_random_uuid(),
            sha256(convert_to($3, 'UTF8')), $4::json, '{"createdAt":"2026-01-01T00:00:00.000Z"}')`,
    [sessionId, seq, `{"content":"injected","role":"${role}"}`, `{"role":"${role}","content":"injected"}`],
  )
}

/** `severity kind [reason]` per finding, in report order (the reason from `evidence.reason`, when it has one). */
export function findingLines(findings: readonly Finding[]): string[] {
  return findings.map((f) => {
    const reason = f.evidence?.['reason']
    return typeof reason === 'string' ? `${f.severity} ${f.kind} ${reason}` : `${f.severity} ${f.kind}`
  })
}
