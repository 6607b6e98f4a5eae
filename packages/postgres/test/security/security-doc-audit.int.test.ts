/**
 * An adversarial audit of docs/security.md, section by section: attacks, with the writer role or a
 * tenant's login and raw SQL, on the promises no other test of `test/security/` (or of schema-promises,
 * the audit package's tampering tests) pinned down, against the real server (and PGlite where the doc
 * says it applies):
 *
 * - Roles: the exact set of functions the writer and the reader may execute; no `CREATE` for the writer,
 *   and temporary objects named like turnlog's change nothing the functions read; a login's own defaults
 *   (`ALTER ROLE … SET role`, `session_authorization`) give it nothing; an upsert on another tenant's
 *   session id changes nothing.
 * - Tenant isolation: a raw `INSERT` of an event into another tenant's session answers, at every seq, as
 *   for a missing session (regression: the link trigger, which runs as the owner before the row policy
 *   is checked, read the other tenant's log first: `TLC01` below its version + 2 was the policy's
 *   `42501`, and `40001` told a transaction that the other tenant had appended since it began); the
 *   owner's members and `BYPASSRLS` roles see every tenant through the policies and the definer
 *   functions alike; no setting names a tenant; on PGlite (one superuser) a gap is still `TLC01`.
 * - Subscription checkpoints: any login may take another tenant's consumer lock (an advisory lock, whose
 *   key follows from the tenant and the name); a wake-up carries no payload.
 * - Redaction: the message's envelope (`meta`, `externalId`) stays; the kept hashes confirm a guess.
 * - Tampering: a tail cut with the version moved back verifies; only a head hash kept elsewhere shows it.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
import { contentHash, createMessage, newSessionId, sha256Hex, type Message, type SessionId } from '@turnlog/core'
import { dropSubscription, listSubscriptions, type PostgresStore } from '@turnlog/postgres'
import { openTestStore } from '@turnlog/testing'
import { sql } from 'kysely'
import pg from 'pg'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

let dbUrl: string
let admin: PostgresStore
let writerA: LoginRole, writerB: LoginRole, readerA: LoginRole, ownerMember: LoginRole, bypassWriter: LoginRole
let storeA: PostgresStore, storeB: PostgresStore
/** Tenant A's session, tenant B's (two messages), an untenanted one (two messages). */
let sessionA: SessionId, sessionB: SessionId, sessionNone: SessionId

useTestBed(async (bed) => {
  dbUrl = bed.db.connectionString
  admin = await bed.admin()
  writerA = await bed.role('dwa', { groups: ['turnlog_writer'], tenant: 'tenant-a' })
  writerB = await bed.role('dwb', { groups: ['turnlog_writer'], tenant: 'tenant-b' })
  readerA = await bed.role('dra', { groups: ['turnlog_reader'], tenant: 'tenant-a' })
  ownerMember = await bed.role('dom', { groups: ['turnlog_owner'] })
  bypassWriter = await bed.role('dbw', { groups: ['turnlog_writer'] })
  await runSql(dbUrl, `alter role "${bypassWriter.name}" bypassrls`)
  storeA = await bed.open(writerA.connectionString)
  storeB = await bed.open(writerB.connectionString)
  sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
  await storeA.append(sessionA, [user('a1')])
  sessionB = await storeB.createSession({ tenantId: 'tenant-b' })
  await storeB.append(sessionB, [user('secret of b'), user('more of b')])
  sessionNone = await admin.createSession()
  await admin.append(sessionNone, [user('n1'), user('n2')])
})

function user(content: string): Message {
  return createMessage({ role: 'user', content })
}

/** Runs `work` on a client of `url`, closed after. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** What a statement answers: 'ok' and its row count, or the SQLSTATE and the message with `ids` masked. */
async function answerOf(client: pg.Client, text: string, params: readonly unknown[], ids: readonly string[]): Promise<unknown> {
  try {
    const r = await client.query(text, params as unknown[])
    return { ok: r.rowCount }
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown }
    let message = String(e.message)
    for (const id of ids) message = message.split(id).join('<session>')
    return { code: e.code, message }
  }
}

/** What the superuser sees of a session: its version and the hashes of its events. */
async function footprint(sid: string): Promise<unknown> {
  return runSql(
    dbUrl,
    `select (select version from turnlog.sessions where session_id = $1)::int as version,
            (select string_agg(encode(hash, 'hex'), ',' order by seq) from turnlog.events where session_id = $1) as hashes`,
    [sid],
  )
}

