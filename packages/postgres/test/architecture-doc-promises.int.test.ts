/**
 * docs/architecture.md (and scaling.md's statements about what the store does today): every checkable
 * promise and the test that holds it; this file tests the ones that had none (marked NEW). Real Postgres
 * (one database for the file, a second one for the rebuild batches), real PGlite where the promise is
 * about it. Test files under packages/postgres/test unless a package is named; the pure promises
 * (lint, dependency edges, the port, the registry, the tooling) are in packages/core/test/architecture-doc-promises.test.ts.
 *
 * | promise | test |
 * |---|---|
 * | dependency edges, umbrella/adapters/hermes rules, type-only imports | depcruise; core/architecture-doc-promises (edges = the diagram; fixed: bench → langgraph was missing) |
 * | core has no Node built-ins (lint); only the CLI reads argv/env or writes to stdout | core/architecture-doc-promises (fixed: the lint let bare built-ins, process, Buffer and process.stdout through) |
 * | hermes loaded on demand, PACKAGE_MISSING; umbrella has no native package | cli/load-hermes, cli/cli-hermes-optional, turnlog/umbrella.int |
 * | public API = src/index.ts; internals on ./internal; API reports of PUBLIC_PACKAGES | turnlog/api-report, turnlog/umbrella.int; core/architecture-doc-promises; NEW (what each entry and subpath holds) |
 * | guardrails: type-aware lint rules, jest tiers, prettier, .gitattributes | core/architecture-doc-promises |
 * | createMessage validates, copies, freezes, UUIDv7/v5; id never in the payload | core/create-message, core/ids, core/formats-doc-adversarial |
 * | one envelope (messageEnvelope), measured by splitByBatchBytes | formats-doc-adversarial, batch-limits |
 * | the registry's built-ins; every layer asks it | core/architecture-doc-promises; format-promises(.int) |
 * | the port's calls and three optional capabilities; PostgresStore has them; audit needs only the port; importTranscript all or nothing | core/architecture-doc-promises (type); NEW (port-only view); audit/import-transcript, audit/import-limits |
 * | CLI reaches store.db only in migrate | core/architecture-doc-promises |
 * | contract suite on Postgres and PGlite | contract.postgres.int, contract.pglite.int |
 * | bound store: no transaction, nothing cached, no retries, no group commit, no named statements | with-transaction.int, message-id-races, formats-doc-adversarial; NEW (named statements) |
 * | append: one statement; classification without locks; version, then conflict; claims; gapless seqs, links | NEW (one statement); integrating-promises, version-first.prop, message-id-races, concurrent-writers, schema-promises |
 * | group commit: shared statement, no timer, bounds, per-session order, left-out batches alone with evidence, rolled back → alone, lost connection → DB_TRANSIENT, off / PGlite / transaction | group-commit(.int), group-commit-session-order, operations-doc-promises, faults/commit-ack, formats-doc-adversarial; NEW (a lost claim runs the group alone; PGlite) |
 * | triggers: link and commit order, projection per statement, notify only under a lease | schema-promises, projection-differential.prop, subscription-promises |
 * | flush cache: learnt from appends and loads, no statement, behind → forget and rewrite in order, condition, concurrent flushes, content-less refusal | flush-no-statement, integrating-promises, flush-behind-order, append-without-content |
 * | "a flush of a 2,000-message list costs a few microseconds" | not tested (a figure); measured ≈ 25 µs here, doc corrected |
 * | load: one statement; appends_only path; directConnection prepared, jit off; load_session otherwise; position order; stored hash kept | NEW (one statement, stored hash); schema-promises, load.int |
 * | load({ at }), state, transcript: pages and the fold | load.int, close-events-pages |
 * | rebuild: ≤ 200 sessions or ~5,000 events, two in flight, lock, check before commit, drift, verify read-only | operations-doc-promises, projection-repair, guarantees-doc-promises; NEW (events bound, two in flight, lock, rows kept; doc corrected: only a log of plain appends keeps its rows) |
 * | projection spec pure, payload-free, folded by foldSession; SQL pinned by the differential properties | core/project-structure, projection-differential(-pglite).prop, projection(.prop), import-projection (audit) |
 * | each rule written once: chain vectors, custom SQLSTATEs, error codes, schema, imported head | chain-hash, chain-link.int, custom-sqlstates, error-codes-doc, cli-error, schema-catalog, schema-files |
 * | payloads as json: exact text; `payload->>'role'` works; metadata jsonb-safe | NEW (doc corrected: a lone surrogate anywhere fails the operator too); safe-text-fields |
 * | forks copy the inherited messages; a fork's log folds, verifies and exports on its own | NEW |
 * | order is seq, createdAt is data | core/fold-session; NEW (store) |
 * | scaling: appends to different sessions do not contend; the common append is one round trip | NEW; integrating-promises (one session serializes) |
 * | scaling: events and message_ids insert-only but for redaction | NEW |
 * | scaling: keys include session_id; global tables listed | catalog.int, schema-catalog |
 *
 * Not tested: the bench's figures, plan caching, Citus and partitioning (scaling.md, on paper).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import * as auditPublic from '@turnlog/audit'
import { audit, exportSessions, importEvents, importTranscript, verifyChain } from '@turnlog/audit'
import * as auditInternal from '@turnlog/audit/internal'
import * as core from '@turnlog/core'
import { contentHash, createMessage, toWire, toolPairing, type Message, type SessionId, type SessionStore } from '@turnlog/core'
import * as coreInternal from '@turnlog/core/internal'
import type { ImportedSessionHead } from '@turnlog/core/internal'
import * as postgres from '@turnlog/postgres'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import * as postgresInternal from '@turnlog/postgres/internal'
import * as testing from '@turnlog/testing'
import { createTestDatabase, openTestStore, useTestStore, type OpenedTestStore, type TestDatabase } from '@turnlog/testing'
import { sql, type Transaction } from 'kysely'
import * as umbrella from 'turnlog'
import { logStatements, type LoggedStatement } from './support/statement-log.js'

const user = (content: string, createdAt?: string): Message => createMessage({ role: 'user', content }, createdAt ? { createdAt } : {})
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const ids = (messages: readonly Message[]): string[] => messages.map((m) => m.id)

/** True when `work` is still pending after `ms`. */
async function pendingAfter(ms: number, work: Promise<unknown>): Promise<boolean> {
  const waiting = Symbol('waiting')
  const first = await Promise.race([
    work.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((resolve) => setTimeout(() => resolve(waiting), ms)),
  ])
  return first === waiting
}

