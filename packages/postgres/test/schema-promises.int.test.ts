/**
 * docs/schema.md, the promises no other test pinned down on a real server (an audit of the document,
 * promise by promise; the catalog snapshot, catalog.int.test.ts and security/ pin the shape and the
 * privileges):
 *
 * - `turnlog.sessions.metadata`: the caller's JSON, stored exactly.
 * - What the database refuses a raw writer (`SET ROLE turnlog_writer`, raw SQL around the store) that
 *   writes the log: an event past the next seq (`TLC01`), at a seq the log holds (`23505` on
 *   `events_pkey`), a second session's message id or a second original append of the session's own
 *   (`23505` on `message_ids_pkey`, nothing of the statement written), a copy of a live id (`23505` on
 *   `live_messages_pkey`), an event whose predecessor a later transaction wrote and committed first
 *   (`40001`); a fork's copy claims no id; what it may write does not move `sessions.version` (load
 *   shows it at the old version, verifyChain reports `version_mismatch`); a version it sets wrong fails
 *   the session's next write only.
 * - What the database does not check: a content hash that is not the payload's, a type not in the list
 *   (verifyChain and the audit report them), JSON texts spelled otherwise than `JSON.stringify` (linked,
 *   then reported by verifyChain as `hash_mismatch`: the chain covers the stored texts).
 * - `events_link` keeps a link supplied by a role acting as `turnlog_owner` (verifyChain reports it).
 * - `turnlog.message_ids`: one row per claimed id with the introducing session and the tenant scope
 *   (`''` without a tenant, `'='` and the tenant id otherwise). A raw event labelled a copy of a session
 *   that is not the fork parent is not refused, and an `{ all: true }` audit reports the shared id
 *   (regression: the audit skipped every copy label); two tenants holding one id are no finding
 *   (regression: the audit keyed ids without the tenant and reported them).
 * - The triggers of `turnlog.events` fire in the documented order.
 * - `turnlog.load_session`: the session row, then one row per live message, hash as hex.
 * - `turnlog.sessions.appends_only` (0007): true while the log is plain appends, cleared by the
 *   statement that brings another event (a store call or a raw writer's), load the same through the
 *   function and the prepared statement either way; a flag the log contradicts is drift (verify, audit),
 *   one left unset is not; rebuild sets it from the log.
 * - `turnlog.append_batches`: a row per settled batch; the batches it leaves out wrote nothing.
 * - `turnlog.lock_message_sessions`: the session and every session of its tenant holding the message.
 * - `turnlog.import_events`: `TLS01` for an unknown session, `TLC01` for a missing stored
 *   predecessor, `TLC02` whose detail is JSON naming the session, seq, supplied and computed link.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
import {
  contentHash,
  createMessage,
  newEventId,
  newMessageId,
  newSessionId,
  type JsonValue,
  type Message,
  type SessionId,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { turnlogRejection, useTestStore, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

const user = (content: string): Message => createMessage({ role: 'user', content })

/** Runs `fn` on a fresh client as the test server's superuser. */
async function superuser<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.connectionString })
  client.on('error', () => {})
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Runs one statement as a raw writer (`SET ROLE turnlog_writer`, no tenant) and returns its SQLSTATE and constraint, or 'ok'. */
async function asWriter(text: string, params: readonly unknown[]): Promise<{ code: string; constraint?: string }> {
  return superuser(async (c) => {
    await c.query('set role turnlog_writer')
    try {
      await c.query(text, params as unknown[])
      return { code: 'ok' }
    } catch (error) {
      const e = error as { code?: unknown; constraint?: unknown }
      return { code: String(e.code), ...(typeof e.constraint === 'string' ? { constraint: e.constraint } : {}) }
    }
  })
}

/** A raw `message_appended` row: session, seq, message id, payload text, data text, content hash (hex): see {@link appendArgs}. */
const RAW_APPEND = `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
  values ($1, $2, gen_random_uuid(), 'message_appended', $3, decode($6, 'hex'), $4::json, $5::json)`

const payloadText = (content: string): string => JSON.stringify({ role: 'user', content })

/** The parameters of {@link RAW_APPEND} for a user message of `content` (its content hash as core computes it). */
const appendArgs = (session: string, seq: number, id: string, content: string, data: object = {}): unknown[] => [
  session,
  seq,
  id,
  payloadText(content),
  JSON.stringify(data),
  contentHash({ payload: { role: 'user', content } }),
]

/** The rows of the log, the live list and the message ids a session has (read as the superuser). */
async function rowsOf(session: SessionId): Promise<{ events: number; live: number; claims: number }> {
  return superuser(async (c) => {
    const { rows } = await c.query<{ events: number; live: number; claims: number }>(
      `select (select count(*)::int from turnlog.events where session_id = $1) as events,
              (select count(*)::int from turnlog.live_messages where session_id = $1) as live,
              (select count(*)::int from turnlog.message_ids where session_id = $1) as claims`,
      [session],
    )
    return rows[0]!
  })
}