const RAW_EVENT = `insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, $2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}')`

describe('Roles (security.md, "Roles": the table)', () => {
  it('the writer and the reader may execute exactly the documented functions (trigger functions aside)', async () => {
    // given the migrated schema
    // when listing, per group role, the functions of turnlog it may execute
    const [row] = await runSql<{ writer: string[]; reader: string[] }>(
      dbUrl,
      `select array(select p.proname::text from pg_proc p where p.pronamespace = 'turnlog'::regnamespace and p.prorettype <> 'trigger'::regtype
                      and has_function_privilege('turnlog_writer', p.oid, 'EXECUTE') order by 1) as writer,
              array(select p.proname::text from pg_proc p where p.pronamespace = 'turnlog'::regnamespace and p.prorettype <> 'trigger'::regtype
                      and has_function_privilege('turnlog_reader', p.oid, 'EXECUTE') order by 1) as reader`,
    )
    // then they are the doc's lists: the entry points, and functions that read no table or read with the caller's rights
    const everyone = [
      'bound_tenant',
      'chain_link',
      'is_redaction_placeholder',
      'is_structural_placeholder',
      'json_operable',
      'load_live',
      'load_session',
      'placeholder_digest',
      'placeholder_follows',
      'rebuild_read',
    ]
    const writerOnly = [
      'append_batches',
      'append_messages',
      'import_events',
      'lock_message_sessions',
      'rebuild_session',
      'rebuild_sessions',
      'redact_message',
      'subscription_create',
      'subscription_drop',
      'subscription_move',
      'subscription_rebase',
      'subscription_record_error',
      'subscription_renew_lease',
    ]
    expect(row).toEqual({ writer: [...everyone, ...writerOnly].sort(), reader: [...everyone].sort() })
  })

  it("a writer may not CREATE in the schema, and temporary tables named like turnlog's change nothing its functions read", async () => {
    await withClient(writerA.connectionString, async (client) => {
      // given tenant A's writer login
      // when it creates objects in the schema
      const creates = [
        await answerOf(client, 'create table turnlog.mine (x int)', [], []),
        await answerOf(client, 'create function turnlog.mine() returns int language sql as $$ select 1 $$', [], []),
        await answerOf(client, 'create view turnlog.mine as select 1', [], []),
      ]
      // and shadows the tables with temporary ones first on its search_path, then loads and appends
      await client.query('set search_path = pg_temp, pg_catalog')
      for (const t of ['sessions', 'events', 'live_messages', 'tenant_roles'])
        await client.query(`create temp table ${t} (session_id uuid, tenant_id text, role_name text)`)
      await client.query(`insert into pg_temp.sessions values ($1, 'tenant-a', null), ($2, 'tenant-a', null)`, [sessionB, sessionA])
      const loadB = await answerOf(client, 'select * from turnlog.load_session($1)', [sessionB], [sessionB])
      const loadA = await answerOf(client, 'select * from turnlog.load_session($1)', [sessionA], [])
      const tenant = (await client.query<{ t: string }>('select turnlog.bound_tenant(current_user) as t')).rows[0]?.t
      // then the creations are refused, and the functions read turnlog's tables only
      expect(creates.map((c) => (c as { code?: string }).code)).toEqual(['42501', '42501', '42501'])
      expect(loadB).toMatchObject({ code: 'TLS01' })
      expect(loadA).toEqual({ ok: 2 })
      expect(tenant).toBe('tenant-a')
    })
  })

  it('a login that makes another role or session authorization its own default (ALTER ROLE … SET) still acts for its tenant', async () => {
    // given tenant A's writer login, which may set its own defaults
    await runSql(writerA.connectionString, `alter role "${writerA.name}" set role = 'turnlog_owner'`)
    await runSql(writerA.connectionString, `alter role "${writerA.name}" set session_authorization = '${writerB.name}'`)
    try {
      // when it connects again
      const [row] = await runSql<Record<string, unknown>>(
        writerA.connectionString,
        `select session_user::text as login, current_user::text as acting, turnlog.bound_tenant(current_user) as tenant,
                (select count(*) from turnlog.sessions where session_id = $1)::int as "seesB"`,
        [sessionB],
      )
      // then the server refused both settings at login: it is itself, for tenant A
      expect(row).toEqual({ login: writerA.name, acting: writerA.name, tenant: 'tenant-a', seesB: 0 })
    } finally {
      await runSql(dbUrl, `alter role "${writerA.name}" reset all`)
    }
  })

  it("a writer's upsert on another tenant's session id (INSERT … ON CONFLICT DO UPDATE of version) is refused and changes nothing", async () => {
    // given tenant B's session
    const before = await footprint(sessionB)
    // when tenant A's writer upserts a row of its tenant under B's id, updating the version it may update
    const state = await sqlStateOf(
      writerA.connectionString,
      `insert into turnlog.sessions (session_id, tenant_id, version) values ($1, 'tenant-a', 0)
       on conflict (session_id) do update set version = 0, updated_at = now()`,
      [sessionB],
    )
    // then the conflicting row is not its to update (the policy), and B's session is as it was
    expect(state).toBe('42501')
    expect(await footprint(sessionB)).toEqual(before)
  })
})