/** A promise and the function that resolves it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const wait = new Promise<void>((resolve) => (open = resolve))
  return { wait, open }
}

let db: TestDatabase
let store: PostgresStore
useTestStore((t) => ({ db, store } = t))

/** An in-memory PGlite store: the embedded promises and an empty import target. */
let embedded: OpenedTestStore
beforeAll(async () => {
  embedded = await openTestStore('pglite')
})
afterAll(async () => {
  await embedded?.close()
})

/** Runs `fn` as the test server's superuser (the store's own connection) with triggers off: what a restore or an operator does. */
async function asSuperuser(fn: (trx: Transaction<unknown>) => Promise<unknown>): Promise<void> {
  await store.db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx)
    await fn(trx as Transaction<unknown>)
  })
}

describe('Write path and Read path: one statement a call (architecture.md; scaling.md "The common append is one round trip")', () => {
  it.each(['unnamed statements', 'directConnection'] as const)(
    'append, a flush with a new message and load each send exactly one statement, nothing else (no BEGIN, no COMMIT) (%s)',
    async (kind) => {
      // given a store of each kind (one connection: every statement is on it)
      const own = await openStore({
        connectionString: db.connectionString,
        migrate: false,
        directConnection: kind === 'directConnection',
        pool: { max: 1 },
      })
      const log = logStatements(db.name)
      try {
        const sid = await own.createSession()
        const sent = async (call: () => Promise<unknown>): Promise<string[]> => {
          const from = log.statements.length
          await call()
          return log.statements.slice(from).map((s) => s.text)
        }
        const [q, a] = [user('q'), assistant('a')]

        // when
        const append = await sent(() => own.append(sid, [q]))
        const flush = await sent(() => own.flush(sid, [q, a]))
        const load = await sent(() => own.load(sid))

        // then one statement each: the append function, the load function (or the prepared statement
        // reading the same rows with directConnection)
        expect(append).toHaveLength(1)
        expect(append[0]).toContain('turnlog.append_messages(')
        expect(flush).toHaveLength(1)
        expect(flush[0]).toContain('turnlog.append_messages(')
        expect(load).toHaveLength(1)
        if (kind === 'directConnection') {
          expect(load[0]).not.toContain('load_session')
          expect(load[0]).toContain('turnlog.live_messages')
        } else expect(load[0]).toContain('turnlog.load_session(')
      } finally {
        log.restore()
        await own.close()
      }
    },
  )

  it("a store bound to a caller's transaction prepares no named statement, even on a directConnection store (it runs load_session)", async () => {
    // given a directConnection store with one connection on which nothing is prepared yet
    const own = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    const log = logStatements(db.name)
    try {
      const sid = await own.createSession()
      const prepared = await sql<{ n: string }>`select count(*)::text as n from pg_prepared_statements`.execute(own.db)
      expect(prepared.rows[0]?.n).toBe('0')

      // when every hot call runs bound to a transaction on that connection
      const inside = await own.db.transaction().execute(async (trx) => {
        const bound = own.withTransaction(trx)
        const from = log.statements.length
        await bound.append(sid, [user('bound append')])
        await bound.flush(sid, [user('bound flush')])
        const loaded = await bound.load(sid)
        const texts = log.statements.slice(from).map((s) => s.text)
        const { rows } = await sql<{ n: string }>`select count(*)::text as n from pg_prepared_statements`.execute(trx)
        return { texts, loaded: loaded.messages.length, prepared: rows[0]?.n }
      })

      // then the load went through load_session, and nothing was prepared
      expect(inside.loaded).toBe(2)
      expect(inside.texts.some((t) => t.includes('turnlog.load_session('))).toBe(true)
      expect(inside.prepared).toBe('0')
      // while the store itself, outside a transaction, prepares its statements (the control)
      await own.load(sid)
      const after = await sql<{ n: string }>`select count(*)::text as n from pg_prepared_statements`.execute(own.db)
      expect(Number(after.rows[0]?.n)).toBeGreaterThan(0)
    } finally {
      log.restore()
      await own.close()
    }
  })
})

