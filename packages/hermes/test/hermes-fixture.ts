/**
 * Builds hermes-agent `state.db` files the way hermes writes them (its `SessionDB`): rows appended in
 * id order, `archive_and_compact` (archive every active row as compacted=1, insert the compacted list
 * as fresh rows: kept head, a `[CONTEXT COMPACTION]` summary, kept tail), rewinds (`active=0,
 * compacted=0`), `/retry` rewrites (archive as rewound, re-insert the kept prefix) and the #92231 bug
 * (the loaded transcript re-inserted as new active rows). Re-inserted rows are rebuilt from the row as
 * hermes' `get_messages_as_conversation` does, so they lose `token_count` like the real ones.
 */
import Database from 'better-sqlite3'

/** A message as hermes hands it to `append_message`. */
export interface HermesMessageInput {
  readonly role: string
  readonly content?: string | null
  readonly tool_calls?: readonly unknown[] | string
  readonly tool_call_id?: string
  readonly tool_name?: string
  readonly timestamp?: number | null
  readonly token_count?: number
  readonly finish_reason?: string
  readonly reasoning?: string
  readonly reasoning_content?: string
  readonly reasoning_details?: unknown
  readonly platform_message_id?: string
  readonly api_content?: string
}

/** A stored row, as the fixture reads it back. */
export interface HermesRow {
  readonly id: number
  readonly role: string
  readonly content: string | null
  readonly tool_calls: string | null
  readonly tool_call_id: string | null
  readonly tool_name: string | null
  readonly timestamp: number | null
  readonly active: number
  readonly compacted: number
}

const SESSIONS = `CREATE TABLE sessions (
  id TEXT PRIMARY KEY, source TEXT, model TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
  end_reason TEXT, title TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, system_prompt TEXT)`
const MESSAGES = `CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content TEXT,
  tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
  reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT,
  platform_message_id TEXT, observed INTEGER DEFAULT 0, _compressed_summary INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT, display_kind TEXT, display_metadata TEXT)`
/** An early hermes schema: no reasoning, compaction, api or platform columns. */
const OLD_SESSIONS = 'CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL)'
const OLD_MESSAGES = `CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT,
  tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL, active INTEGER NOT NULL DEFAULT 1)`

/** A `state.db` under construction. */
export class HermesFixture {
  readonly db: Database.Database
  readonly old: boolean
  #clock = 1_760_000_000

  constructor(path: string, options: { old?: boolean } = {}) {
    this.db = new Database(path)
    this.old = options.old === true
    this.db.exec(this.old ? `${OLD_SESSIONS}; ${OLD_MESSAGES}` : `${SESSIONS}; ${MESSAGES}`)
  }

  /** The next timestamp (epoch seconds with a fraction, like `time.time()`). */
  tick(): number {
    this.#clock += 1.25
    return this.#clock + 0.000123
  }

  session(id: string, options: { parent?: string; endReason?: string; title?: string } = {}): this {
    if (this.old) {
      this.db.prepare('INSERT INTO sessions (id, source, started_at) VALUES (?, ?, ?)').run(id, 'cli', this.tick())
    } else {
      this.db
        .prepare(
          'INSERT INTO sessions (id, source, model, parent_session_id, started_at, end_reason, title, system_prompt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          id,
          'telegram',
          'qwen3-max',
          options.parent ?? null,
          this.tick(),
          options.endReason ?? null,
          options.title ?? null,
          'You are Hermes.',
        )
    }
    return this
  }