describe('turnlog.sessions (schema.md)', () => {
  it("stores the caller's metadata exactly: the stored text is JSON.stringify's, read back equal, key order, __proto__, NUL and a lone surrogate kept", async () => {
    // given metadata with an own __proto__ key, a NUL and a lone surrogate, keys out of order
    const metadata = JSON.parse('{"z":1,"a":"nul\\u0000 lone \\ud800","__proto__":{"x":1},"e":[]}') as JsonValue
    // when
    const sid = await store.createSession({ metadata })
    // then
    const stored = await superuser(
      async (c) =>
        (await c.query<{ t: string }>('select metadata::text as t from turnlog.sessions where session_id = $1', [sid])).rows[0]?.t,
    )
    expect(stored).toBe(JSON.stringify(metadata))
    const info = await store.getSession(sid)
    expect(JSON.stringify(info.metadata)).toBe(JSON.stringify(metadata))
    expect(Object.keys(info.metadata as object)).toEqual(['z', 'a', '__proto__', 'e'])
  })
})

describe('turnlog.events refuses a raw writer what would break the log (schema.md, the log)', () => {
  it('an event past the next seq (a gap) is refused with TLC01 (no predecessor); nothing is written', async () => {
    // given a session with two events
    const sid = await store.createSession()
    await store.append(sid, [user('one'), user('two')])
    // when a raw writer inserts seq 4
    const result = await asWriter(RAW_APPEND, appendArgs(sid, 4, newMessageId(), 'gap'))
    // then
    expect(result.code).toBe('TLC01')
    expect(await rowsOf(sid)).toEqual({ events: 2, live: 2, claims: 2 })
  })

  it('an event at a seq the log holds is refused with 23505 on events_pkey (1, 2, 3, … no gaps, no second event per seq)', async () => {
    // given a session with two events
    const sid = await store.createSession()
    await store.append(sid, [user('one'), user('two')])
    // when a raw writer inserts another event at seq 2
    const result = await asWriter(RAW_APPEND, appendArgs(sid, 2, newMessageId(), 'again'))
    // then
    expect(result).toEqual({ code: '23505', constraint: 'events_pkey' })
    expect(await rowsOf(sid)).toEqual({ events: 2, live: 2, claims: 2 })
  })

  it('an original append of an id another session of the tenant holds is refused with 23505 on message_ids_pkey; nothing of the statement is written', async () => {
    // given an id session A appended through the store, and an empty session B
    const a = await store.createSession()
    const taken = user('of a')
    await store.append(a, [taken])
    const b = await store.createSession()
    const fresh = newMessageId()
    // when a raw writer inserts into B, in one statement, a new id and A's id
    const result = await asWriter(
      `insert into turnlog.events (session_id, seq, event_id, type, message_id, payload, data)
       values ($1, 1, gen_random_uuid(), 'message_appended', $2, '{"role":"user","content":"new"}', '{}'),
              ($1, 2, gen_random_uuid(), 'message_appended', $3, '{"role":"user","content":"of a"}', '{}')`,
      [b, fresh, taken.id],
    )
    // then the arbiter refuses it, and neither event, live row nor claim of B exists
    expect(result).toEqual({ code: '23505', constraint: 'message_ids_pkey' })
    expect(await rowsOf(b)).toEqual({ events: 0, live: 0, claims: 0 })
    expect((await store.load(a)).messages.map((m) => m.id)).toEqual([taken.id])
  })

  it("a fork's copy (data.inheritedFrom naming the fork's parent) claims no id: it is written, and the id stays the introducing session's", async () => {
    // given session A holding two ids, and B, a fork of A at the first
    const a = await store.createSession()
    const [first, second] = [user('first of a'), user('second of a')]
    await store.append(a, [first, second])
    const b = await store.fork(a, { at: first.id })
    const version = (await store.getSession(b)).version
    // when a raw writer inserts into B a copy of A's second message naming A
    const result = await asWriter(RAW_APPEND, appendArgs(b, version + 1, second.id, 'second of a', { inheritedFrom: a }))
    // then it is written and live in B, and message_ids still names A only
    expect(result).toEqual({ code: 'ok' })
    expect(await rowsOf(b)).toEqual({ events: version + 1, live: 2, claims: 0 })
    const claims = await superuser(
      async (c) =>
        (await c.query<{ session_id: string }>('select session_id::text from turnlog.message_ids where message_id = $1', [second.id])).rows,
    )
    expect(claims).toEqual([{ session_id: a }])
  })

  it.each([
    ['in a session that is no fork', false, (_a: string): unknown => newSessionId(), { code: 'TLA01' }],
    ['naming another session than the fork parent', true, (_a: string): unknown => newSessionId(), { code: 'TLA01' }],
    ['with a label that is no session id', true, (a: string): unknown => ({ sessionId: a, seq: 1 }), { code: 'TLA01' }],
    [
      'with a JSON null label (an original append: the parent claimed the id)',
      true,
      (_a: string): unknown => null,
      { code: '23505', constraint: 'message_ids_pkey' },
    ],
  ] as const)("a fork's copy %s is refused, and nothing of the statement is written (0006)", async (_, fork, label, refusal) => {
    // given session A holding two ids, and a session B (a fork of A at the first, or a session of its own)
    const a = await store.createSession()
    const [m, n] = [user('of a'), user('also of a')]
    await store.append(a, [m, n])
    const b = fork ? await store.fork(a, { at: m.id }) : await store.createSession()
    const before = await rowsOf(b)
    const other = user('other')
    // when a raw writer inserts into B, in one statement, a fresh message and a copy of A's second labelled otherwise
    const result = await asWriter(
      `${RAW_APPEND}, ($7, $8, gen_random_uuid(), 'message_appended', $9, decode($12, 'hex'), $10::json, $11::json)`,
      [
        ...appendArgs(b, before.events + 1, other.id, 'other'),
        ...appendArgs(b, before.events + 2, n.id, 'also of a', { inheritedFrom: label(a) }),
      ],
    )
    // then the claim trigger refuses it (B does not hold the id: the label alone decides), and B is as it was
    expect(result).toEqual(refusal)
    expect(await rowsOf(b)).toEqual(before)
  })

  it.each([
    ['a copy of an id the fork holds (live)', 'copy', 'live', { code: 'TLA01' }],
    ['a copy of an id the fork holds (rewound)', 'copy', 'rewound', { code: 'TLA01' }],
    ['an original append of an id the fork holds as a copy (live)', 'original', 'live', { code: '23505', constraint: 'message_ids_pkey' }],
    [
      'an original append of an id the fork holds as a copy (rewound)',
      'original',
      'rewound',
      { code: '23505', constraint: 'message_ids_pkey' },
    ],
  ] as const)('%s is refused (0006: a session holds a message id once)', async (_, kind, state, refusal) => {
    // given a fork B of A holding A's two messages, the second rewound or not
    const a = await store.createSession()
    const [first, second] = [user('first'), user('second')]
    await store.append(a, [first, second])
    const b = await store.fork(a, { at: second.id })
    if (state === 'rewound') await store.rewind(b, { after: first.id })
    const before = await rowsOf(b)
    // when a raw writer appends the second again, as a copy naming A or as an original
    const data = kind === 'copy' ? { inheritedFrom: a } : {}
    const result = await asWriter(RAW_APPEND, appendArgs(b, before.events + 1, second.id, 'second', data))
    // then a copy is the trigger's refusal; an original is its claim's (A claimed the id), checked first
    expect(result).toEqual(refusal)
    expect(await rowsOf(b)).toEqual(before)
  })

  it('an original append into a fork of an id the fork holds as a copy no session claims (a raw copy of an id its parent never had) is refused (TLA01)', async () => {
    // given a fork B of A and, raw, a copy in B naming A of an id nobody appended (0006 checks the label, not the parent's log)
    const a = await store.createSession()
    const m = user('of a')
    await store.append(a, [m])
    const b = await store.fork(a, { at: m.id })
    const stray = newMessageId()
    const v = (await rowsOf(b)).events
    expect(await asWriter(RAW_APPEND, appendArgs(b, v + 1, stray, 'stray', { inheritedFrom: a }))).toEqual({ code: 'ok' })
    // when, after a rewind of it (raw), a raw writer appends the same id as an original
    const rewind = `insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, $2, gen_random_uuid(), 'messages_retracted', $3::json)`
    expect(await asWriter(rewind, [b, v + 2, JSON.stringify({ ids: [stray], target: { from: stray } })])).toEqual({ code: 'ok' })
    const result = await asWriter(RAW_APPEND, appendArgs(b, v + 3, stray, 'stray again'))
    // then it is refused: before 0006 it went in (no claim to collide with) and the table showed it live where the fold skips it
    expect(result).toEqual({ code: 'TLA01' })
    expect(await rowsOf(b)).toEqual({ events: v + 2, live: 1, claims: 0 })
  })

  it("the claim trigger's mark (turnlog.claim_check) does not outlive the statement that set it: later statements of the transaction skip the check", async () => {
    // given a fork B of A
    const a = await store.createSession()
    const m = user('of a')
    await store.append(a, [m])
    const b = await store.fork(a, { at: m.id })
    const v = (await rowsOf(b)).events
    // when a raw writer appends into B (the statement is marked and checked) and reads the mark in the same transaction
    const mark = await superuser(async (c) => {
      await c.query('begin')
      await c.query('set role turnlog_writer')
      await c.query(RAW_APPEND, appendArgs(b, v + 1, newMessageId(), 'into the fork'))
      const { rows } = await c.query<{ mark: string | null }>("select current_setting('turnlog.claim_check', true) as mark")
      await c.query('rollback')
      return rows[0]?.mark
    })
    // then it was cleared (schema.md: the trigger clears it before it checks)
    expect(mark).not.toBe('on')
  })

  it('a second original append of an id the session already holds, live or not, is refused with 23505 on message_ids_pkey', async () => {
    // given a session holding one live message and one it retracted
    const sid = await store.createSession()
    const [kept, gone] = [user('kept'), user('gone')]
    await store.append(sid, [kept, gone])
    await store.rewind(sid, { after: kept.id })
    const version = (await store.getSession(sid)).version
    // when a raw writer appends either id again as an original
    const results = await Promise.all(
      [kept, gone].map((m) => asWriter(RAW_APPEND, appendArgs(sid, version + 1, m.id, String(m.payload.content)))),
    )
    // then
    expect(results).toEqual([
      { code: '23505', constraint: 'message_ids_pkey' },
      { code: '23505', constraint: 'message_ids_pkey' },
    ])
    expect((await rowsOf(sid)).events).toBe(version)
  })

  it("an event inserted around the store does not move sessions.version: load shows its message at the store's version, verifyChain reports version_mismatch", async () => {
    // given a session the store wrote to version 1
    const sid = await store.createSession()
    await store.append(sid, [user('one')])
    // when a raw writer inserts seq 2
    expect(await asWriter(RAW_APPEND, appendArgs(sid, 2, newMessageId(), 'around'))).toEqual({ code: 'ok' })
    // then
    expect((await store.getSession(sid)).version).toBe(1)
    const loaded = await store.load(sid)
    expect({ version: loaded.version, messages: loaded.messages.length }).toEqual({ version: 1, messages: 2 })
    const chain = await verifyChain(store, sid)
    expect(chain.breaks.map((b) => b.kind)).toEqual(['version_mismatch'])
  })

  it("a version a raw writer sets wrong only fails the session's next write: lower, a key conflict on events_pkey; higher, CORRUPT_LOG (TLC01); no event changes", async () => {
    // given two sessions at version 2
    const [low, high] = [await store.createSession(), await store.createSession()]
    for (const sid of [low, high]) await store.append(sid, [user('one'), user('two')])
    const before = await superuser(
      async (c) =>
        (await c.query('select session_id, seq, hash from turnlog.events where session_id = any($1::uuid[]) order by 1, 2', [[low, high]]))
          .rows,
    )
    // when a raw writer moves one version down and the other up, and the store appends to each
    expect(await asWriter('update turnlog.sessions set version = 1 where session_id = $1', [low])).toEqual({ code: 'ok' })
    expect(await asWriter('update turnlog.sessions set version = 7 where session_id = $1', [high])).toEqual({ code: 'ok' })
    const errors = [await turnlogRejection(store.append(low, [user('three')])), await turnlogRejection(store.append(high, [user('three')]))]
    // then
    expect(errors.map((e) => [e.code, e.details['sqlState']])).toEqual([
      ['DB_ERROR', '23505'],
      ['CORRUPT_LOG', 'TLC01'],
    ])
    expect((errors[0]?.cause as { constraint?: string } | undefined)?.constraint).toBe('events_pkey')
    const after = await superuser(
      async (c) =>
        (await c.query('select session_id, seq, hash from turnlog.events where session_id = any($1::uuid[]) order by 1, 2', [[low, high]]))
          .rows,
    )
    expect(after).toEqual(before)
  })

  it('an event whose predecessor a later transaction wrote and committed first is refused with 40001 (per-session commit order = seq order)', async () => {
    // given a session with one event, and a transaction that took its id first
    const sid = await store.createSession()
    await store.append(sid, [user('one')])
    const older = new pg.Client({ connectionString: db.connectionString })
    await older.connect()
    try {
      await older.query('begin')
      await older.query('set local role turnlog_writer')
      await older.query('select pg_current_xact_id()')
      // and a later transaction that writes seq 2 and commits
      expect(await asWriter(RAW_APPEND, appendArgs(sid, 2, newMessageId(), 'later'))).toEqual({ code: 'ok' })
      // when the older transaction writes seq 3 after it
      const refused = await older.query(RAW_APPEND, appendArgs(sid, 3, newMessageId(), 'older')).then(
        () => 'ok',
        (e: unknown) => String((e as { code?: unknown }).code),
      )
      // then
      expect(refused).toBe('40001')
    } finally {
      await older.query('rollback').catch(() => {})
      await older.end()
    }
    expect((await rowsOf(sid)).events).toBe(2)
  })
})