describe('Tenant isolation (security.md, "Tenant isolation (RLS)")', () => {
  it("a raw INSERT of an event into another tenant's or an untenanted session answers, at every seq, exactly as into a missing one (the link trigger reads no foreign log)", async () => {
    // given B's session and the untenanted one, each at version 2, and a session id nobody has
    const missing = newSessionId()
    const before = [await footprint(sessionB), await footprint(sessionNone)]
    await withClient(writerA.connectionString, async (client) => {
      for (const seq of [1, 2, 3, 4, 99]) {
        // when tenant A's writer inserts an event at that seq into each
        const onMissing = await answerOf(client, RAW_EVENT, [missing, seq], [missing])
        const onB = await answerOf(client, RAW_EVENT, [sessionB, seq], [sessionB])
        const onNone = await answerOf(client, RAW_EVENT, [sessionNone, seq], [sessionNone])
        // then the three answers are one (a missing predecessor, or a version, would say the session exists)
        expect({ seq, onB, onNone }).toEqual({ seq, onB: onMissing, onNone: onMissing })
        expect(onMissing).toMatchObject({ code: '42501' })
      }
    })
    // and nothing changed
    expect([await footprint(sessionB), await footprint(sessionNone)]).toEqual(before)
  })

  it("a transaction older than another tenant's last append does not learn of that append (40001) by inserting into its session", async () => {
    const missing = newSessionId()
    await withClient(writerA.connectionString, async (client) => {
      // given tenant A's transaction that took its id before B appended
      await client.query('begin')
      await client.query('select pg_current_xact_id()')
      await storeB.append(sessionB, [user('b after a began')])
      const version = (await storeB.getSession(sessionB)).version
      // when it inserts the event after B's newest one, and the same into a missing session
      await client.query('savepoint probe')
      const onB = await answerOf(client, RAW_EVENT, [sessionB, version + 1], [sessionB])
      await client.query('rollback to savepoint probe')
      const onMissing = await answerOf(client, RAW_EVENT, [missing, version + 1], [missing])
      await client.query('rollback')
      // then both answer the row policy's refusal: no commit order of B's is told
      expect(onB).toEqual(onMissing)
      expect(onMissing).toMatchObject({ code: '42501' })
    })
  })

  it("the owner's members, superusers and BYPASSRLS roles see every tenant, through the row policies and the definer functions alike", async () => {
    const rowsOfB = (await storeB.load(sessionB)).messages.length + 1
    for (const login of [ownerMember, bypassWriter]) {
      // given an unmapped login that is a member of turnlog_owner, or a BYPASSRLS writer
      const seen = await withClient(login.connectionString, async (client) => {
        // when it reads B's session raw, loads it (invoker) and locks it through a definer function
        const raw = (
          await client.query('select count(*)::int as n from turnlog.sessions where session_id = any($1::uuid[])', [
            [sessionB, sessionNone],
          ])
        ).rows[0] as { n: number }
        const load = await answerOf(client, 'select * from turnlog.load_session($1)', [sessionB], [sessionB])
        await client.query('begin')
        const locked = await answerOf(client, 'select turnlog.lock_message_sessions($1, gen_random_uuid())', [sessionB], [sessionB])
        await client.query('rollback')
        return { raw: raw.n, load, locked }
      })
      // then both halves of the rule let it through
      expect({ login: login.name, ...seen }).toEqual({ login: login.name, raw: 2, load: { ok: rowsOfB }, locked: { ok: 1 } })
    }
  })

  it('no setting names a tenant: turnlog.tenant_id, app.tenant_id, turnlog.claim_check or turnlog.notify give nothing of tenant B', async () => {
    await withClient(writerA.connectionString, async (client) => {
      // given tenant A's writer login, which sets what a GUC-based design would read
      for (const [name, value] of [
        ['turnlog.tenant_id', 'tenant-b'],
        ['turnlog.tenant', 'tenant-b'],
        ['app.tenant_id', 'tenant-b'],
        ['turnlog.claim_check', 'off'],
        ['turnlog.notify', 'off'],
      ])
        await client.query('select set_config($1, $2, false)', [name, value])
      // when it reads and loads B's session
      const raw = await answerOf(client, 'select * from turnlog.events where session_id = $1', [sessionB], [sessionB])
      const load = await answerOf(client, 'select * from turnlog.load_session($1)', [sessionB], [sessionB])
      const tenant = (await client.query<{ t: string }>('select turnlog.bound_tenant(current_user) as t')).rows[0]?.t
      // then the login decides
      expect({ raw, load, tenant }).toEqual({
        raw: { ok: 0 },
        load: { code: 'TLS01', message: 'session <session> not found' },
        tenant: 'tenant-a',
      })
    })
  })

  it('on PGlite (one superuser, every session visible) an event past the next seq is still TLC01', async () => {
    // given an embedded store with a session at version 1
    const { store: embedded, close } = await openTestStore('pglite')
    try {
      const sid = await embedded.createSession()
      await embedded.append(sid, [user('one')])
      // when raw SQL inserts seq 3 into it, and seq 2 into a session that does not exist
      const states: string[] = []
      for (const [s, seq] of [
        [sid, 3],
        [newSessionId(), 2],
      ] as const) {
        try {
          await sql`insert into turnlog.events (session_id, seq, event_id, type, data)
                    values (${s}, ${seq}, gen_random_uuid(), 'messages_retracted', '{"ids":[]}')`.execute(embedded.db)
          states.push('ok')
        } catch (error) {
          states.push(String((error as { code?: unknown }).code))
        }
      }
      // then both name the missing predecessor
      expect(states).toEqual(['TLC01', 'TLC01'])
    } finally {
      await close()
    }
  })
})

