/**
 * A failure while reading an export file commits the complete sessions read before it (audit.md,
 * "Unit of work: the session"), the one read just before the failing line included. Regression for
 * the adversarial finding D1: a malformed line right after a complete session lost that session (it
 * was handed to the store only when the next session line or the end line arrived), and a file cut
 * inside its end line lost the last session. A session is complete when its session line and every
 * event it announces (`version`) have been read and checked; a session cut short, or followed by one
 * event line too many, is still never written.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { exportSessions, importEvents, type ImportProgress } from '@turnlog/audit'
import { sql } from 'kysely'

let dbSource: TestDatabase
let source: PostgresStore
/** The two sessions of the file, in file order. */
let first: SessionId
let second: SessionId
/**
 * The export: 1 header, 2 first's session line, 3-4 its events, 5 second's session line, 6-7 its
 * events, 8 the end line.
 */
let lines: string[]
const dbs: TestDatabase[] = []
const stores: PostgresStore[] = []

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of iterable) out.push(line)
  return out
}

async function eventsOf(store: PostgresStore, id: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(id)) out.push(e)
  return out
}

async function freshStore(): Promise<PostgresStore> {
  const db = await createTestDatabase()
  dbs.push(db)
  const store = await openStore({ connectionString: db.connectionString })
  stores.push(store)
  return store
}

async function sessionIds(store: PostgresStore): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select session_id::text as id from turnlog.sessions order by session_id`.execute(store.db)
  return rows.map((r) => r.id)
}

/** `file` with line `n` (1-based) replaced by `text`. */
function replaceLine(file: readonly string[], n: number, text: string): string[] {
  return file.map((l, i) => (i === n - 1 ? text : l))
}

/** The lines as the CLI reads a file: an async source. */
async function* asyncLines(file: readonly string[]): AsyncGenerator<string> {
  for (const line of file) yield line
}

type Source = 'array' | 'async'
const sourceOf = (file: readonly string[], kind: Source): Iterable<string> | AsyncIterable<string> =>
  kind === 'array' ? file : asyncLines(file)

beforeAll(async () => {
  dbSource = await createTestDatabase()
  source = await openStore({ connectionString: dbSource.connectionString })
  const ids: SessionId[] = []
  for (const t of ['one', 'two']) {
    const id = await source.createSession()
    await source.append(id, [createMessage({ role: 'user', content: t }), createMessage({ role: 'assistant', content: `${t}!` })])
    ids.push(id)
  }
  ;[first, second] = ids as [SessionId, SessionId]
  lines = await collect(exportSessions(source, { sessionIds: ids }))
}, 60_000)

afterAll(async () => {
  await Promise.all([source.close(), ...stores.map((s) => s.close())])
  await Promise.all([dbSource.drop(), ...dbs.map((d) => d.drop())])
})

describe('importEvents after a failure of the reading (D1)', () => {
  it('the file has the layout the cases assume', () => {
    expect(lines.map((l) => (JSON.parse(l) as { kind?: string }).kind ?? 'header')).toEqual([
      'header',
      'session',
      'event',
      'event',
      'session',
      'event',
      'event',
      'end',
    ])
  })

  it.each<Source>(['array', 'async'])(
    'commits the complete session before a line that is not JSON, then refuses the line (%s source)',
    async (kind) => {
      // given: the second session's line replaced by garbage; the first session (lines 2-4) is complete
      const target = await freshStore()
      const progress: ImportProgress[] = []

      // when / then
      await expect(
        importEvents(target, sourceOf(replaceLine(lines, 5, '{garbage'), kind), { onProgress: (p) => progress.push(p) }),
      ).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 5 } })
      expect(progress.map((p) => p.sessionId)).toEqual([first])
      expect(await sessionIds(target)).toEqual([first])
      expect(await eventsOf(target, first)).toEqual(await eventsOf(source, first))
    },
  )

  it.each<Source>(['array', 'async'])('commits the complete session before a line of an unknown kind (%s source)', async (kind) => {
    // given
    const target = await freshStore()

    // when / then
    await expect(importEvents(target, sourceOf(replaceLine(lines, 5, '{"kind":"note"}'), kind))).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 5 },
      message: expect.stringContaining('unknown record kind'),
    })
    expect(await sessionIds(target)).toEqual([first])
    expect(await eventsOf(target, first)).toEqual(await eventsOf(source, first))
  })

  it.each<Source>(['array', 'async'])('commits both complete sessions of a file cut inside its end line (%s source)', async (kind) => {
    // given: the last 3 characters of the file are gone (`head -c -3`)
    const target = await freshStore()
    const end = lines[7] as string
    const cut = replaceLine(lines, 8, end.slice(0, -3))

    // when / then
    await expect(importEvents(target, sourceOf(cut, kind))).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 8 } })
    expect(await sessionIds(target)).toEqual([first, second].sort())
    expect(await eventsOf(target, first)).toEqual(await eventsOf(source, first))
    expect(await eventsOf(target, second)).toEqual(await eventsOf(source, second))
  })

  it('commits the complete session read before the source itself fails', async () => {
    // given: a source that fails after the first session's last event
    const target = await freshStore()
    async function* failing(): AsyncGenerator<string> {
      yield* lines.slice(0, 4)
      throw new Error('disk gone')
    }

    // when / then
    await expect(importEvents(target, failing())).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 5 },
      message: expect.stringContaining('disk gone'),
    })
    expect(await sessionIds(target)).toEqual([first])
    expect(await eventsOf(target, first)).toEqual(await eventsOf(source, first))
  })

  it.each<Source>(['array', 'async'])(
    'writes nothing of a session cut short: the file cut inside its last event line (%s source)',
    async (kind) => {
      // given: line 7 (the second session's last event) cut in half, nothing after it
      const target = await freshStore()
      const event = lines[6] as string
      const cut = [...lines.slice(0, 6), event.slice(0, event.length >> 1)]

      // when / then
      await expect(importEvents(target, sourceOf(cut, kind))).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 7 } })
      expect(await sessionIds(target)).toEqual([first])
    },
  )

  it.each<Source>(['array', 'async'])(
    'writes nothing of a session followed by one event line more than it announces, even when that line is malformed (%s source)',
    async (kind) => {
      // given: after the first session's 2 events, a 3rd event line of it that does not check out (a bad link)
      const target = await freshStore()
      const extra = JSON.stringify({ ...(JSON.parse(lines[3] as string) as object), seq: 3, hash: 'not-a-link' })
      const file = [...lines.slice(0, 4), extra, ...lines.slice(4)]

      // when / then
      await expect(importEvents(target, sourceOf(file, kind))).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 5 } })
      expect(await sessionIds(target)).toEqual([])
    },
  )

  it('commits the complete session before a malformed line with its progress, and the intact file then completes the import', async () => {
    // given: the first session committed by a failed import
    const target = await freshStore()
    await expect(importEvents(target, replaceLine(lines, 5, '{garbage'))).rejects.toMatchObject({ code: 'IMPORT_FAILED' })

    // when
    const again = await importEvents(target, lines)

    // then: the first session's events are skipped, the second's written
    expect(again).toEqual({ sessions: 2, eventsWritten: 2, eventsSkipped: 2, sessionIds: [first, second] })
  })
})