describe('the events_link trigger (schema.md, Import: "fires WHEN (new.hash is null or current_user <> \'turnlog_owner\')")', () => {
  it('keeps the link a role acting as turnlog_owner supplies (unverified), and verifyChain reports it', async () => {
    // given a session with one event
    const sid = await store.createSession()
    await store.append(sid, [user('one')])
    const forged = 'ab'.repeat(32)
    // when a superuser acting as the owner inserts seq 2 with a forged link
    await superuser(async (c) => {
      await c.query('set role turnlog_owner')
      await c.query(
        `insert into turnlog.events (session_id, seq, event_id, type, data, hash)
         values ($1, 2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}', decode($2, 'hex'))`,
        [sid, forged],
      )
      await c.query('update turnlog.sessions set version = 2 where session_id = $1', [sid])
    })
    // then the link is stored as given, and the verifier finds it wrong
    const stored = await superuser(
      async (c) =>
        (await c.query<{ h: string }>("select encode(hash, 'hex') as h from turnlog.events where session_id = $1 and seq = 2", [sid]))
          .rows[0]?.h,
    )
    expect(stored).toBe(forged)
    expect((await verifyChain(store, sid)).breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'hash_mismatch']])
  })
})

describe('what turnlog.events does not check (schema.md, the log: content_hash, type, the texts the chain covers)', () => {
  it("stores a content hash that is not the payload's and a type not in the list; verifyChain reports the hash, the audit the event", async () => {
    // given a session at version 1
    const sid = await store.createSession()
    await store.append(sid, [user('one')])
    // when a raw writer inserts a message whose content hash is another payload's, then an event of an unknown type
    const wrongHash = appendArgs(sid, 2, newMessageId(), 'two')
    wrongHash[5] = contentHash({ payload: { role: 'user', content: 'not two' } })
    const results = [
      await asWriter(RAW_APPEND, wrongHash),
      await asWriter(
        "insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, 3, gen_random_uuid(), 'bogus', '{}')",
        [sid],
      ),
    ]
    await superuser((c) => c.query('update turnlog.sessions set version = 3 where session_id = $1', [sid]))
    // then both are stored, and the readers name them
    expect(results).toEqual([{ code: 'ok' }, { code: 'ok' }])
    expect((await verifyChain(store, sid)).breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'content_hash_mismatch']])
    const findings = (await audit(store, sid)).findings
    expect(findings.filter((f) => f.kind === 'fold_anomaly').map((f) => f.seqs)).toEqual([[3]])
  })

  it("links the stored data and payload texts: an event written around the store verifies only when they are JSON.stringify's", async () => {
    // given a session at version 1
    const sid = await store.createSession()
    await store.append(sid, [user('one')])
    // when a raw writer inserts an event whose data text is JSON.stringify's, then one whose data text is the
    // same JSON spelled with spaces, then one whose payload text is spelled with spaces
    const retract =
      "insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, $2, gen_random_uuid(), 'messages_retracted', $3::json)"
    const spaced = appendArgs(sid, 4, newMessageId(), 'four')
    spaced[3] = '{ "role": "user", "content": "four" }'
    const results = [
      await asWriter(retract, [sid, 2, '{"ids":[]}']),
      await asWriter(retract, [sid, 3, '{ "ids": [] }']),
      await asWriter(RAW_APPEND, spaced),
    ]
    await superuser((c) => c.query('update turnlog.sessions set version = 4 where session_id = $1', [sid]))
    // then all are stored, and the verifier (which hashes JSON.stringify of what it reads) rejects the two spelled otherwise
    expect(results).toEqual([{ code: 'ok' }, { code: 'ok' }, { code: 'ok' }])
    expect((await verifyChain(store, sid)).breaks.map((b) => [b.seq, b.kind])).toEqual([
      [3, 'hash_mismatch'],
      [4, 'hash_mismatch'],
    ])
  })
})

