import { TurnlogError } from '@turnlog/core'
import Database from 'better-sqlite3'
import type { HermesWarnings } from './hermes-warning.js'

/** A value as better-sqlite3 returns it. */
export type SqliteValue = string | number | bigint | Uint8Array | null

/** A `sessions` row: every column the file has. */
export interface HermesSessionRecord {
  readonly id: string
  readonly columns: Readonly<Record<string, SqliteValue>>
  /** True when the file has no `sessions` row for it (its messages name it). */
  readonly orphan: boolean
}

/** A `messages` row: its id, its session, and every column the file has. */
export interface HermesMessageRecord {
  readonly rowId: number
  readonly sessionId: string
  readonly columns: Readonly<Record<string, SqliteValue>>
}

/** Columns hermes-agent versions are known to have; the ones missing are reported. */
export const HERMES_SESSION_COLUMNS = [
  'id',
  'source',
  'parent_session_id',
  'started_at',
  'ended_at',
  'end_reason',
  'title',
  'message_count',
] as const
/** See {@link HERMES_SESSION_COLUMNS}. */
export const HERMES_MESSAGE_COLUMNS = [
  'id',
  'session_id',
  'role',
  'content',
  'tool_call_id',
  'tool_calls',
  'tool_name',
  'timestamp',
  'token_count',
  'finish_reason',
  'reasoning',
  'reasoning_content',
  'reasoning_details',
  'platform_message_id',
  'active',
  'compacted',
  'api_content',
] as const
const REQUIRED_MESSAGE_COLUMNS = ['id', 'session_id', 'role', 'content']

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/**
 * A hermes-agent `state.db`, opened read-only. The schema is read with `PRAGMA table_info`, never
 * assumed: missing optional columns are reported through `warnings`, missing required ones
 * (`messages.id, session_id, role, content`) throw `IMPORT_FAILED`.
 */
export class HermesStateDb {
  readonly #db: Database.Database
  /** Columns of `sessions` (empty when the table is missing). */
  readonly sessionColumns: readonly string[]
  /** Columns of `messages`. */
  readonly messageColumns: readonly string[]

  private constructor(db: Database.Database, sessionColumns: string[], messageColumns: string[]) {
    this.#db = db
    this.sessionColumns = sessionColumns
    this.messageColumns = messageColumns
  }

  /** Opens `path` read-only; throws `IMPORT_FAILED` when it is not a readable hermes `state.db`. */
  static open(path: string, warnings: HermesWarnings): HermesStateDb {
    if (typeof path !== 'string' || path === '') throw new TurnlogError('INVALID_INPUT', 'path must be a non-empty string')
    let db: Database.Database
    try {
      db = new Database(path, { readonly: true, fileMustExist: true })
    } catch (cause) {
      throw new TurnlogError('IMPORT_FAILED', `cannot open ${path} as SQLite: ${cause instanceof Error ? cause.message : String(cause)}`, {
        details: { path },
        cause,
      })
    }
    try {
      const columnsOf = (table: string): string[] => (db.pragma(`table_info(${quote(table)})`) as { name: string }[]).map((c) => c.name)
      const messageColumns = columnsOf('messages')
      if (messageColumns.length === 0) {
        throw new TurnlogError('IMPORT_FAILED', `${path} has no messages table; is it a hermes state.db?`, { details: { path } })
      }
      const missingRequired = REQUIRED_MESSAGE_COLUMNS.filter((c) => !messageColumns.includes(c))
      if (missingRequired.length > 0) {
        throw new TurnlogError('IMPORT_FAILED', `${path}: messages lacks required column(s) ${missingRequired.join(', ')}`, {
          details: { path, missing: missingRequired },
        })
      }
      let sessionColumns = columnsOf('sessions')
      if (sessionColumns.length === 0) {
        warnings.add({
          code: 'missing_table',
          table: 'sessions',
          message: 'no sessions table: sessions are taken from messages.session_id',
        })
      } else if (!sessionColumns.includes('id')) {
        warnings.add({
          code: 'missing_column',
          table: 'sessions',
          column: 'id',
          message: 'sessions has no id column: sessions are taken from messages.session_id',
        })
        sessionColumns = []
      }
      // a column a newer hermes has and this file lacks reads as absent, with a warning
      const warnMissing = (table: string, present: readonly string[], expected: readonly string[]): void => {
        for (const column of expected)
          if (!present.includes(column))
            warnings.add({ code: 'missing_column', table, column, message: `${table}.${column} is missing (older hermes version?)` })
      }
      if (sessionColumns.length > 0) warnMissing('sessions', sessionColumns, HERMES_SESSION_COLUMNS)
      warnMissing('messages', messageColumns, HERMES_MESSAGE_COLUMNS)
      // rows no session can hold (hermes declares session_id NOT NULL; an odd file may not): reported, not dropped silently
      const homeless = Number(db.prepare('select count(*) from messages where session_id is null').pluck().get())
      if (homeless > 0) {
        warnings.add({
          code: 'unsupported_row',
          table: 'messages',
          column: 'session_id',
          message: `${homeless} message row(s) with a NULL session_id were skipped: no session holds them`,
        })
      }
      return new HermesStateDb(db, sessionColumns, messageColumns)
    } catch (error) {
      db.close()
      if (error instanceof TurnlogError) throw error
      throw new TurnlogError('IMPORT_FAILED', `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, {
        details: { path },
        cause: error,
      })
    }
  }

  /**
   * Every session, in `started_at` order (then id) when the file has `started_at`, else id order;
   * followed by sessions only `messages.session_id` names (`orphan: true`).
   */
  sessions(): HermesSessionRecord[] {
    const out: HermesSessionRecord[] = []
    const known = new Set<string>()
    if (this.sessionColumns.length > 0) {
      const order = this.sessionColumns.includes('started_at') ? 'started_at, id' : 'id'
      const rows = this.#db.prepare(`select ${this.sessionColumns.map(quote).join(', ')} from sessions order by ${order}`).all() as Record<
        string,
        SqliteValue
      >[]
      for (const row of rows) {
        const id = row['id']
        if (id === null || id === undefined) continue
        const key = String(id)
        known.add(key)
        out.push({ id: key, columns: row, orphan: false })
      }
    }
    const orphans = this.#db
      .prepare('select distinct session_id from messages where session_id is not null order by session_id')
      .pluck()
      .all() as SqliteValue[]
    for (const raw of orphans) {
      const key = String(raw)
      if (known.has(key)) continue
      known.add(key)
      out.push({ id: key, columns: { id: key }, orphan: true })
    }
    return out
  }

  /** A session's message rows in row-id order (the order), streamed. */
  *messages(sessionId: string): Generator<HermesMessageRecord> {
    const stmt = this.#db.prepare(`select ${this.messageColumns.map(quote).join(', ')} from messages where session_id = ? order by id`)
    for (const row of stmt.iterate(sessionId) as Iterable<Record<string, SqliteValue>>) {
      yield { rowId: Number(row['id']), sessionId, columns: row }
    }
  }

  /** Closes the file. */
  close(): void {
    this.#db.close()
  }
}
