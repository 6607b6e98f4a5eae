import { contentHash, type Message } from '@turnlog/core'
import type pg from 'pg'
import { pool } from './stats.js'
import type { GeneratedSession } from './workload.js'

/** The raw baseline's table: what a hand-written persister would store per message. */
export const RAW_SCHEMA = `
  create schema if not exists bench_raw;
  create table if not exists bench_raw.events (
    session_id uuid not null, seq bigint not null, message_id uuid not null, content_hash bytea not null,
    payload json not null, primary key (session_id, seq));
`

/** The raw baseline's statement for one turn: one multi-row INSERT … ON CONFLICT DO NOTHING. */
export function rawTurnStatement(sessionId: string, firstSeq: number, turn: readonly Message[]): { text: string; values: unknown[] } {
  const values: unknown[] = []
  const tuples = turn.map((m, i) => {
    values.push(sessionId, firstSeq + i, m.id, Buffer.from(contentHash(m), 'hex'), JSON.stringify(m.payload))
    const b = i * 5
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::json)`
  })
  return {
    text: `insert into bench_raw.events (session_id, seq, message_id, content_hash, payload) values ${tuples.join(',')} on conflict do nothing`,
    values,
  }
}

/**
 * The raw baseline writing `sessions` (session `s` under `ids[s.index]`), one statement per turn,
 * `writers` sessions at a time: returns the rows it inserted (0 when every turn was already there).
 */
export async function replayRawTurns(
  rawPool: pg.Pool,
  sessions: readonly GeneratedSession[],
  ids: readonly string[],
  writers: number,
): Promise<number> {
  let written = 0
  await pool(sessions, writers, async (s) => {
    let seq = 1
    const sid = ids[s.index] as string
    for (const turn of s.turns) {
      const st = rawTurnStatement(sid, seq, turn)
      written += (await rawPool.query(st.text, st.values)).rowCount ?? 0
      seq += turn.length
    }
  })
  return written
}
