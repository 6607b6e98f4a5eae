import { describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

let db: TestDatabase
let role: LoginRole
let store: PostgresStore

useTestBed(async (bed) => {
  db = bed.db
  role = await bed.role('tam', { groups: ['turnlog_writer'], tenant: 'acme' })
  store = await bed.open(role.connectionString)
})

/** A tenant session of four messages, the second one redacted. */
async function session(): Promise<{ sid: SessionId; messages: Message[] }> {
  const sid = await store.createSession({ tenantId: 'acme' })
  const messages = [
    createMessage({ role: 'user', content: 'pay 10 EUR to Bob' }),
    createMessage({ role: 'user', content: 'my card is 4111-1111' }),
    createMessage({ role: 'assistant', content: 'Paid 10 EUR to Bob.' }),
    createMessage({ role: 'user', content: 'thanks' }),
  ]
  await store.append(sid, messages)
  await store.redact(sid, messages[1]?.id ?? '')
  expect((await verifyChain(store, sid)).ok).toBe(true)
  return { sid, messages }
}

/** Runs `text` as the superuser, the way an out-of-band edit would. */
const superuser = (text: string, params: readonly unknown[]) => runSql(db.connectionString, text, params)

describe('out-of-band tampering by a superuser, after the role setup', () => {
  it.each([
    [
      'an UPDATE of a payload',
      `update turnlog.events set payload = '{"role":"assistant","content":"Paid 10000 EUR to Mallory."}' where session_id = $1 and seq = 3`,
      3,
    ],
    ['a DELETE of an event', 'delete from turnlog.events where session_id = $1 and seq = 3', 4],
    [
      'an UPDATE that puts content back in place of a redaction placeholder',
      `update turnlog.events set payload = '{"role":"user","content":"my card is 4111-2222"}' where session_id = $1 and seq = 2`,
      2,
    ],
    [
      'a forged scrub with no redaction event (content hidden, digest kept)',
      `
      update turnlog.events set payload = '{"role":"assistant","content":"[redacted]"}',
             payload_digest = sha256(convert_to(payload::text, 'UTF8'))
       where session_id = $1 and seq = 3`,
      3,
    ],
    [
      'an UPDATE of a redaction record',
      `update turnlog.events set data = '{"scrubbed":[]}' where session_id = $1 and type = 'message_redacted'`,
      5,
    ],
  ])('is found by verifyChain and audit: %s', async (_what, statement, seq) => {
    // given a verified tenant session; the writer itself may not touch it
    const { sid } = await session()
    expect(await sqlStateOf(role.connectionString, statement, [sid])).toBe('42501')
    // when a superuser edits the log around the store
    await superuser(statement, [sid])
    const verification = await verifyChain(store, sid)
    const report = await audit(store, sid)
    // then the chain verification and the audit locate it
    expect(verification.ok).toBe(false)
    expect(verification.breaks.map((b) => b.seq)).toContain(seq)
    expect(report.findings.filter((f) => f.severity === 'critical' && f.seqs.includes(seq)).length).toBeGreaterThan(0)
  })
})
