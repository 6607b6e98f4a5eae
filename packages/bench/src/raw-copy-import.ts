import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { byteaHex, copyRow } from './copy-text.js'
import { withClient } from './with-client.js'

/** COPY of an export file's rows into fresh raw tables: the import workload's baseline. Returns the event count. */
export async function rawCopyImport(p: pg.Pool, lines: readonly string[], table: string): Promise<number> {
  return withClient(p, async (c) => {
    await c.query(`
      create table ${table}_sessions (session_id uuid primary key, tenant_id text, version bigint not null,
        created_at timestamptz not null, updated_at timestamptz not null, metadata json);
      create table ${table}_events (session_id uuid not null, seq bigint not null, event_id uuid not null, type text not null,
        message_id uuid, content_hash bytea, payload json, data json not null, recorded_at timestamptz not null, hash bytea not null,
        primary key (session_id, seq))`)
    const t0 = performance.now()
    let events = 0
    const sessions: string[] = []
    // every line parsed, every field re-encoded: the same input work the importer starts from
    const rowsOf = function* (): Generator<string> {
      let chunk = ''
      for (const line of lines) {
        const r = JSON.parse(line) as Record<string, unknown>
        if (r['kind'] === 'session') {
          sessions.push(
            copyRow([
              r['id'] as string,
              (r['tenantId'] as string | null) ?? null,
              String(r['version']),
              r['createdAt'] as string,
              r['updatedAt'] as string,
              r['metadata'] === null ? null : JSON.stringify(r['metadata']),
            ]),
          )
        } else if (r['kind'] === 'event') {
          events++
          chunk += copyRow([
            r['sessionId'] as string,
            String(r['seq']),
            r['eventId'] as string,
            r['type'] as string,
            (r['messageId'] as string | null) ?? null,
            byteaHex((r['contentHash'] as string | null) ?? null),
            r['payload'] === null ? null : JSON.stringify(r['payload']),
            JSON.stringify(r['data']),
            r['recordedAt'] as string,
            byteaHex(r['hash'] as string),
          ])
          if (chunk.length > 1 << 16) {
            yield chunk
            chunk = ''
          }
        }
      }
      if (chunk) yield chunk
    }
    await pipeline(
      Readable.from(rowsOf()),
      c.query(
        copyFrom(
          `copy ${table}_events (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, hash) from stdin`,
        ),
      ),
    )
    await pipeline(
      Readable.from([sessions.join('')]),
      c.query(copyFrom(`copy ${table}_sessions (session_id, tenant_id, version, created_at, updated_at, metadata) from stdin`)),
    )
    const seconds = (performance.now() - t0) / 1000
    await c.query(`drop table ${table}_events; drop table ${table}_sessions`)
    return events / seconds
  })
}