describe('Subscription checkpoints (security.md, "Subscription checkpoints")', () => {
  it("any login may take another tenant's consumer lock (its key follows from tenant and name): that tenant's drop is refused while it holds it, nothing is read or written", async () => {
    // given B's checkpoint 'projector'
    const sub = storeB.subscribe({ name: 'projector', from: 'start' }, () => {})
    await sub.catchUp()
    await sub.stop()
    const rowsBefore = await runSql(dbUrl, `select name, tenant_id, tx_id::text, global_position::text from turnlog.subscriptions`)
    await withClient(writerA.connectionString, async (client) => {
      // when tenant A's login takes the advisory lock of ('tenant-b', 'projector')
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid
      await client.query(`select pg_advisory_lock(x'746c7362'::int, hashtext('tenant-b' || chr(31) || 'projector'))`)
      // then B's drop finds its consumer lock taken, and B's list names A's connection as the holder
      await expect(dropSubscription(storeB, 'projector')).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
      const listed = (await listSubscriptions(storeB)).find((s) => s.name === 'projector')
      expect({ active: listed?.active, holderPid: listed?.holderPid }).toEqual({ active: true, holderPid: pid })
      expect(await runSql(dbUrl, `select name, tenant_id, tx_id::text, global_position::text from turnlog.subscriptions`)).toEqual(
        rowsBefore,
      )
      // and once A lets go, B's drop goes through
      await client.query(`select pg_advisory_unlock(x'746c7362'::int, hashtext('tenant-b' || chr(31) || 'projector'))`)
    })
    expect(await dropSubscription(storeB, 'projector')).toBe(true)
  })

  it('a wake-up carries nothing: a tenant listening while another tenant writes gets an empty payload', async () => {
    await withClient(writerA.connectionString, async (client) => {
      // given tenant A's login listening, with a live lease of its own
      await client.query(`select turnlog.subscription_create('tenant-a', 'wake', '0'::xid8, 0)`)
      await client.query(`select turnlog.subscription_renew_lease('tenant-a', 'wake', 60)`)
      const notified: { channel: string; payload: string | undefined }[] = []
      client.on('notification', (n) => notified.push({ channel: n.channel, payload: n.payload }))
      await client.query('listen turnlog_events')
      // when tenant B appends
      await storeB.append(sessionB, [user('b writes while a listens')])
      for (let i = 0; i < 100 && notified.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
      // then A learns only that someone wrote
      expect(notified[0]).toEqual({ channel: 'turnlog_events', payload: '' })
      await client.query(`select turnlog.subscription_drop('tenant-a', 'wake')`)
    })
  })
})

describe('Redaction (security.md, "Redaction (GDPR erasure)")', () => {
  it("keeps the message's envelope: data.meta and the external id stay in the scrubbed event, in load and in events", async () => {
    // given a message with meta and an external id
    const sid = await storeA.createSession({ tenantId: 'tenant-a' })
    const m = createMessage(
      { role: 'user', content: 'my IBAN is DE89 3704' },
      { meta: { customerEmail: 'alice@example.com' }, externalId: 'msg-17', scope: 'chat:alice' },
    )
    await storeA.append(sid, [m])
    // when it is redacted
    await storeA.redact(sid, m.id)
    // then the payload is gone and the envelope stays (the chain covers data: it is not scrubbed)
    const [row] = await runSql<{ payload: unknown; meta: unknown; external: string }>(
      dbUrl,
      `select payload, data->'meta' as meta, data->>'externalId' as external from turnlog.events where session_id = $1 and seq = 1`,
      [sid],
    )
    expect(row).toEqual({
      payload: { role: 'user', content: '[redacted]' },
      meta: { customerEmail: 'alice@example.com' },
      external: 'msg-17',
    })
    const loaded = (await storeA.load(sid)).messages[0]
    expect({ content: (loaded?.payload as { content?: unknown }).content, meta: loaded?.meta }).toEqual({
      content: '[redacted]',
      meta: { customerEmail: 'alice@example.com' },
    })
  })

  it('the kept content hash and payload digest confirm a guessed content: a reader tests candidates offline', async () => {
    // given a short answer, redacted
    const sid = await storeA.createSession({ tenantId: 'tenant-a' })
    const answer = { role: 'user' as const, content: 'PIN 4821' }
    const m = createMessage(answer)
    await storeA.append(sid, [m])
    await storeA.redact(sid, m.id)
    // when tenant A's reader reads the scrubbed event and hashes every 4-digit candidate
    const [row] = await runSql<{ content_hash: string; digest: string }>(
      readerA.connectionString,
      `select encode(content_hash, 'hex') as content_hash, encode(payload_digest, 'hex') as digest
         from turnlog.events where session_id = $1 and seq = 1`,
      [sid],
    )
    const byHash: string[] = []
    const byDigest: string[] = []
    for (let n = 0; n < 10_000; n++) {
      const candidate = { role: 'user' as const, content: `PIN ${String(n).padStart(4, '0')}` }
      if (contentHash(candidate) === row?.content_hash) byHash.push(candidate.content)
      if (sha256Hex(JSON.stringify(candidate)) === row?.digest) byDigest.push(candidate.content)
    }
    // then both kept hashes name the content
    expect([byHash, byDigest]).toEqual([['PIN 4821'], ['PIN 4821']])
  })
})

describe('Tampering (security.md, "Tampering")', () => {
  it('a tail cut with the version moved back (the owner) verifies and audits clean: only the head hash recorded before shows it', async () => {
    // given a session of three messages whose head hash was recorded elsewhere
    const sid = await admin.createSession()
    await admin.append(sid, [user('q'), createMessage({ role: 'assistant', content: 'a' }), user('the last word')])
    const recorded = (await verifyChain(admin, sid)).headHash
    // when the owner deletes the last event, its projection row, and moves the version back
    await runSql(
      dbUrl,
      `with gone as (delete from turnlog.events where session_id = $1 and seq = 3 returning 1),
            unlive as (delete from turnlog.live_messages where session_id = $1 and event_seq = 3 returning 1)
       update turnlog.sessions set version = 2 where session_id = $1`,
      [sid],
    )
    const verification = await verifyChain(admin, sid)
    const report = await audit(admin, sid)
    // then the log verifies, the audit finds nothing, and the head differs from the recorded one
    expect({ ok: verification.ok, breaks: verification.breaks.length }).toEqual({ ok: true, breaks: 0 })
    expect(report.findings.filter((f) => f.severity === 'critical' || f.severity === 'error')).toEqual([])
    expect(verification.headHash).not.toBe(recorded)
  })
})