describe('scaling.md, "One Postgres": appends to different sessions do not contend; appends to one session serialize', () => {
  it("an append to another session completes while a transaction holds one session's lock; an append to that session waits for it", async () => {
    // given a writer holding session A's row lock (an append inside a transaction left open)
    const [a, b] = [await store.createSession(), await store.createSession()]
    await store.append(a, [user('a1')])
    const other = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
    const control = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
    const release = gate()
    const taken = gate()
    const writer = store.db.transaction().execute(async (trx) => {
      await store.withTransaction(trx).append(a, [user('a2, in flight')])
      taken.open()
      await release.wait
    })
    await taken.wait
    try {
      // when other processes append to B, and to A
      const toA = control.append(a, [user('a3')])
      const toB = await Promise.race([
        other.append(b, [user('b1'), assistant('b2')]),
        new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 5_000)),
      ])

      // then B's append is done at once; A's waits for the lock
      expect(toB).toEqual({ version: 2, appended: expect.any(Array), duplicates: [] })
      expect(await pendingAfter(300, toA)).toBe(true)
      release.open()
      await writer
      expect(await toA).toMatchObject({ version: 3 })
    } finally {
      release.open()
      await writer.catch(() => undefined)
      await other.close()
      await control.close()
    }
  })
})

describe('architecture.md, "Group commit": a group refused by a lost message-id claim', () => {
  it('rolled back (23505 on message_ids_pkey): every batch runs alone; the one holding the id gets MESSAGE_CONFLICT with evidence, the other is written', async () => {
    // given: another writer claimed id x in session c, uncommitted; two appends of this store in one
    // tick, to s1 (x and a new message) and to s2, go out as one append_batches statement
    const [s1, s2, c] = [await store.createSession(), await store.createSession(), await store.createSession()]
    const holder = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
    const x = user('x: claimed by another writer first')
    const [y1, y2] = [user('y1'), user('y2')]
    const release = gate()
    const claimed = gate()
    const writer = holder.db.transaction().execute(async (trx) => {
      await holder.withTransaction(trx).append(c, [x])
      claimed.open()
      await release.wait
    })
    await claimed.wait
    const log = logStatements(db.name)
    try {
      // when the group's insert waits on that claim, and the other writer then commits
      const outcomes = Promise.all([
        store.append(s1, [x, y1]).then(
          (r) => r,
          (error: unknown) => error,
        ),
        store.append(s2, [y2]),
      ])
      expect(await pendingAfter(300, outcomes)).toBe(true)
      release.open()
      await writer
      const [first, second] = await outcomes

      // then one group statement, then each batch alone (s1 refused, s2 written on its own)
      const sent = log.statements.filter((s) => /turnlog\.append_(messages|batches)\(/.test(s.text))
      expect(sent.map((s) => (s.text.includes('append_batches') ? 'group' : String(s.values[0])))).toEqual(['group', s1, s2])
      expect(first).toMatchObject({ code: 'MESSAGE_CONFLICT' })
      expect(await store.conflicts(s1)).toEqual([
        expect.objectContaining({ messageId: x.id, reason: 'foreign_session', otherSessionId: c }),
      ])
      expect(second).toEqual({ version: 1, appended: [y2.id], duplicates: [] })
      expect((await store.getSession(s1)).version).toBe(0)
      expect(ids((await store.load(s2)).messages)).toEqual([y2.id])
    } finally {
      log.restore()
      release.open()
      await writer.catch(() => undefined)
      await holder.close()
    }
  })
})

describe('architecture.md, "Group commit": "not used on PGlite"', () => {
  it('concurrent appends to three embedded sessions commit in three transactions; on Postgres the same tick shares one', async () => {
    const transactions = async (s: PostgresStore): Promise<number> => {
      const sessions = [await s.createSession(), await s.createSession(), await s.createSession()]
      await Promise.all(sessions.map((sid, i) => s.append(sid, [user(`concurrent ${i}`)])))
      const { rows } = await sql<{ n: string }>`
        select count(distinct tx_id)::text as n from turnlog.events where session_id in (${sql.join(sessions)})`.execute(s.db)
      return Number(rows[0]?.n)
    }
    expect(await transactions(embedded.store)).toBe(3)
    expect(await transactions(store)).toBe(1)
  })
})

describe('architecture.md, "Read path": load restores messages "whose content hash is the stored one (no re-hashing)"', () => {
  it("a loaded message's content hash is the stored content_hash, even one that is not its payload's", async () => {
    // given a message whose stored content hash was changed behind the store's back
    const sid = await store.createSession()
    const m = user('hashed once, on the way in')
    await store.append(sid, [m])
    const forged = contentHash({ role: 'user', content: 'some other content' })
    await asSuperuser((trx) =>
      sql`update turnlog.events set content_hash = decode(${forged}, 'hex') where session_id = ${sid}`.execute(trx),
    )

    // when a store loads it
    const [loaded] = (await store.load(sid)).messages

    // then the message carries the stored hash (it was not computed again from the payload)
    expect(loaded?.payload).toEqual(m.payload)
    expect(contentHash(loaded as Message)).toBe(forged)
    expect(contentHash(m)).not.toBe(forged)
  })
})

describe('architecture.md, "Order is the log\'s seq. createdAt is data."', () => {
  it('a tool result created (by its clock) before its call is loaded, listed and sent after it', async () => {
    // given a call stamped 2030 and its result stamped 2001, appended in that order
    const sid = await store.createSession()
    const call = createMessage(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_clock', type: 'function', function: { name: 'now', arguments: '{}' } }],
      },
      { createdAt: '2030-01-01T00:00:00.000Z' },
    )
    const result = createMessage({ role: 'tool', tool_call_id: 'call_clock', content: 'done' }, { createdAt: '2001-01-01T00:00:00.000Z' })
    await store.append(sid, [user('go', '2015-01-01T00:00:00.000Z'), call])
    await store.append(sid, [result])

    // when
    const { messages } = await store.load(sid)
    const transcript = await store.transcript(sid)

    // then the order is the log's: call before result, createdAt kept as given
    expect(ids(messages).slice(1)).toEqual([call.id, result.id])
    expect(messages.map((m) => m.createdAt)).toEqual(['2015-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', '2001-01-01T00:00:00.000Z'])
    expect(transcript.entries.map((e) => e.message.id).slice(1)).toEqual([call.id, result.id])
    expect(toolPairing(messages)).toMatchObject({ unanswered: [], orphans: [] })
    expect(toWire(messages).map((w) => (w as { role: string }).role)).toEqual(['user', 'assistant', 'tool'])
  })
})