describe('turnlog.message_ids (schema.md, one session per message id)', () => {
  it("a raw event labelled a fork's copy in a session that is no fork is refused (TLA01; 0006); written before 0006 (the trigger off), an { all: true } audit reports the shared id", async () => {
    // given an id session A appended, a fork of A (a genuine copy), and a session B that is no fork
    const a = await store.createSession()
    const m = user('copied')
    await store.append(a, [m])
    await store.fork(a, { at: m.id })
    const b = await store.createSession()
    // when a raw writer appends m into B as a "copy" of A's
    const refused = await asWriter(RAW_APPEND, appendArgs(b, 1, m.id, 'copied', { inheritedFrom: a }))
    // and the same row is written as a database before 0006 took it (the claim trigger off for the statement)
    await superuser(async (c) => {
      await c.query('begin')
      await c.query('alter table turnlog.events disable trigger events_claim_ids')
      await c.query(RAW_APPEND, appendArgs(b, 1, m.id, 'copied', { inheritedFrom: a }))
      await c.query('alter table turnlog.events enable trigger events_claim_ids')
      await c.query('update turnlog.sessions set version = 1 where session_id = $1', [b])
      await c.query('commit')
    })
    // then the database refuses it, and the audit finds the legacy row's id in two sessions, once (the fork's copy is no finding)
    expect(refused).toEqual({ code: 'TLA01' })
    const shared = (await audit(store, { all: true })).findings.filter((f) => f.kind === 'shared_message_id' && f.messageIds.includes(m.id))
    expect(shared.map((f) => [f.sessionId, f.evidence?.['otherSessionId']].sort())).toEqual([[a, b].sort()])
  })

  it("two tenants' sessions holding one id (each claimed in its tenant's scope) are no shared_message_id in an { all: true } audit", async () => {
    // given one id appended in tenant A's session and, raw (the owner's store refuses an id it sees elsewhere), in tenant B's
    const [a, b] = [await store.createSession({ tenantId: 'scope-a' }), await store.createSession({ tenantId: 'scope-b' })]
    const m = user('both tenants')
    await store.append(a, [m])
    await superuser(async (c) => {
      await c.query(RAW_APPEND, appendArgs(b, 1, m.id, 'both tenants'))
      await c.query('update turnlog.sessions set version = 1 where session_id = $1', [b])
    })
    // when the owner audits every session
    const findings = (await audit(store, { all: true })).findings
    // then the two claims are there, and the audit reports no shared id for them
    const scopes = await superuser(
      async (c) =>
        (await c.query<{ tenant_scope: string }>('select tenant_scope from turnlog.message_ids where message_id = $1 order by 1', [m.id]))
          .rows,
    )
    expect(scopes.map((r) => r.tenant_scope)).toEqual(['=scope-a', '=scope-b'])
    expect(findings.filter((f) => f.kind === 'shared_message_id' && f.messageIds.includes(m.id))).toEqual([])
  })

  it("holds one row per claimed id with the introducing session and its tenant scope: '' without a tenant, '=' and the tenant id otherwise", async () => {
    // given an untenanted and a tenanted session, each appending one message, and a fork of the tenanted one
    const plain = await store.createSession()
    const tenanted = await store.createSession({ tenantId: 'acme' })
    const [p, t] = [user('plain'), user('tenanted')]
    await store.append(plain, [p])
    await store.append(tenanted, [t])
    await store.fork(tenanted, { at: t.id })
    // when
    const rows = await superuser(
      async (c) =>
        (
          await c.query<{ message_id: string; tenant_scope: string; session_id: string }>(
            'select message_id::text, tenant_scope, session_id::text from turnlog.message_ids where message_id = any($1::uuid[]) order by tenant_scope',
            [[p.id, t.id]],
          )
        ).rows,
    )
    // then
    expect(rows).toEqual([
      { message_id: p.id, tenant_scope: '', session_id: plain },
      { message_id: t.id, tenant_scope: '=acme', session_id: tenanted },
    ])
  })
})

