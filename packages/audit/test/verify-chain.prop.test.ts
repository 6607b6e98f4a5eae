/**
 * Properties of verifyChain against the database's own chain trigger (Postgres and PGlite): for any
 * hostile payloads (NUL, lone surrogates, `__proto__` keys, -0, astral and RTL text) the JS links agree
 * with the SQL ones, and rewriting any one stored event is located at exactly its seq.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, chatPayloadArb, useTestStoreOfKind, weirdStringArb } from '@turnlog/testing'
import { verifyChain } from '@turnlog/audit'
import fc from 'fast-check'
import { sql } from 'kysely'

describe.each(STORE_KINDS)('verifyChain (property, %s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('verifies every log the store writes, whatever the payloads', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(chatPayloadArb, { minLength: 1, maxLength: 6 }), async (payloads) => {
        // given
        const sessionId = await store.createSession()
        await store.append(
          sessionId,
          payloads.map((p) => createMessage(p)),
        )

        // when
        const result = await verifyChain(store, sessionId)

        // then
        expect(result.breaks).toEqual([])
        expect(result.checked).toBe(payloads.length)
      }),
      { numRuns: 40 },
    )
  })

  it('locates a rewrite of any one event at its seq', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(chatPayloadArb, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        weirdStringArb,
        async (payloads, pick, forged) => {
          // given
          const sessionId = await store.createSession()
          await store.append(
            sessionId,
            payloads.map((p) => createMessage(p)),
          )
          const seq = (pick % payloads.length) + 1
          const text = JSON.stringify({ role: 'user', content: `forged ${forged}` })
          await sql`update turnlog.events set payload = ${text}::json where session_id = ${sessionId} and seq = ${seq}`.execute(store.db)

          // when
          const result = await verifyChain(store, sessionId)

          // then
          expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([
            [seq, 'hash_mismatch'],
            [seq, 'content_hash_mismatch'],
          ])
        },
      ),
      { numRuns: 25 },
    )
  })
})