describe('architecture.md, "Payloads in json, not jsonb"', () => {
  it("stores the exact text (NUL, lone surrogates, key order); payload->>'role' answers only where neither is anywhere in the payload; data is jsonb-safe", async () => {
    // given payloads with NUL, with a lone surrogate (in a field other than role), and with neither
    const sid = await store.createSession()
    const plain = createMessage({ role: 'user', content: 'plain' })
    const nul = createMessage({ role: 'user', content: 'a\u0000b' })
    const lone = createMessage({ role: 'user', content: 'x\ud800y' })
    const keyOrder = createMessage({ z: 1, a: { y: 2, b: [3] } }, { format: 'json' })
    await store.append(sid, [plain, nul, lone, keyOrder])

    // when SQL reads them
    const { rows } = await sql<{ seq: string; text: string }>`
      select seq::text, payload::text as text from turnlog.events where session_id = ${sid} order by seq`.execute(store.db)
    const role = async (seq: number): Promise<string> =>
      sql<{ role: string }>`select payload->>'role' as role from turnlog.events where session_id = ${sid} and seq = ${seq}`
        .execute(store.db)
        .then(
          (r) => String(r.rows[0]?.role),
          (error: unknown) => `error ${(error as { code?: string }).code}`,
        )

    // then the stored texts are JSON.stringify's, key order kept
    expect(rows.map((r) => r.text)).toEqual([plain, nul, lone, keyOrder].map((m) => JSON.stringify(m.payload)))
    expect(JSON.parse(rows[3]?.text ?? '')).toEqual(keyOrder.payload)
    expect(Object.keys(JSON.parse(rows[3]?.text ?? '') as object)).toEqual(['z', 'a'])
    // the operator answers for the plain payload; NUL (22P05) and a lone surrogate (22P02) anywhere in the
    // document make it fail, even though role itself holds neither
    expect([await role(1), await role(2), await role(3)]).toEqual(['user', 'error 22P05', 'error 22P02'])
    // and every event's data of the whole store reads as jsonb
    const data = await sql<{ n: string }>`select count(data::jsonb)::text as n from turnlog.events`.execute(store.db)
    const events = await sql<{ n: string }>`select count(*)::text as n from turnlog.events`.execute(store.db)
    expect(data.rows[0]?.n).toBe(events.rows[0]?.n)
  })
})