describe('the triggers of turnlog.events (schema.md, "Triggers, in order")', () => {
  it('fire as documented: events_link before each row, then after the statement events_claim_ids, events_notify, events_project (name order)', async () => {
    // given the migrated schema; Postgres fires the triggers of one timing and event in name order
    // when listing them in the order they fire
    const rows = await superuser(
      async (c) =>
        (
          await c.query<{ name: string; timing: string }>(
            `select t.tgname as name,
                    case when t.tgtype & 2 <> 0 then 'before' else 'after' end
                      || case when t.tgtype & 1 <> 0 then ' row' else ' statement' end as timing
               from pg_trigger t where t.tgrelid = 'turnlog.events'::regclass and not t.tgisinternal
              order by (t.tgtype & 2 <> 0) desc, (t.tgtype & 1 <> 0) desc, t.tgname collate "C"`,
          )
        ).rows,
    )
    // then
    expect(rows).toEqual([
      { name: 'events_link', timing: 'before row' },
      { name: 'events_claim_ids', timing: 'after statement' },
      { name: 'events_notify', timing: 'after statement' },
      { name: 'events_project', timing: 'after statement' },
    ])
  })
})

describe('turnlog.load_session (schema.md, Load)', () => {
  it("returns the session's own row (version, message columns null) and one row per live message: id, position, partial, content_hash as hex, data, payload", async () => {
    // given a session with a final and a partial message
    const sid = await store.createSession()
    const final = user('final')
    const streaming = createMessage({ role: 'assistant', content: 'stream' }, { status: 'partial' })
    await store.append(sid, [final, streaming])
    // when
    const rows = await superuser(async (c) => (await c.query('select * from turnlog.load_session($1)', [sid])).rows)
    // then
    const byVersion = (r: Record<string, unknown>): boolean => r['version'] !== null
    expect(rows.filter(byVersion)).toEqual([
      { version: '2', message_id: null, position: null, partial: null, content_hash: null, data: null, payload: null },
    ])
    const messages = rows.filter((r) => !byVersion(r)).sort((x, y) => Number(x['position']) - Number(y['position']))
    expect(messages.map((r) => [r['message_id'], r['position'], r['partial'], r['content_hash']])).toEqual([
      [final.id, '1', false, contentHash(final)],
      [streaming.id, '2', true, contentHash(streaming)],
    ])
    expect(messages.map((r) => r['payload'])).toEqual([final.payload, streaming.payload])
    expect(messages[1]!['data']).toMatchObject({ status: 'partial' })
  })
})

