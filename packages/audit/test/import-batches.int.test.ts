/**
 * `importEvents` writes many sessions per transaction through `turnlog.import_events` (migration 0007),
 * which computes every link itself and checks it against the file's. These tests pin what that must
 * not change: a forged link is refused naming its line, a session is all or nothing, the sessions
 * before a failing one are committed and none after it, a session larger than a batch is written in
 * several calls, and the function gives a writer no way to store a link it did not compute.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { createMessage, type SessionId, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type TestDatabase } from '@turnlog/testing'
import { exportSessions, importEvents, verifyChain, type ImportProgress } from '@turnlog/audit'
import { sql } from 'kysely'

let dbSource: TestDatabase
let source: PostgresStore
/** 30 small sessions, in export order. */
let ids: SessionId[]
let lines: string[]
let big: SessionId
let bigLines: string[]
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
  const db = await createTestDatabase({ migrated: true })
  dbs.push(db)
  const store = await openStore({ connectionString: db.connectionString })
  stores.push(store)
  return store
}

async function exists(store: PostgresStore, id: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from turnlog.sessions where session_id = ${id}`.execute(store.db)
  return rows[0]?.n === 1
}

/** The index of the line of event `seq` of session `id`. */
function lineOf(file: readonly string[], id: string, seq: number): number {
  return file.findIndex((l) => l.startsWith('{"kind":"event"') && l.includes(`"sessionId":"${id}"`) && l.includes(`"seq":${seq},`))
}

/** `file` with the link of line `at` replaced (the rest of the line unchanged). */
function forgeLink(file: readonly string[], at: number): string[] {
  return file.map((l, i) => (i === at ? l.replace(/"hash":"([0-9a-f])/, (_, c: string) => `"hash":"${c === '0' ? '1' : '0'}`) : l))
}