describe('scaling.md, "Vacuum and freezing": events and message_ids are insert-only in normal operation', () => {
  /** Every row of the two tables with its physical place and the transaction that wrote this version of it. */
  const rowVersions = async (): Promise<Map<string, string>> => {
    const { rows } = await sql<{ k: string; v: string }>`
      select 'e ' || session_id || ' ' || seq as k, ctid::text || ' ' || xmin::text as v from turnlog.events
      union all
      select 'm ' || message_id || ' ' || tenant_scope, ctid::text || ' ' || xmin::text || ' ' || session_id from turnlog.message_ids`.execute(
      store.db,
    )
    return new Map(rows.map((r) => [r.k, r.v]))
  }

  it('every store call but redact only adds rows; a redaction rewrites in place the events holding that message, in its session and its fork', async () => {
    // given every row stored so far
    const before = await rowVersions()

    // when every write and read of the port runs
    const sid = await store.createSession()
    const [q, a, streaming, gone, s] = [
      user('q'),
      assistant('a'),
      createMessage({ role: 'assistant', content: 'str' }, { status: 'partial' }),
      user('gone'),
      user('summary'),
    ]
    await store.append(sid, [q, a])
    await store.flush(sid, [q, a, streaming])
    await store.revise(sid, streaming.id, { role: 'assistant', content: 'stre' }, { status: 'partial' })
    await store.finalize(sid, streaming.id, { role: 'assistant', content: 'stream' })
    await store.append(sid, [gone])
    await store.rewind(sid, { after: streaming.id })
    await store.compact(sid, { covered: [q.id], summary: s })
    const live = (await store.load(sid)).messages
    await store.sync(sid, [...live, user('synced')])
    const fork = await store.fork(sid, { at: a.id })
    await store.append(fork, [user('in the fork')])
    await store.rebuild({ sessionId: sid })
    await store.rebuild({ verify: true, sessionId: fork })
    await store.state(sid)
    await store.transcript(sid)
    const middle = await rowVersions()

    // then no row there before changed or went, and every call added rows
    for (const [k, v] of before) expect([k, middle.get(k)]).toEqual([k, v])
    expect(middle.size).toBeGreaterThan(before.size)

    // when a's content is redacted (a is in the parent and, copied, in the fork)
    const redacted = await store.redact(sid, a.id)
    const after = await rowVersions()

    // then exactly the events holding a's content changed, in place (same keys), in both sessions
    const changed = [...middle].filter(([k, v]) => after.get(k) !== v).map(([k]) => k)
    const holding = await sql<{ k: string }>`
      select 'e ' || session_id || ' ' || seq as k from turnlog.events
       where message_id = ${a.id} and type <> 'message_redacted'`.execute(store.db)
    expect(changed.sort()).toEqual(holding.rows.map((r) => r.k).sort())
    expect(new Set(changed.map((k) => k.split(' ')[1]))).toEqual(new Set([sid, fork]))
    expect(redacted.sessions.map((x) => x.sessionId).sort()).toEqual([sid, fork].sort())
  })
})