describe('sessions.appends_only (schema.md, "sessions"; 0007)', () => {
  /** The stored flag of `session` (read as the superuser). */
  const flagOf = async (session: string): Promise<boolean> =>
    superuser(
      async (c) =>
        (await c.query<{ f: boolean }>('select appends_only as f from turnlog.sessions where session_id = $1', [session])).rows[0]!.f,
    )
  /** What load gives, through load_session (the store's pool) and through the prepared statement (`direct`). */
  const loadedBothWays = async (direct: PostgresStore, session: string): Promise<unknown[]> => {
    const shape = (r: { version: number; messages: readonly Message[] }): unknown => [
      r.version,
      r.messages.map((m) => [m.id, m.payload, m.createdAt, m.status, contentHash(m)]),
    ]
    return [shape(await store.load(session)), shape(await direct.load(session))]
  }

  it('is true while every event is a plain append (partial ones too) and false from the first other event on; load gives the same both ways either side', async () => {
    const direct = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    try {
      // given a session of appends, one of them partial
      const sid = await store.createSession()
      expect(await flagOf(sid)).toBe(true)
      const [a, b] = [user('a'), createMessage({ role: 'assistant', content: 'b…' }, { status: 'partial' })]
      await store.append(sid, [a, b])
      // then the flag holds, and the partial message loads partial both ways
      expect(await flagOf(sid)).toBe(true)
      const [viaFunction, viaPrepared] = await loadedBothWays(direct, sid)
      expect(viaPrepared).toEqual(viaFunction)
      expect((await direct.load(sid)).messages.map((m) => m.status)).toEqual([undefined, 'partial'])

      // when any other kind of event comes: each store call that writes one clears it
      const calls: [string, (s: SessionId) => Promise<unknown>][] = [
        ['finalize', async (s) => store.finalize(s, (await store.load(s)).messages[1]!.id)],
        ['rewind', async (s) => store.rewind(s, { after: (await store.load(s)).messages[0]!.id })],
        ['revise', async (s) => store.revise(s, (await store.load(s)).messages[0]!.id, { role: 'user', content: 'a, revised' })],
        ['compact', async (s) => store.compact(s, { covered: [(await store.load(s)).messages[0]!.id], summary: [user('summary')] })],
      ]
      for (const [name, call] of calls) {
        const other = await store.createSession()
        await store.append(other, [user(`${name} 1`), createMessage({ role: 'assistant', content: `${name} 2` }, { status: 'partial' })])
        await call(other)
        expect([name, await flagOf(other)]).toEqual([name, false])
        const [f, p2] = await loadedBothWays(direct, other)
        expect([name, p2]).toEqual([name, f])
      }
      // and a fork: the fork session is no plain log (its marker), the parent keeps its flag
      const fork = await store.fork(sid, { at: a.id })
      expect([await flagOf(fork), await flagOf(sid)]).toEqual([false, true])
      const [f, p2] = await loadedBothWays(direct, fork)
      expect(p2).toEqual(f)
    } finally {
      await direct.close()
    }
  })

  it("a raw writer's statement clears it for the sessions it brings another event or a deferred append, in the same statement; plain appends keep it", async () => {
    // given three sessions of one append each
    const [plain, retracted, deferred] = [await store.createSession(), await store.createSession(), await store.createSession()]
    const first = new Map<string, string>()
    for (const sid of [plain, retracted, deferred]) {
      const m = user(`first of ${sid}`)
      first.set(sid, m.id)
      await store.append(sid, [m])
    }
    // when a writer appends to the first, retracts in the second, appends a deferred message to the third
    expect((await asWriter(RAW_APPEND, appendArgs(plain, 2, newMessageId(), 'raw', { createdAt: new Date(0).toISOString() }))).code).toBe(
      'ok',
    )
    expect(
      (
        await asWriter(
          `insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, 2, gen_random_uuid(), 'messages_retracted', $2::json)`,
          [retracted, JSON.stringify({ ids: [first.get(retracted)] })],
        )
      ).code,
    ).toBe('ok')
    expect(
      (
        await asWriter(
          RAW_APPEND,
          appendArgs(deferred, 2, newMessageId(), 'later', { createdAt: new Date(0).toISOString(), deferred: true }),
        )
      ).code,
    ).toBe('ok')
    // then
    expect([await flagOf(plain), await flagOf(retracted), await flagOf(deferred)]).toEqual([true, false, false])
    // and load (at the version the raw rows did not move) shows what the projection shows: the retracted message gone, the deferred one absent
    expect((await store.load(retracted)).messages).toEqual([])
    expect((await store.load(deferred)).messages.map((m) => m.id)).toEqual([first.get(deferred)])
    const { drift } = await store.rebuild({ verify: true })
    expect(drift.filter((d) => [plain, retracted, deferred].includes(d.sessionId))).toEqual([])
  })

  it('a flag the log contradicts is drift: rebuild --verify and the audit report it, a rebuild sets it from the log; one left unset is no drift', async () => {
    // given a rewound session whose flag an operator set by hand (load would then read the rewound message as live)
    const sid = await store.createSession()
    const [a, b] = [user('kept'), user('rewound')]
    await store.append(sid, [a, b])
    await store.rewind(sid, { after: a.id })
    await superuser(async (c) => c.query('update turnlog.sessions set appends_only = true where session_id = $1', [sid]))
    // and a plain session whose flag is unset (as for every session older than 0007)
    const older = await store.createSession()
    await store.append(older, [user('older')])
    await superuser(async (c) => c.query('update turnlog.sessions set appends_only = false where session_id = $1', [older]))
    // when verified
    const verified = await store.rebuild({ verify: true })
    // then the contradicting flag is drift, the unset one is not
    expect(verified.drift.map((d) => [d.sessionId, d.explanation])).toEqual([[sid, expect.stringMatching(/appends_only is set/)]])
    const report = await audit(store, sid)
    expect(report.findings.map((f) => f.kind)).toContain('projection_drift')
    // when rebuilt
    await store.rebuild()
    // then each flag is what the log says, and nothing drifts
    expect([await flagOf(sid), await flagOf(older)]).toEqual([false, true])
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual([a.id])
  })
})

