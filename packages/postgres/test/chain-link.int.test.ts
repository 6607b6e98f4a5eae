/**
 * The SQL chain link against the golden vectors core's chainHash is pinned to
 * (packages/core/test/chain-vectors.json): `turnlog.chain_link` directly, the genesis of
 * `turnlog.chain_predecessor`, and the `events_link` trigger end to end (a plain and a scrubbed insert);
 * then the class: any inputs (hostile JSON texts and type strings, absent fields, digests) give the
 * same link in SQL and in TypeScript.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import { chainHash, type ChainInput } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { jsonValueArb, weirdStringArb, useTestStore } from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'

/** The golden vectors file (shared with core's test). */
interface ChainVectors {
  readonly genesis: string
  readonly vectors: readonly { readonly name: string; readonly prev: string; readonly input: ChainInput; readonly link: string }[]
}

const VECTORS = JSON.parse(readFileSync(new URL('../../core/test/chain-vectors.json', import.meta.url), 'utf8')) as ChainVectors

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

describe('turnlog.chain_link golden vectors (SQL)', () => {
  it.each(VECTORS.vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
    // when the database computes the link from the vector's inputs
    const i = v.input
    const { rows } = await sql<{ link: string }>`
      select encode(turnlog.chain_link(decode(${v.prev}, 'hex'), ${i.sessionId}::uuid, ${String(i.seq)}::bigint, ${i.eventId}::uuid,
               ${i.type}, ${i.messageId}::uuid, decode(${i.contentHash}, 'hex'), ${i.dataText}::json, ${i.payloadText}::json,
               decode(${i.payloadDigest ?? null}, 'hex')), 'hex') as link`.execute(store.db)
    // then it is the golden one
    expect(rows[0]?.link).toBe(v.link)
  })

  it('chain_predecessor answers the genesis for seq 1', async () => {
    const { rows } = await sql<{ prev: string }>`
      select encode(turnlog.chain_predecessor(gen_random_uuid(), 1, pg_current_xact_id()), 'hex') as prev`.execute(store.db)
    expect(rows[0]?.prev).toBe(VECTORS.genesis)
  })

  it('the events_link trigger stores the golden link of a first event, and links a scrubbed insert over its digest', async () => {
    // given the first vector (a first event) and a scrubbed copy of it in another session
    const first = VECTORS.vectors[0]!
    expect(first.prev).toBe(VECTORS.genesis)
    const i = first.input
    const scrubbed: ChainInput = {
      ...i,
      sessionId: '0190d2c4-3a6e-7c1b-9f1e-2b7d4c8a9eff',
      messageId: '0190d2c4-3a6e-7c1b-9f1e-2b7d4c8a9efe',
      payloadText: '{"role":"user","content":"[redacted]"}',
      payloadDigest: 'c0ffee00'.repeat(8),
    }

    // when both are inserted (the trigger computes the links)
    const links: string[] = []
    for (const e of [i, scrubbed]) {
      await sql`insert into turnlog.sessions (session_id, version) values (${e.sessionId}::uuid, 1)`.execute(store.db)
      const { rows } = await sql<{ link: string }>`
        insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, payload_digest)
        values (${e.sessionId}::uuid, ${String(e.seq)}::bigint, ${e.eventId}::uuid, ${e.type}, ${e.messageId}::uuid,
                decode(${e.contentHash}, 'hex'), ${e.payloadText}::json, ${e.dataText}::json, decode(${e.payloadDigest ?? null}, 'hex'))
        returning encode(hash, 'hex') as link`.execute(store.db)
      links.push(rows[0]!.link)
    }

    // then the plain one is the golden link, the scrubbed one the verifier's link over the digest
    expect(links).toEqual([first.link, chainHash(VECTORS.genesis, scrubbed)])
    expect(links[1]).not.toBe(chainHash(VECTORS.genesis, { ...scrubbed, payloadDigest: null }))
  })

  it('agrees with core chainHash on arbitrary inputs (hostile JSON texts, absent fields, payload digests)', async () => {
    const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'))
    const inputArb = fc.record({
      prev: hex32,
      sessionId: fc.uuid(),
      seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      eventId: fc.uuid(),
      // a text column holds no NUL, and the batch passes through a JSON operator, which refuses a lone surrogate
      type: weirdStringArb.filter((t) => !t.includes('\u0000') && !/\p{Cs}/u.test(t)),
      messageId: fc.option(fc.uuid(), { nil: null }),
      contentHash: fc.option(hex32, { nil: null }),
      data: jsonValueArb,
      payload: fc.option(jsonValueArb, { nil: null }),
      payloadDigest: fc.option(hex32, { nil: null }),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(inputArb, { minLength: 1, maxLength: 8 }), async (inputs) => {
        // given inputs as the store writes them (JSON.stringify texts)
        const vectors = inputs.map((v) => ({
          prev: v.prev,
          input: {
            sessionId: v.sessionId,
            seq: v.seq,
            eventId: v.eventId,
            type: v.type,
            messageId: v.messageId,
            contentHash: v.contentHash,
            dataText: JSON.stringify(v.data),
            payloadText: v.payload === null ? null : JSON.stringify(v.payload),
            payloadDigest: v.payloadDigest,
          } satisfies ChainInput,
        }))
        // when the database links each (one statement for the batch)
        const { rows } = await sql<{ link: string }>`
          select encode(turnlog.chain_link(decode(x->>'prev', 'hex'), (x->'input'->>'sessionId')::uuid, (x->'input'->>'seq')::bigint,
                   (x->'input'->>'eventId')::uuid, x->'input'->>'type', (x->'input'->>'messageId')::uuid,
                   decode(x->'input'->>'contentHash', 'hex'), (x->'input'->>'dataText')::json, (x->'input'->>'payloadText')::json,
                   decode(x->'input'->>'payloadDigest', 'hex')), 'hex') as link
            from json_array_elements(${JSON.stringify(vectors)}::json) with ordinality as t(x, ord) order by t.ord`.execute(store.db)
        // then every link is the verifier's
        expect(rows.map((r) => r.link)).toEqual(vectors.map((v) => chainHash(v.prev, v.input)))
      }),
      { numRuns: 60 },
    )
  })
})
