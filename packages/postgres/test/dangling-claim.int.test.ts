/**
 * A message id claimed in `turnlog.message_ids` with no event behind it (operations.md, "Retention": an
 * archive delete that kept the `message_ids` rows) is no race another attempt can win: every write of
 * that id (append, flush, sync, a compaction's summary, an import) ends in `CORRUPT_LOG` naming the id,
 * after one retry, instead of `DB_TRANSIENT` however often the caller retried. Postgres and PGlite.
 */
import { describe, expect, it } from '@jest/globals'
import { GENESIS_HASH, contentHash, createMessage, eventChainHash, type ImportedSession, type JsonValue, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, turnlogRejection, useTestStoreOfKind } from '@turnlog/testing'
import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'

const user = (content: string): Message => createMessage({ role: 'user', content })

describe.each(STORE_KINDS)('a dangling message id claim (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  /** A session holding `message` and one turn more, then deleted as the retention procedure says, but keeping its `message_ids` rows. */
  async function archivedWithoutMessageIds(message: Message): Promise<void> {
    const archived = await store.createSession()
    await store.append(archived, [message, user('another archived turn')])
    await store.db.transaction().execute(async (trx) => {
      for (const table of ['live_messages', 'events', 'conflicts', 'sessions'])
        await sql`delete from ${sql.table(`turnlog.${table}`)} where session_id = ${archived}::uuid`.execute(trx)
    })
  }

  function expectDangling(error: unknown, message: Message): void {
    expect(error).toMatchObject({ code: 'CORRUPT_LOG', details: { messageId: message.id, constraint: 'message_ids_pkey' } })
    expect((error as Error).message).toContain('Retention')
    expect((error as { cause?: { code?: unknown } }).cause?.code).toBe('23505')
  }

  it('append, flush and sync of the id: CORRUPT_LOG naming it; nothing written', async () => {
    // given
    const message = user('archived turn')
    await archivedWithoutMessageIds(message)
    const session = await store.createSession()
    await store.append(session, [user('first')])

    // when / then
    expectDangling(await turnlogRejection(store.append(session, [message])), message)
    expectDangling(await turnlogRejection(store.flush(session, [...(await store.load(session)).messages, message])), message)
    expectDangling(await turnlogRejection(store.sync(session, [...(await store.load(session)).messages, message])), message)
    expect((await store.getSession(session)).version).toBe(1)
  })

  it("a compaction's summary of the id: CORRUPT_LOG naming it; nothing written", async () => {
    // given
    const message = user('archived summary')
    await archivedWithoutMessageIds(message)
    const session = await store.createSession()
    const [q, a] = [user('q'), user('a')]
    await store.append(session, [q, a])

    // when
    const error = await turnlogRejection(store.compact(session, { covered: [q.id], summary: message }))

    // then
    expectDangling(error, message)
    expect((await store.getSession(session)).version).toBe(2)
  })

  it('an import of a session holding the id: CORRUPT_LOG naming it; the session is not written', async () => {
    // given
    const message = user('archived import')
    await archivedWithoutMessageIds(message)
    const id = randomUUID()
    const at = '2025-01-01T00:00:00.000Z'
    const event = {
      seq: 1,
      eventId: randomUUID(),
      type: 'message_appended',
      messageId: message.id,
      contentHash: contentHash(message.payload),
      payload: message.payload as unknown as JsonValue,
      data: { createdAt: at },
      recordedAt: at,
    }
    const hash = eventChainHash(GENESIS_HASH, { ...event, sessionId: id })
    const file: ImportedSession = {
      id,
      tenantId: null,
      metadata: null,
      createdAt: at,
      updatedAt: at,
      parent: null,
      events: [{ ...event, hash, line: 2 }],
      line: 1,
    }

    // when
    const error = await turnlogRejection(store.importSessions([file]))

    // then
    expectDangling(error, message)
    expect((await turnlogRejection(store.getSession(id))).code).toBe('SESSION_NOT_FOUND')
  })
})