describe('turnlog.append_batches (schema.md, Functions)', () => {
  it('returns (batch, version, appended, duplicates) for each batch it settled; a batch it leaves out (stale version, missing session, an id new in an earlier batch, a conflict) wrote nothing', async () => {
    // given: sessions for six batches; the fifth holds x, the sixth holds c
    const [s1, s2, s4, s5, s6] = [
      await store.createSession(),
      await store.createSession(),
      await store.createSession(),
      await store.createSession(),
      await store.createSession(),
    ]
    const missing = newSessionId()
    const [a, b, x, c] = [user('a'), user('b'), user('x'), user('c')]
    await store.append(s5, [x])
    await store.append(s6, [c])
    const otherC = createMessage({ role: 'user', content: 'not c' }, { id: c.id })
    const batches: [string, number | null, Message][] = [
      [s1, 0, a], // new: settled
      [s2, 5, b], // another version than expected
      [missing, null, b], // no session
      [s4, null, a], // a is new in batch 1 of this call
      [s5, null, x], // only a duplicate: settled
      [s6, null, otherC], // a conflict
    ]
    // when the batches go in one call
    const rows = await superuser(
      async (client) =>
        (
          await client.query<{ batch: number; version: string; appended: string[]; duplicates: string[] }>(
            `select batch, version, appended::text[] as appended, duplicates::text[] as duplicates
               from turnlog.append_batches($1::json, $2::json, $3::json, $4::json, $5::json, $6::json, $7::json, $8::json) order by batch`,
            [
              JSON.stringify(batches.map(([sid]) => sid)),
              JSON.stringify(batches.map(([, v]) => v)),
              JSON.stringify(batches.map(() => 1)),
              JSON.stringify(batches.map(([, , m]) => m.id)),
              JSON.stringify(batches.map(([, , m]) => contentHash(m))),
              JSON.stringify(batches.map(() => newEventId())),
              `[${batches.map(([, , m]) => JSON.stringify(m.payload)).join(',')}]`,
              `[${batches.map(() => '{}').join(',')}]`,
            ],
          )
        ).rows,
    )
    // then
    expect(rows).toEqual([
      { batch: 1, version: '1', appended: [a.id], duplicates: [] },
      { batch: 5, version: '1', appended: [], duplicates: [x.id] },
    ])
    expect([await rowsOf(s2), await rowsOf(s4), await rowsOf(s6)]).toEqual([
      { events: 0, live: 0, claims: 0 },
      { events: 0, live: 0, claims: 0 },
      { events: 1, live: 1, claims: 1 },
    ])
    expect((await store.load(s1)).messages.map((m) => m.id)).toEqual([a.id])
  })
})