beforeAll(async () => {
  dbSource = await createTestDatabase({ migrated: true })
  source = await openStore({ connectionString: dbSource.connectionString })
  ids = []
  for (let i = 0; i < 30; i++) {
    const id = await source.createSession({ metadata: { i } })
    await source.append(id, [
      createMessage({ role: 'user', content: `question ${i}` }),
      createMessage({ role: 'assistant', content: `answer ${i}` }),
    ])
    ids.push(id)
  }
  lines = await collect(exportSessions(source, { sessionIds: ids }))
  // more events than one import_events call takes (2,000): written in several calls of one transaction
  big = await source.createSession()
  await source.append(
    big,
    Array.from({ length: 2100 }, (_, i) => createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` })),
  )
  bigLines = await collect(exportSessions(source, { sessionIds: [big] }))
}, 120_000)

afterAll(async () => {
  await Promise.all([source.close(), ...stores.map((s) => s.close())])
  await Promise.all([dbSource.drop(), ...dbs.map((d) => d.drop())])
})

describe('importEvents in batches', () => {
  it('refuses a forged link in the middle of the file: the sessions before it are committed, it and the ones after are not', async () => {
    // given: the link of seq 2 of the 15th session is changed
    const target = await freshStore()
    const victim = ids[14] as SessionId
    const at = lineOf(lines, victim, 2)
    const progress: ImportProgress[] = []

    // when / then
    await expect(importEvents(target, forgeLink(lines, at), { onProgress: (p) => progress.push(p) })).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: at + 1, sessionId: victim, seq: 2 },
    })
    expect(progress.map((p) => p.sessionId)).toEqual(ids.slice(0, 14))
    for (const id of ids.slice(0, 14)) expect(await eventsOf(target, id)).toEqual(await eventsOf(source, id))
    for (const id of ids.slice(14)) expect(await exists(target, id)).toBe(false)

    // and the intact file completes the import
    const again = await importEvents(target, lines)
    expect(again).toMatchObject({ sessions: 30, eventsWritten: 16 * 2, eventsSkipped: 14 * 2 })
    for (const id of ids) expect((await verifyChain(target, id)).ok).toBe(true)
    expect((await target.rebuild({ verify: true })).drift).toEqual([])
  })

  it('refuses a session whose message belongs to a session earlier in the same batch, writing nothing of it', async () => {
    // given: the 20th session re-uses the first message of the 3rd (both original appends)
    const target = await freshStore()
    const donor = ids[2] as SessionId
    const thief = ids[19] as SessionId
    const donorFirst = JSON.parse(lines[lineOf(lines, donor, 1)] as string) as { messageId: string; contentHash: string }
    const thiefFile = (await collect(exportSessions(source, { sessionIds: [thief] }))).slice(1, -1)
    const rewritten = await (async () => {
      // the thief's log with the donor's message in place of its first one, chained again by a store
      const scratch = await freshStore()
      const s = await scratch.createSession({ id: thief, metadata: { i: 19 } })
      const first = JSON.parse(thiefFile[1] as string) as { payload: unknown }
      await scratch.append(s, [
        createMessage({ role: 'user', content: 'question 2' }, { id: donorFirst.messageId }),
        createMessage(first.payload as never),
      ])
      return (await collect(exportSessions(scratch, { sessionIds: [s] }))).slice(1, -1)
    })()
    const start = lines.findIndex((l) => l.startsWith('{"kind":"session"') && l.includes(`"id":"${thief}"`))
    const file = [...lines.slice(0, start), ...rewritten, ...lines.slice(start + thiefFile.length)]

    // when / then
    await expect(importEvents(target, file)).rejects.toMatchObject({
      code: 'MESSAGE_CONFLICT',
      details: { reason: 'foreign_session', sessionId: thief, messageId: donorFirst.messageId, otherSessionId: donor },
    })
    for (const id of ids.slice(0, 19)) expect(await eventsOf(target, id)).toEqual(await eventsOf(source, id))
    for (const id of ids.slice(19)) expect(await exists(target, id)).toBe(false)
  })

  it('writes a session larger than one call, and refuses a forged link past the first call', async () => {
    // given
    const target = await freshStore()
    const at = lineOf(bigLines, big, 2050)

    // when / then: all or nothing
    await expect(importEvents(target, forgeLink(bigLines, at))).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: at + 1, seq: 2050 },
    })
    expect(await exists(target, big)).toBe(false)
    const result = await importEvents(target, bigLines)
    expect(result).toMatchObject({ eventsWritten: 2100, eventsSkipped: 0 })
    expect(await eventsOf(target, big)).toEqual(await eventsOf(source, big))
    expect((await verifyChain(target, big)).ok).toBe(true)
    expect((await target.load(big)).messages).toHaveLength(2100)
  }, 60_000)

  it('checks the file links of the events the store already has', async () => {
    // given: the first session imported, then a file whose stored event has another payload and content
    // hash but its old link
    const target = await freshStore()
    const id = ids[0] as SessionId
    const one = await collect(exportSessions(source, { sessionIds: [id] }))
    await importEvents(target, one)
    const at = lineOf(one, id, 1)
    const record = JSON.parse(one[at] as string) as Record<string, unknown>
    const payload = { role: 'user', content: 'question 0, edited' }
    const forged = one.map((l, i) =>
      i === at
        ? JSON.stringify({
            ...record,
            payload,
            contentHash: createHash('sha256')
              .update(JSON.stringify({ content: payload.content, role: 'user' }))
              .digest('hex'),
          })
        : l,
    )

    // when / then
    await expect(importEvents(target, forged)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: at + 1, seq: 1 } })
    expect(await eventsOf(target, id)).toEqual(await eventsOf(source, id))
  })

  it('refuses a forged link in PGlite too', async () => {
    // given
    const { store: target, close } = await openTestStore('pglite')
    try {
      const at = lineOf(lines, ids[5] as string, 1)

      // when / then
      await expect(importEvents(target, forgeLink(lines, at))).rejects.toMatchObject({
        code: 'IMPORT_FAILED',
        details: { line: at + 1, seq: 1 },
      })
      for (const id of ids.slice(0, 5)) expect(await eventsOf(target, id)).toEqual(await eventsOf(source, id))
      for (const id of ids.slice(5)) expect(await exists(target, id)).toBe(false)
    } finally {
      await close()
    }
  })
})

describe('turnlog.import_events', () => {
  type Row = readonly [
    session: string,
    seq: number,
    eventId: string,
    type: string,
    messageId: string,
    contentHash: string,
    payload: string,
    data: string,
    recordedAt: string,
    digest: string,
    hash: string,
  ]

  /** The arguments of import_events for exported events (each a column, values joined by U+001E). */
  function argsOf(file: readonly string[], change: (row: string[]) => void = () => {}): string[] {
    const rows = file
      .filter((l) => l.startsWith('{"kind":"event"'))
      .map((l) => {
        const e = JSON.parse(l) as Record<string, unknown>
        const row = [
          e['sessionId'],
          String(e['seq']),
          e['eventId'],
          e['type'],
          e['messageId'] ?? '',
          e['contentHash'] ?? '',
          e['payload'] === null ? '' : JSON.stringify(e['payload']),
          JSON.stringify(e['data']),
          e['recordedAt'],
          e['payloadDigest'] ?? '',
          e['hash'],
        ] as string[]
        change(row)
        return row as unknown as Row
      })
    return Array.from({ length: 11 }, (_, c) => rows.map((r) => r[c]).join('\u001e'))
  }

  let target: PostgresStore
  let admin: pg.Client
  let writer: { name: string; client: pg.Client } | null = null
  const id = (): SessionId => ids[7] as SessionId
  const file = (): string[] => lines.slice(lineOf(lines, id(), 1), lineOf(lines, id(), 2) + 1)

  beforeAll(async () => {
    target = await freshStore()
    admin = new pg.Client({ connectionString: (dbs[dbs.length - 1] as TestDatabase).connectionString })
    await admin.connect()
    // a login role in turnlog_writer (roles are cluster-wide: the name carries random bytes)
    const name = `import_writer_${randomBytes(6).toString('hex')}`
    await admin.query(`create role ${name} login; grant turnlog_writer to ${name}`)
    const url = new URL((dbs[dbs.length - 1] as TestDatabase).connectionString)
    url.username = name
    url.password = ''
    const client = new pg.Client({ connectionString: url.toString() })
    await client.connect()
    writer = { name, client }
  })

  afterAll(async () => {
    if (writer) {
      await writer.client.end()
      await admin.query(`drop owned by ${writer.name}; drop role ${writer.name}`)
    }
    await admin.end()
  })

  const call = 'select turnlog.import_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) as n'

  async function sqlState(client: pg.Client, text: string, params: unknown[] = []): Promise<string> {
    try {
      await client.query(text, params)
      return 'ok'
    } catch (error) {
      return String((error as { code?: unknown }).code)
    }
  }

  it('lets a writer insert only events whose every link it computes itself', async () => {
    // given: the session exists (a writer may create sessions without a tenant)
    const w = (writer as { client: pg.Client }).client
    await w.query('insert into turnlog.sessions (session_id, version) values ($1, 2)', [id()])
    const good = argsOf(file())
    const [sessions, seqs, eventIds, types, messageIds, contentHashes, payloads, data, recordedAt, digests, hashes] = good
    const wrongSecond = [
      sessions,
      seqs,
      eventIds,
      types,
      messageIds,
      contentHashes,
      payloads,
      data,
      recordedAt,
      digests,
      (hashes as string)
        .split('\u001e')
        .map((h, i) => (i === 1 ? `${h.slice(0, 63)}${h.endsWith('0') ? '1' : '0'}` : h))
        .join('\u001e'),
    ]
    const otherPayload = argsOf(file(), (row) => {
      if (row[1] === '2') row[6] = JSON.stringify({ role: 'assistant', content: 'not what was linked' })
    })

    // when / then: a wrong link, or content the link does not cover, raises TLC02 and writes nothing
    await expect(w.query(call, wrongSecond)).rejects.toMatchObject({ code: 'TLC02' })
    await expect(w.query(call, otherPayload)).rejects.toMatchObject({ code: 'TLC02' })
    expect((await admin.query('select count(*)::int as n from turnlog.events where session_id = $1', [id()])).rows[0].n).toBe(0)
    // a payload digest (redaction only), and a hash supplied directly, are not the writer's to give
    expect(
      await sqlState(
        w,
        call,
        argsOf(file(), (row) => {
          row[9] = '0'.repeat(64)
        }),
      ),
    ).toBe('42501')
    expect(
      await sqlState(
        w,
        `insert into turnlog.events (session_id, seq, event_id, type, data, hash) values ($1, 1, $2, 'session_forked', '{}', '\\x00')`,
        [id(), '0190c5e2-7b1c-7a33-9f00-1234567890ab'],
      ),
    ).toBe('42501')
    // the right links: written, each stored link the one the database computed
    expect((await w.query(call, good)).rows[0].n).toBe('2')
    expect((await verifyChain(target, id())).ok).toBe(true)
  })

  it('refuses a session the caller may not see as if it did not exist', async () => {
    // given: a session of a tenant the writer role is not mapped to
    const other = ids[8] as SessionId
    await admin.query(`insert into turnlog.sessions (session_id, tenant_id, version) values ($1, 'acme', 2)`, [other])
    const args = argsOf(lines.slice(lineOf(lines, other, 1), lineOf(lines, other, 2) + 1))

    // when / then
    expect(await sqlState((writer as { client: pg.Client }).client, call, args)).toBe('TLS01')
    expect((await admin.query(call, args)).rows[0].n).toBe('2')
  })

  it('keeps the chain triggers for every other insert: a superuser supplying a link gets the computed one', async () => {
    // given
    const s = ids[9] as SessionId
    await admin.query('insert into turnlog.sessions (session_id, version) values ($1, 1)', [s])
    const e = JSON.parse(lines[lineOf(lines, s, 1)] as string) as Record<string, string>

    // when: a raw insert with a forged link (the chain triggers skip only rows import_events links)
    await admin.query(
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, hash)
       values ($1, 1, $2, $3, $4, decode($5, 'hex'), $6, $7, $8, '\\x00')`,
      [
        s,
        e['eventId'],
        e['type'],
        e['messageId'],
        e['contentHash'],
        JSON.stringify(e['payload']),
        JSON.stringify(e['data']),
        e['recordedAt'],
      ],
    )

    // then
    const { rows } = await admin.query<{ hash: string }>(`select encode(hash, 'hex') as hash from turnlog.events where session_id = $1`, [
      s,
    ])
    expect(rows[0]?.hash).toBe(e['hash'])
  })
})