describe('architecture.md, "Rebuild": batches, two in flight, locked, rows already right kept', () => {
  // a database of its own: a rebuild takes every session of its database
  let rdb: TestDatabase
  let rs: PostgresStore
  beforeAll(async () => {
    rdb = await createTestDatabase()
    rs = await openStore({ connectionString: rdb.connectionString })
  })
  afterAll(async () => {
    await rs?.close()
    await rdb?.drop()
  })

  it('a batch stops at ~5,000 events, two batches run at once, a batch locks its sessions until it commits; a plain log keeps its right rows, any other log is replayed', async () => {
    // given (in id order) two sessions of 3,000 events, a rewound session and a plain one
    const big = async (tag: string): Promise<SessionId> => {
      const sid = await rs.createSession()
      await rs.append(
        sid,
        Array.from({ length: 3000 }, (_, i) => user(`${tag} ${i}`)),
      )
      return sid
    }
    const s1 = await big('s1')
    const s2 = await big('s2')
    const rewound = await rs.createSession()
    const kept = [user('r1'), assistant('r2')]
    await rs.append(rewound, [...kept, user('r3, rewound')])
    await rs.rewind(rewound, { after: kept[1]?.id as string })
    const plain = await rs.createSession()
    await rs.append(plain, [user('p1'), assistant('p2')])
    const rowVersions = async (sid: SessionId): Promise<string[]> =>
      (
        await sql<{
          v: string
        }>`select ctid::text || ' ' || xmin::text as v from turnlog.live_messages where session_id = ${sid} order by position`.execute(
          rs.db,
        )
      ).rows.map((r) => r.v)
    const plainBefore = await rowVersions(plain)
    const rewoundBefore = await rowVersions(rewound)

    // when a rebuild runs while the first batch's recompute answers late, and another store appends to
    // the plain session while its batch holds it
    const log = logStatements(rdb.name)
    const other = await openStore({ connectionString: rdb.connectionString, migrate: false, groupCommit: false })
    let lateAppend: Promise<number> | undefined
    log.hold = (st) => (st.text.includes('turnlog.rebuild_sessions(') ? 400 : 0)
    try {
      const rebuilding = rs.rebuild()
      // the append is sent once the second batch has locked its sessions (its read is sent)
      for (let i = 0; i < 200 && log.statements.filter((st) => st.text.includes('turnlog.rebuild_read(')).length < 2; i++)
        await new Promise((resolve) => setTimeout(resolve, 10))
      const appendSent = performance.now()
      lateAppend = other.append(plain, [user('p3, waits for the rebuild')]).then(() => performance.now())
      const result = await rebuilding
      const appendedAt = await lateAppend

      // then two batches: the two big sessions (the second starts before 5,000 events), then the other two
      const recomputes = log.statements.filter((st) => st.text.includes('turnlog.rebuild_sessions('))
      const batchOf = (st: LoggedStatement): string[] => JSON.parse(String(st.values[0])) as string[]
      const [first, second] = [recomputes.find((st) => batchOf(st)[0] === s1), recomputes.find((st) => batchOf(st)[0] === rewound)]
      expect(recomputes.map(batchOf).sort()).toEqual([
        [s1, s2],
        [rewound, plain],
      ])
      expect(result).toMatchObject({ sessions: 4, drift: [] })
      // each batch's recompute was sent while the other one's answer was held: two in flight
      expect(second?.start).toBeLessThan(first?.end as number)
      expect(first?.start).toBeLessThan(second?.end as number)
      // the append waited for the second batch's commit (its lock), which came after its recompute answered
      expect(appendSent).toBeLessThan(second?.end as number)
      expect(appendedAt).toBeGreaterThan(second?.end as number)
      // a log of plain appends keeps the rows that were right (no write); any other log's rows are replayed
      expect((await rowVersions(plain)).slice(0, 2)).toEqual(plainBefore)
      expect(await rowVersions(rewound)).not.toEqual(rewoundBefore)
      expect(ids((await rs.load(rewound)).messages)).toEqual(ids(kept))
    } finally {
      log.restore()
      await lateAppend?.catch(() => undefined)
      await other.close()
    }
  })
})

/** The port's members (architecture.md, "The port"): its calls and its three optional capabilities. */
const PORT = new Set([
  'createSession',
  'getSession',
  'append',
  'flush',
  'sync',
  'load',
  'events',
  'sessions',
  'rewind',
  'compact',
  'revise',
  'finalize',
  'fork',
  'transcript',
  'state',
  'rebuild',
  'redact',
  'conflicts',
  'close',
  'maxBatchBytes',
  'atomically',
  'importSessions',
])