describe('turnlog.lock_message_sessions (schema.md, Functions)', () => {
  it('returns the session and every session of its tenant holding the message, none of another tenant', async () => {
    // given a tenant's session holding a message, its fork (a copy), a session of the tenant without it,
    // and another tenant's session holding the same id
    const parent = await store.createSession({ tenantId: 'lock-a' })
    const m = user('shared')
    await store.append(parent, [m])
    const child = await store.fork(parent, { at: m.id })
    const bystander = await store.createSession({ tenantId: 'lock-a' })
    await store.append(bystander, [user('other')])
    const foreign = await store.createSession({ tenantId: 'lock-b' })
    // (raw: the store refuses an id it sees in another session, whatever the tenant)
    await superuser((c) => c.query(RAW_APPEND, appendArgs(foreign, 1, m.id, 'shared')))
    // when
    const locked = await superuser(async (c) => {
      await c.query('begin')
      try {
        return (await c.query<{ s: string[] }>('select turnlog.lock_message_sessions($1, $2)::text[] as s', [parent, m.id])).rows[0]!.s
      } finally {
        await c.query('rollback')
      }
    })
    // then
    expect([...locked].sort()).toEqual([parent, child].sort())
  })
})

describe('turnlog.import_events (schema.md, Import)', () => {
  /** import_events' arguments for one empty rewind of `session` at `seq`, supplying `link`. */
  const rewindArgs = (session: string, seq: string, eventId: string, link = '00'.repeat(32)): string[] => [
    session,
    seq,
    eventId,
    'messages_retracted',
    '',
    '',
    '',
    '{"ids":[]}',
    '2026-01-01T00:00:00Z',
    '',
    link,
  ]

  it('refuses a session the caller may not act on (an unknown one) with TLS01, and a first event whose stored predecessor is missing with TLC01', async () => {
    // given an empty session, and an id no session has
    const sid = await store.createSession()
    const event = (session: string, seq: string): string[] => rewindArgs(session, seq, '0190f5a2-0000-7000-8000-000000000002')
    // when importing into the unknown session, and seq 3 into the empty one
    const codes = await superuser(async (c) => {
      await c.query('set role turnlog_writer')
      const codeOf = (args: string[]): Promise<string> =>
        c.query('select turnlog.import_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)', args).then(
          () => 'ok',
          (e: unknown) => String((e as { code?: unknown }).code),
        )
      return [await codeOf(event(newSessionId(), '1')), await codeOf(event(sid, '3'))]
    })
    // then
    expect(codes).toEqual(['TLS01', 'TLC01'])
    expect((await rowsOf(sid)).events).toBe(0)
  })

  it('refuses a supplied link that is not the computed one with TLC02, its detail JSON naming sessionId, seq, suppliedHash and computedHash; nothing written', async () => {
    // given an empty session and one event with a wrong supplied link
    const sid = await store.createSession()
    const supplied = '00'.repeat(32)
    const args = rewindArgs(sid, '1', '0190f5a2-0000-7000-8000-000000000001', supplied)
    // when
    const error = await superuser(async (c) =>
      c.query('select turnlog.import_events($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)', args).then(
        () => undefined,
        (e: unknown) => e as { code?: string; detail?: string },
      ),
    )
    // then
    expect(error?.code).toBe('TLC02')
    const detail = JSON.parse(error?.detail ?? 'null') as Record<string, unknown>
    expect(detail).toEqual({ sessionId: sid, seq: 1, suppliedHash: supplied, computedHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(detail['computedHash']).not.toBe(supplied)
    expect((await rowsOf(sid)).events).toBe(0)
  })
})
