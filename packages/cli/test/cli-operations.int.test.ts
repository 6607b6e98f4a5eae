/**
 * docs/operations.md's backup and restore procedures, run as an operator runs them (the built
 * `turnlog` binary, `pg_dump`/`pg_restore`) on real Postgres and a real embedded directory:
 *
 * - `turnlog export --all` then `turnlog import` into an empty database reproduces identical
 *   projections and hash chains (every stored column but the cluster-local ones: `tx_id`,
 *   `global_position`); after the restore `turnlog audit --all --fail-on error` and
 *   `turnlog rebuild --verify` pass.
 * - The export is portable (no cluster-local values): imported into an embedded database and exported
 *   again, it is the same file but for the header's `exportedAt`.
 * - `pg_dump --schema=turnlog` restored with `pg_restore` into an empty database: the same rows, audit
 *   and rebuild --verify pass (skipped, saying so, where `pg_dump` is not installed).
 * - A log with a gap (an event deleted behind the store's back) is refused by `turnlog export` with
 *   `CORRUPT_LOG` (exit 3), and no file is left (errors.md).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createTestDatabase, makeMigratedDataDir, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'
import { runTurnlog, type TurnlogRun } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 60_000

let source: TestDatabase
let dir: string
const run = (database: TestDatabase, args: string[]): Promise<TurnlogRun> =>
  runTurnlog(['--database-url', database.connectionString, ...args], { cwd: dir })

useDatabaseAndDir('turnlog-cli-operations-', (made) => {
  ;({ db: source, dir } = made)
})

/** Every stored row of the turnlog tables, without the values that are local to a cluster. */
async function rows(database: TestDatabase): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({ connectionString: database.connectionString })
  await client.connect()
  try {
    const query = async (text: string): Promise<unknown[]> => (await client.query(text)).rows
    return {
      sessions: await query('select * from turnlog.sessions order by session_id'),
      events: await query(
        `select session_id, seq, event_id, type, message_id, encode(content_hash, 'hex') as content_hash, payload::text, data::text,
                recorded_at, encode(hash, 'hex') as hash, encode(payload_digest, 'hex') as payload_digest
           from turnlog.events order by session_id, seq`,
      ),
      live: await query('select * from turnlog.live_messages order by session_id, position, message_id'),
      messageIds: await query('select * from turnlog.message_ids order by message_id, tenant_scope'),
    }
  } finally {
    await client.end()
  }
}

/** The export file without its header line (which carries `exportedAt`). */
const body = (text: string): string => text.slice(text.indexOf('\n'))

beforeAll(async () => {
  // the demo's two sessions: parallel tool calls, a rewind, a compaction, a revision, a finalized
  // stream, a fork
  const demo = await run(source, ['demo', '--json'])
  if (demo.code !== 0) throw new Error(`demo failed:\n${demo.stderr}`)
}, SLOW)

describe('backups and restore (operations.md)', () => {
  const restores: TestDatabase[] = []
  afterAll(async () => {
    for (const database of restores) await database.drop()
  })

  it(
    'export --all, import into an empty database: identical projections and hash chains; audit and rebuild --verify pass',
    async () => {
      // given
      const file = join(dir, 'backup.jsonl')
      const restored = await createTestDatabase()
      restores.push(restored)
      // when
      const exported = await run(source, ['export', '--all', '-o', file, '--json'])
      const imported = await run(restored, ['import', file, '--json'])
      const [audit, verify] = await Promise.all([
        run(restored, ['audit', '--all', '--fail-on', 'error', '--json']),
        run(restored, ['rebuild', '--verify', '--json']),
      ])
      // then
      expect(exported.code).toBe(0)
      expect(imported.code).toBe(0)
      expect(await rows(restored)).toEqual(await rows(source))
      expect(audit.code).toBe(0)
      expect(verify.code).toBe(0)
      expect(verify.json()).toMatchObject({ verify: true, sessions: 2, rewritten: 0, drift: [] })
    },
    SLOW,
  )

  it(
    'the export is portable: imported into an embedded database and exported again, it is the same file',
    async () => {
      // given
      const file = join(dir, 'portable.jsonl')
      const again = join(dir, 'portable-again.jsonl')
      const dataDir = join(dir, 'embedded')
      await makeMigratedDataDir(dataDir) // an empty embedded database (its creation: cli-embedded, cli-ids-and-databases)
      expect((await run(source, ['export', '--all', '-o', file])).code).toBe(0)
      // when
      const imported = await runTurnlog(['--data-dir', dataDir, 'import', file, '--json'], { cwd: dir })
      const exported = await runTurnlog(['--data-dir', dataDir, 'export', '--all', '-o', again, '--json'], { cwd: dir })
      // then
      expect(imported.code).toBe(0)
      expect(exported.code).toBe(0)
      expect(body(await readFile(again, 'utf8'))).toBe(body(await readFile(file, 'utf8')))
    },
    SLOW,
  )

  const pgDump = ['/usr/bin/pg_dump', '/usr/local/bin/pg_dump'].find((p) => existsSync(p))
  const pgRestore = pgDump?.replace(/pg_dump$/, 'pg_restore')
  ;(pgDump === undefined ? it.skip : it)(
    `pg_dump --schema=turnlog, pg_restore into an empty database: the same rows; audit and rebuild --verify pass${pgDump === undefined ? ' (skipped: no pg_dump here)' : ''}`,
    async () => {
      // given
      const dump = join(dir, 'turnlog.dump')
      const restored = await createTestDatabase()
      restores.push(restored)
      // when
      await promisify(execFile)(pgDump as string, ['--schema=turnlog', '--format=custom', '--file', dump, source.connectionString])
      await promisify(execFile)(pgRestore as string, ['--exit-on-error', '--dbname', restored.connectionString, dump])
      const [audit, verify] = await Promise.all([
        run(restored, ['audit', '--all', '--fail-on', 'error']),
        run(restored, ['rebuild', '--verify']),
      ])
      // then
      expect(await rows(restored)).toEqual(await rows(source))
      expect(audit.code).toBe(0)
      expect(verify.code).toBe(0)
    },
    SLOW,
  )
})

describe('a damaged log (errors.md, CORRUPT_LOG)', () => {
  it(
    'export refuses a session with a gap in its seqs: CORRUPT_LOG, exit 3, no file',
    async () => {
      // given a copy of the source with one event of the middle deleted behind the store's back
      const damaged = await createTestDatabase()
      try {
        const file = join(dir, 'source.jsonl')
        expect((await run(source, ['export', '--all', '-o', file])).code).toBe(0)
        expect((await run(damaged, ['import', file])).code).toBe(0)
        const client = new pg.Client({ connectionString: damaged.connectionString })
        await client.connect()
        try {
          await client.query(
            'delete from turnlog.events where (session_id, seq) = (select session_id, 3 from turnlog.sessions where parent_session_id is null)',
          )
        } finally {
          await client.end()
        }
        // when
        const out = join(dir, 'damaged.jsonl')
        const exported = await run(damaged, ['export', '--all', '-o', out, '--json'])
        // then
        expect(exported.code).toBe(3)
        expect(exported.json()).toMatchObject({ error: { code: 'CORRUPT_LOG', message: expect.stringMatching(/expected seq 3, found 4/) } })
        expect(existsSync(out)).toBe(false)
      } finally {
        await damaged.drop()
      }
    },
    SLOW,
  )
})