/** `target` seen through the port only: any other property read is recorded in `reached` and answers undefined. */
function portOnly(target: PostgresStore, reached: Set<string | symbol>): SessionStore {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop !== 'string' || !PORT.has(prop)) {
        reached.add(prop)
        return undefined
      }
      if (prop === 'atomically')
        return <T>(work: (s: SessionStore) => Promise<T>): Promise<T> =>
          t.atomically((inner) => work(portOnly(inner as PostgresStore, reached)))
      const value: unknown = Reflect.get(t, prop, t)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value
    },
  }) as unknown as SessionStore
}

describe('architecture.md, "The port": "PostgresStore has all three"; "@turnlog/audit needs nothing but the port"', () => {
  it('the capabilities are there; importTranscript, audit, verifyChain, exportSessions and importEvents run on port-only views and read nothing else', async () => {
    // the three optional capabilities
    expect([typeof store.maxBatchBytes, typeof store.atomically, typeof store.importSessions]).toEqual(['number', 'function', 'function'])
    expect([typeof embedded.store.maxBatchBytes, typeof embedded.store.atomically, typeof embedded.store.importSessions]).toEqual([
      'number',
      'function',
      'function',
    ])

    // given port-only views of the server store and of an empty embedded one
    const reached = new Set<string | symbol>()
    const source = portOnly(store, reached)
    const target = portOnly(embedded.store, reached)
    const lines = [
      JSON.stringify({ role: 'user', content: 'what time is it?' }),
      JSON.stringify({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_t', type: 'function', function: { name: 'now', arguments: '{}' } }],
      }),
      JSON.stringify({ role: 'tool', tool_call_id: 'call_t', content: 'noon' }),
      JSON.stringify({ role: 'assistant', content: 'It is noon.' }),
    ]

    // when the audit package's entry points run on them
    const { sessionId } = await importTranscript(source, lines)
    const report = await audit(source, sessionId)
    const chain = await verifyChain(source, sessionId)
    const exported: string[] = []
    for await (const line of exportSessions(source, { sessionIds: [sessionId] })) exported.push(line)
    const imported = await importEvents(target, exported)

    // then they worked through the port alone: nothing else of either store was read
    expect([...reached]).toEqual([])
    expect(report.findings.filter((f) => f.severity === 'error' || f.severity === 'critical')).toEqual([])
    expect(chain.ok).toBe(true)
    expect(imported.sessions).toBe(1)
    expect(ids((await embedded.store.load(sessionId)).messages)).toEqual(ids((await store.load(sessionId)).messages))
  })
})

describe('architecture.md, the packages: what each entry point and ./internal subpath holds', () => {
  it("the table's names are exported by their package; the internal building blocks only by its ./internal subpath, never by a public entry", () => {
    const fns = (module: object, names: readonly string[]): Record<string, string> =>
      Object.fromEntries(names.map((n) => [n, typeof (module as Record<string, unknown>)[n]]))
    const allFunctions = (names: readonly string[]): Record<string, string> => Object.fromEntries(names.map((n) => [n, 'function']))
    const coreNames = [
      'createMessage',
      'newMessageId',
      'messageIdFromExternal',
      'registerMessageFormat',
      'messageFormat',
      'canonicalJson',
      'contentHash',
      'chainHash',
      'projectStructure',
      'foldSession',
      'transcriptOf',
      'toolPairing',
      'toWire',
      'TurnlogError',
      'splitByBatchBytes',
    ]
    const postgresNames = ['openStore', 'PostgresStore', 'migrateToLatest', 'withRetry', 'Subscription']
    const auditNames = ['verifyChain', 'audit', 'exportSessions', 'importEvents', 'importTranscript']
    const testingNames = [
      'createTestDatabase',
      'useTestStore',
      'useTwoTestStores',
      'describeStoreContract',
      'messageArb',
      'SessionModel',
      'startTcpProxy',
    ]
    expect(fns(core, coreNames)).toEqual(allFunctions(coreNames))
    expect(Array.isArray(core.EVENT_TYPES) && typeof core.ERROR_CODES === 'object').toBe(true)
    expect(fns(postgres, postgresNames)).toEqual(allFunctions(postgresNames))
    expect(fns(auditPublic, auditNames)).toEqual(allFunctions(auditNames))
    expect(fns(testing, testingNames)).toEqual({ ...allFunctions(testingNames), messageArb: 'object' }) // a fast-check arbitrary
    // the umbrella: every public name of the three, the same values
    const publicNames: [string, object][] = [
      ...coreNames.map((n): [string, object] => [n, core]),
      ...postgresNames.map((n): [string, object] => [n, postgres]),
      ...auditNames.map((n): [string, object] => [n, auditPublic]),
    ]
    for (const [name, module] of publicNames)
      expect([name, (umbrella as Record<string, unknown>)[name]]).toEqual([name, (module as Record<string, unknown>)[name]])

    // the internal subpaths (architecture.md, "The public API")
    const coreInternalNames = [
      'guardInput',
      'parseInput',
      'checkOptions',
      'StructureBuilder',
      'applyEvent',
      'withApplyTo',
      'messageEnvelope',
    ]
    const postgresInternalNames = ['CUSTOM_SQLSTATES', 'mapDatabaseError', 'GroupCommit', 'KnownMessages', 'PGliteDialect', 'checkSafeText']
    const auditInternalNames = ['toJsonLine', 'exportedChainHash', 'numberedLines']
    const head: Pick<ImportedSessionHead, 'id'> | undefined = undefined // a type of core/internal (compile-time)
    expect(head).toBeUndefined()
    for (const [module, names] of [
      [coreInternal, coreInternalNames],
      [postgresInternal, postgresInternalNames],
      [auditInternal, auditInternalNames],
    ] as const)
      for (const n of names) expect([n, (module as Record<string, unknown>)[n] !== undefined]).toEqual([n, true])
    for (const n of [...coreInternalNames, ...postgresInternalNames, ...auditInternalNames])
      for (const [label, module] of [
        ['@turnlog/core', core],
        ['@turnlog/postgres', postgres],
        ['@turnlog/audit', auditPublic],
        ['turnlog', umbrella],
      ] as const)
        expect([label, n, n in module]).toEqual([label, n, false])
  })
})

