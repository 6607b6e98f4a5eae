/**
 * Redaction racing the operations that copy a message into another session (issue 13, item 4:
 * `redact` reported success while a fork created at the same moment still held the content). Real
 * Postgres, every actor on its own store (its own pool and connections); after both commit, the
 * database is searched as the superuser for the content.
 */
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { runSql } from './support/security-fixtures.js'
import { useTestBed, type TestBed } from '../support/use-test-bed.js'

let db: TestDatabase
let bed: TestBed
let redactor: PostgresStore
let forker: PostgresStore
let writer: PostgresStore

useTestBed(async (opened) => {
  bed = opened
  db = bed.db
  redactor = await bed.open(db.connectionString, { migrate: true })
  forker = await bed.open(db.connectionString)
  writer = await bed.open(db.connectionString)
})

/** Sessions (and events) whose stored payload still holds `secret`, as the superuser reads the table. */
async function holders(secret: string): Promise<string[]> {
  const rows = await runSql<{ session_id: string }>(
    db.connectionString,
    `select distinct session_id::text from turnlog.events where payload::text like '%' || $1 || '%'
     union select distinct session_id::text from turnlog.conflicts where incoming_payload::text like '%' || $1 || '%'`,
    [secret],
  )
  return rows.map((r) => r.session_id).sort()
}

/** A session [m0, secret, m2] and a fork of it taken at m2 (it holds a copy of the secret). */
async function family(secret: string): Promise<{ parent: SessionId; child: SessionId; messages: Message[] }> {
  const parent = await writer.createSession()
  const messages = [
    createMessage({ role: 'user', content: 'hello' }),
    createMessage({ role: 'user', content: secret }),
    createMessage({ role: 'assistant', content: 'noted' }),
  ]
  await writer.append(parent, messages)
  const child = await writer.fork(parent, { at: messages[2]?.id ?? '' })
  return { parent, child, messages }
}

/** Runs both at once and waits for both; returns what each did (a rejection is returned, not thrown). */
async function race(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[unknown, unknown]> {
  const settle = (p: Promise<unknown>) =>
    p.then(
      (v) => ({ ok: v }),
      (e: unknown) => ({ error: e }),
    )
  return Promise.all([settle(a()), settle(b())])
}

describe('redact racing a fork (regression, issue 13 item 4)', () => {
  it('leaves no session holding the content when a fork of the parent is taken while the child is redacted (50 rounds)', async () => {
    const leaks: { round: number; sessions: string[] }[] = []
    for (let round = 0; round < 50; round++) {
      // given a parent and its fork, both holding the secret
      const secret = `secret-fork-race-${round}-${Math.random().toString(36).slice(2)}`
      const { parent, child, messages } = await family(secret)
      // when one connection redacts the message through the fork while another forks the parent again
      const [redacted, forked] = await race(
        () => redactor.redact(child, messages[1]?.id ?? ''),
        () => forker.fork(parent, { at: messages[2]?.id ?? '' }),
      )
      // then both succeeded and no session, the new fork included, still holds the content
      expect(redacted).toHaveProperty('ok')
      expect(forked).toHaveProperty('ok')
      const left = await holders(secret)
      if (left.length > 0) leaks.push({ round, sessions: left })
    }
    expect(leaks).toEqual([])
  })
})

describe('redact racing every path that copies or extends a holder (class)', () => {
  type Actor = (f: { parent: SessionId; child: SessionId; messages: Message[] }) => Promise<unknown>
  const actors: [string, Actor][] = [
    ['a fork of the parent', (f) => forker.fork(f.parent, { at: f.messages[2]?.id ?? '' })],
    ['a fork of the fork (fork of fork)', (f) => forker.fork(f.child, { at: f.messages[2]?.id ?? '' })],
    ['an append to the fork', (f) => forker.append(f.child, [createMessage({ role: 'user', content: 'more' })])],
    [
      'a fork of the parent, then a fork of that new fork',
      async (f) => {
        const first = await forker.fork(f.parent, { at: f.messages[2]?.id ?? '' })
        return forker.fork(first, { at: f.messages[1]?.id ?? '' })
      },
    ],
  ]

  it.each(actors)(
    'redact of the parent or of the fork racing %s: no copy keeps the content, every chain verifies',
    async (_what, actor) => {
      for (let round = 0; round < 12; round++) {
        // given a parent and its fork holding the secret
        const secret = `secret-class-${round}-${Math.random().toString(36).slice(2)}`
        const f = await family(secret)
        const via = round % 2 === 0 ? f.parent : f.child
        // when the redaction (through either session) races the actor
        const [redacted, acted] = await race(
          () => redactor.redact(via, f.messages[1]?.id ?? ''),
          () => actor(f),
        )
        // then both succeeded, nothing holds the content, and every session of the family verifies
        expect(redacted).toHaveProperty('ok')
        expect(acted).toHaveProperty('ok')
        expect(await holders(secret)).toEqual([])
        const related = await runSql<{ session_id: string }>(
          db.connectionString,
          `select distinct session_id::text from turnlog.events where message_id = $1`,
          [f.messages[1]?.id],
        )
        for (const { session_id: sid } of related) {
          const v = await verifyChain(redactor, sid)
          expect({ sid, breaks: v.breaks }).toEqual({ sid, breaks: [] })
        }
      }
    },
  )

  it('two redactions of different messages locking overlapping sessions in opposite orders both succeed', async () => {
    for (let round = 0; round < 10; round++) {
      // given two messages held by both the parent and the fork
      const a = `secret-a-${round}-${Math.random().toString(36).slice(2)}`
      const f = await family(a)
      // when one redaction goes through the parent and another (of another message) through the fork
      const [first, second] = await race(
        () => redactor.redact(f.parent, f.messages[1]?.id ?? ''),
        () => forker.redact(f.child, f.messages[0]?.id ?? ''),
      )
      // then both succeed (a deadlock between them is retried), and the content is gone
      expect(first).toHaveProperty('ok')
      expect(second).toHaveProperty('ok')
      expect(await holders(a)).toEqual([])
      expect(await holders('hello')).not.toContain(f.parent)
    }
  })
})

describe('redact racing a fork through a tenant login (row level security applies)', () => {
  it('leaves no copy holding the content (20 rounds)', async () => {
    // given a tenant writer login, two stores of it, and the tenant's sessions
    const tenantRole = await bed.role('rr', { groups: ['turnlog_writer'], tenant: 'acme' })
    const a = await openStore({ connectionString: tenantRole.connectionString, migrate: false, pool: { max: 2 } })
    const b = await openStore({ connectionString: tenantRole.connectionString, migrate: false, pool: { max: 2 } })
    try {
      for (let round = 0; round < 20; round++) {
        const secret = `secret-tenant-${round}-${Math.random().toString(36).slice(2)}`
        const parent = await a.createSession({ tenantId: 'acme' })
        const messages = [createMessage({ role: 'user', content: secret }), createMessage({ role: 'assistant', content: 'ok' })]
        await a.append(parent, messages)
        const child = await a.fork(parent, { at: messages[1]?.id ?? '' })
        // when one login's store redacts through the fork while the other forks the parent
        const [redacted, forked] = await race(
          () => a.redact(child, messages[0]?.id ?? ''),
          () => b.fork(parent, { at: messages[1]?.id ?? '' }),
        )
        // then
        expect(redacted).toHaveProperty('ok')
        expect(forked).toHaveProperty('ok')
        expect(await holders(secret)).toEqual([])
      }
    } finally {
      await a.close()
      await b.close()
    }
  })
})