  /** Appends one message (hermes `append_message`); returns its row id. */
  add(sessionId: string, m: HermesMessageInput, extra: { active?: number; compacted?: number; summary?: boolean } = {}): number {
    const toolCalls = m.tool_calls === undefined ? null : typeof m.tool_calls === 'string' ? m.tool_calls : JSON.stringify(m.tool_calls)
    const timestamp = m.timestamp === undefined ? this.tick() : m.timestamp
    if (this.old) {
      return Number(
        this.db
          .prepare(
            'INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          )
          .run(sessionId, m.role, m.content ?? null, m.tool_call_id ?? null, toolCalls, m.tool_name ?? null, timestamp, extra.active ?? 1)
          .lastInsertRowid,
      )
    }
    const details = m.reasoning_details === undefined ? null : JSON.stringify(m.reasoning_details)
    return Number(
      this.db
        .prepare(
          `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count,
        finish_reason, reasoning, reasoning_content, reasoning_details, platform_message_id, _compressed_summary, active, compacted, api_content)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          sessionId,
          m.role,
          m.content ?? null,
          m.tool_call_id ?? null,
          toolCalls,
          m.tool_name ?? null,
          timestamp,
          m.token_count ?? null,
          m.finish_reason ?? null,
          m.reasoning ?? null,
          m.reasoning_content ?? null,
          details,
          m.platform_message_id ?? null,
          extra.summary === true ? 1 : 0,
          extra.active ?? 1,
          extra.compacted ?? 0,
          m.api_content ?? null,
        ).lastInsertRowid,
    )
  }

  /** Every row of a session, in row order. */
  rows(sessionId: string): HermesRow[] {
    return this.db.prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY id').all(sessionId) as HermesRow[]
  }

  /** hermes' live view: the active rows in row order. */
  activeRows(sessionId: string): HermesRow[] {
    return this.rows(sessionId).filter((r) => r.active === 1)
  }

  /** A row as hermes reloads it into a message dict (no token_count, no row id): what re-inserts copy. */
  #reloaded(rowId: number): HermesMessageInput {
    const r = this.db.prepare('SELECT * FROM messages WHERE id = ?').get(rowId) as Record<string, unknown>
    const m: Record<string, unknown> = { role: r['role'], content: r['content'], timestamp: r['timestamp'] }
    for (const c of [
      'tool_call_id',
      'tool_calls',
      'tool_name',
      'finish_reason',
      'reasoning',
      'reasoning_content',
      'platform_message_id',
      'api_content',
    ]) {
      if (r[c] !== null && r[c] !== undefined) m[c] = r[c]
    }
    if (typeof r['reasoning_details'] === 'string') m['reasoning_details'] = JSON.parse(r['reasoning_details'])
    return m as unknown as HermesMessageInput
  }

  /**
   * hermes `archive_and_compact`: every active row becomes compacted=1; the first `keepHead` and last
   * `keepTail` active messages are re-inserted around a new summary row. Returns the summary row id.
   */
  compact(sessionId: string, options: { keepHead?: number; keepTail?: number; summary: string }): number {
    const active = this.activeRows(sessionId).map((r) => r.id)
    const head = active.slice(0, options.keepHead ?? 0).map((id) => this.#reloaded(id))
    const tail = active.slice(active.length - (options.keepTail ?? 0)).map((id) => this.#reloaded(id))
    this.db.prepare('UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ? AND active = 1').run(sessionId)
    for (const m of head) this.add(sessionId, m)
    const summaryRow = this.add(sessionId, { role: 'user', content: `[CONTEXT COMPACTION] ${options.summary}` }, { summary: true })
    for (const m of tail) this.add(sessionId, m)
    return summaryRow
  }

  /** `/undo`-style rewind: active rows after `rowId` become active=0, compacted=0. */
  rewindAfter(sessionId: string, rowId: number): void {
    this.db
      .prepare(
        this.old
          ? 'UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1 AND id > ?'
          : 'UPDATE messages SET active = 0, compacted = 0 WHERE session_id = ? AND active = 1 AND id > ?',
      )
      .run(sessionId, rowId)
  }

  /** `/retry`: `replace_messages(archive_dropped=True)` keeping the first `keep` active messages. */
  retry(sessionId: string, keep: number): void {
    const active = this.activeRows(sessionId).map((r) => r.id)
    const kept = active.slice(0, keep).map((id) => this.#reloaded(id))
    this.db.prepare('UPDATE messages SET active = 0, compacted = 0 WHERE session_id = ? AND active = 1').run(sessionId)
    for (const m of kept) this.add(sessionId, m)
  }

  /** The #92231 bug: the loaded live transcript is flushed again as new active rows. */
  reinsertLive(sessionId: string): void {
    for (const r of this.activeRows(sessionId)) this.add(sessionId, this.#reloaded(r.id))
  }

  close(): void {
    this.db.close()
  }
}

/** The provider-facing part of a row, as the importer should present it (decoded tool calls, name). */
export function expectedCore(row: HermesRow): Record<string, unknown> {
  const prefixed = row.content !== null && ['\u0000json:', '\u0001json:'].some((p) => row.content?.startsWith(p) === true)
  const content = prefixed ? (JSON.parse((row.content ?? '').slice(6)) as unknown) : row.content
  const out: Record<string, unknown> = { role: row.role, content: content ?? (row.role === 'assistant' ? null : '') }
  if (row.tool_calls !== null) out['tool_calls'] = JSON.parse(row.tool_calls) as unknown
  if (row.tool_call_id !== null) out['tool_call_id'] = row.tool_call_id
  if (row.tool_name !== null) out['name'] = row.tool_name
  return out
}

/** The same fields of an imported payload. */
export function importedCore(payload: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { role: payload['role'], content: payload['content'] ?? null }
  for (const k of ['tool_calls', 'tool_call_id', 'name']) if (payload[k] !== undefined) out[k] = payload[k]
  return out
}