// last: it deletes a parent session's rows behind the store's back
describe('architecture.md, "Forks copy the inherited messages (same ids, same content, one row each)": a fork\'s log stands on its own', () => {
  it("the fork's log holds each inherited message once, same id and hash; it exports and imports alone, and loads, folds, verifies and takes writes with the parent's rows gone", async () => {
    // given a parent with a tool call pair and a later message, forked after the pair
    const parent = await store.createSession()
    const call = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_f', type: 'function', function: { name: 'f', arguments: '{}' } }],
    })
    const answer = createMessage({ role: 'tool', tool_call_id: 'call_f', content: 'r' })
    const inherited = [user('the question'), call, answer]
    await store.append(parent, [...inherited, assistant('after the fork point')])
    const fork = await store.fork(parent, { at: answer.id })
    const events = async (sid: string): Promise<core.StoredEvent[]> => {
      const out: core.StoredEvent[] = []
      for await (const e of store.events(sid)) out.push(e)
      return out
    }

    // then the fork's log holds a copy of each inherited message, once, with the parent's id and content hash
    const parentEvents = await events(parent)
    const copies = (await events(fork)).filter((e) => e.messageId !== null)
    expect(copies.map((e) => e.messageId)).toEqual(ids(inherited))
    expect(copies.map((e) => e.contentHash)).toEqual(parentEvents.slice(0, 3).map((e) => e.contentHash))
    expect(copies.map((e) => e.payload)).toEqual(inherited.map((m) => m.payload))

    // when the fork alone is exported and imported into an empty embedded store
    const exported: string[] = []
    for await (const line of exportSessions(store, { sessionIds: [fork] })) exported.push(line)
    await importEvents(embedded.store, exported)
    // then it is whole there, without its parent
    expect(ids((await embedded.store.load(fork)).messages)).toEqual(ids(inherited))
    expect((await verifyChain(embedded.store, fork)).ok).toBe(true)
    await expect(embedded.store.getSession(parent)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })

    // when the parent's events and live rows are gone (a shard the fork no longer reads)
    const before = { load: await store.load(fork), state: await store.state(fork) }
    await asSuperuser(async (trx) => {
      await sql`delete from turnlog.live_messages where session_id = ${parent}`.execute(trx)
      await sql`delete from turnlog.events where session_id = ${parent}`.execute(trx)
    })
    // then the fork loads, folds and verifies as before, and takes an append, a rewind and a rebuild
    expect(await store.load(fork)).toEqual(before.load)
    expect(await store.state(fork)).toEqual(before.state)
    expect((await verifyChain(store, fork)).ok).toBe(true)
    const next = user('a new turn in the fork')
    await store.append(fork, [next])
    await store.rewind(fork, { after: answer.id })
    expect((await store.rebuild({ sessionId: fork })).drift).toEqual([])
    expect(ids((await store.load(fork)).messages)).toEqual(ids(inherited))
  })
})
