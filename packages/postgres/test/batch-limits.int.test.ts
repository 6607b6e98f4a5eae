/**
 * Size and depth limits of what one call writes: `maxBatchBytes` (BATCH_TOO_LARGE) and the JSON
 * nesting limit (MAX_JSON_DEPTH), checked before anything is sent. Incidents: a batch of many large
 * messages, each under maxMessageBytes, escaped as a raw `RangeError: Invalid string length` (the batch
 * travels as one JSON text); deeply nested JSON reached recursive walkers. The property throws
 * generated sizes and nestings at every write that takes messages or metadata, with small configured
 * limits, and checks the outcome against the limits and the database with SQL counts.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { sql } from 'kysely'
import { MAX_JSON_DEPTH, createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { DEFAULT_MAX_BATCH_BYTES, MAX_BATCH_BYTES_CEILING, openStore, type PostgresStore } from '@turnlog/postgres'
import { caught, nestedObject as nest, type TestDatabase, useTestStore } from '@turnlog/testing'
import { expectSplitMatchesStore } from './support/split-matches-store.js'

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

/** Everything a call may write, as one string (conflict evidence included). */
async function snapshot(s: PostgresStore): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|',
      (select count(*) from turnlog.events),
      (select count(*) from turnlog.sessions),
      (select coalesce(sum(version), 0) from turnlog.sessions),
      (select count(*) from turnlog.live_messages),
      (select count(*) from turnlog.conflicts)) as s`.execute(s.db)
  return rows[0]?.s ?? ''
}

/** What the store counts for a message: payload text, envelope text, one separator. */
function sizeOf(m: Message): number {
  const d: Record<string, string> = { createdAt: m.createdAt }
  if (m.externalId !== undefined) d['externalId'] = m.externalId
  if (m.status === 'partial') d['status'] = 'partial'
  return JSON.stringify(m.payload).length + JSON.stringify(d).length + 1
}

describe('maxBatchBytes', () => {
  it('refuses a batch of 40 × 15 MiB messages with BATCH_TOO_LARGE, not RangeError: Invalid string length, and writes nothing (incident)', async () => {
    // given: each message under the default maxMessageBytes (16 MiB), 600 MiB together; one shared string
    const sessionId = await store.createSession()
    const big = 'x'.repeat(15 * 1024 * 1024)
    const batch = Array.from({ length: 40 }, () => createMessage({ role: 'user', content: big }))
    const before = await snapshot(store)

    // when: every path that takes a batch
    const appended = await caught(store.append(sessionId, batch))
    const flushed = await caught(store.flush(sessionId, batch))
    const inTransaction = await caught(store.db.transaction().execute((trx) => store.withTransaction(trx).append(sessionId, batch)))
    const compacted = await caught(async () => {
      const [q] = [createMessage({ role: 'user', content: 'q' })]
      await store.append(sessionId, [q as Message])
      const mid = await snapshot(store)
      const e = await caught(store.compact(sessionId, { covered: [(q as Message).id], summary: batch }))
      expect(await snapshot(store)).toBe(mid)
      throw e
    })

    // then
    for (const e of [appended, flushed, inTransaction, compacted]) {
      expect(isTurnlogError(e, 'BATCH_TOO_LARGE')).toBe(true)
      expect((e as { details: Record<string, unknown> }).details).toMatchObject({ limit: DEFAULT_MAX_BATCH_BYTES, messages: 40 })
    }
    const after = await store.getSession(sessionId)
    expect(after.version).toBe(1) // only the message the compaction was given to cover
    expect(before.split('|')[0]).toBe(String(Number((await snapshot(store)).split('|')[0]) - 1))
  })

  it('refuses one payload longer than any string can be with MESSAGE_TOO_LARGE, not a RangeError', async () => {
    // given: 40 content parts of one shared 15 MiB string: 600 MiB of JSON, more than 2^29 − 24 code units
    const big = 'x'.repeat(15 * 1024 * 1024)
    const huge = createMessage({ role: 'user', content: Array.from({ length: 40 }, () => ({ type: 'text', text: big })) })
    const sessionId = await store.createSession()
    const before = await snapshot(store)

    // when: serialising it (append) and hashing it (flush) both pass the string limit
    const appended = await caught(store.append(sessionId, [huge]))
    const flushed = await caught(store.flush(sessionId, [huge]))

    // then
    expect(isTurnlogError(appended, 'MESSAGE_TOO_LARGE')).toBe(true)
    expect(isTurnlogError(flushed, 'MESSAGE_TOO_LARGE')).toBe(true)
    expect(await snapshot(store)).toBe(before)
  })

  it('refuses metadata longer than maxBatchBytes in createSession, fork and compact, and writes nothing', async () => {
    // given
    const small = await openStore({ connectionString: db.connectionString, maxBatchBytes: 1000 })
    try {
      const sessionId = await small.createSession()
      const q = createMessage({ role: 'user', content: 'q' })
      await small.append(sessionId, [q])
      const metadata = { note: 'y'.repeat(1000) }
      const before = await snapshot(small)

      // when
      const errors = [
        await caught(small.createSession({ metadata })),
        await caught(small.fork(sessionId, { at: q.id, metadata })),
        await caught(small.compact(sessionId, { covered: [q.id], summary: [createMessage({ role: 'system', content: 's' })], metadata })),
      ]

      // then
      for (const e of errors)
        expect([isTurnlogError(e, 'BATCH_TOO_LARGE'), (e as { details?: unknown }).details]).toEqual([
          true,
          { what: 'metadata', limit: 1000, size: 1011 },
        ])
      expect(await snapshot(small)).toBe(before)
      // and a metadata at the limit is fine
      await small.createSession({ metadata: { note: 'y'.repeat(1000 - 11) } })
    } finally {
      await small.close()
    }
  })

  it('splitByBatchBytes (core) counts a message exactly as the store does: external id and scope, partial status', async () => {
    // given: messages with external ids and scopes, one partial
    const messages = [
      createMessage({ role: 'user', content: 'scoped "quotes" \u00e9' }, { externalId: 'ext-1', scope: 'tenant-a' }),
      createMessage({ role: 'assistant', content: 'still typing' }, { status: 'partial', externalId: 'ext-2', scope: null }),
    ]

    // when / then: one run at the total, two one code unit below it, and the store agrees
    await expectSplitMatchesStore(db.connectionString, messages as [Message, Message])
  })

  it('accepts a batch of exactly maxBatchBytes and refuses one code unit more', async () => {
    // given
    const probe = createMessage({ role: 'user', content: '' })
    const limit = 4000
    const content = 'z'.repeat(limit - sizeOf(probe))
    const small = await openStore({ connectionString: db.connectionString, maxBatchBytes: limit })
    try {
      const sessionId = await small.createSession()
      const exact = createMessage({ role: 'user', content })
      const over = createMessage({ role: 'user', content: content + 'z' })
      expect(sizeOf(exact)).toBe(limit)

      // when
      const refused = await caught(small.append(sessionId, [over]))
      const result = await small.append(sessionId, [exact])

      // then
      expect(isTurnlogError(refused, 'BATCH_TOO_LARGE')).toBe(true)
      expect((refused as { details: unknown }).details).toMatchObject({ limit, size: limit + 1, index: 0, messageId: over.id })
      expect(result.appended).toEqual([exact.id])
      expect(small.maxBatchBytes).toBe(limit)
    } finally {
      await small.close()
    }
  })

  it('keeps group statements within maxBatchBytes: 24 concurrent appends that together exceed it all commit', async () => {
    // given: each batch ≈ 3,000 of a 10,000 limit; the group commit would join up to 32 of them
    const small = await openStore({
      connectionString: db.connectionString,
      maxBatchBytes: 10_000,
      groupCommit: { maxBatches: 32, maxInFlight: 1 },
    })
    try {
      const sessions = await Promise.all(Array.from({ length: 24 }, () => small.createSession()))
      const batches = sessions.map((_, i) => [createMessage({ role: 'user', content: `${i}:${'w'.repeat(2900)}` })])

      // when
      const results = await Promise.all(sessions.map((s, i) => small.append(s, batches[i] as Message[])))

      // then
      expect(results.map((r) => r.appended.length)).toEqual(sessions.map(() => 1))
      for (const [i, s] of sessions.entries())
        expect((await small.load(s)).messages.map((m) => m.payload.content)).toEqual([batches[i]?.[0]?.payload.content])
    } finally {
      await small.close()
    }
  })

  it('refuses a maxBatchBytes that is not an integer from 1 to 256 MiB with INVALID_INPUT', async () => {
    for (const bad of [Number.NaN, 0, -1, 1.5, 'abc', {}, null, MAX_BATCH_BYTES_CEILING + 1, Number.POSITIVE_INFINITY]) {
      const e = await caught(openStore({ connectionString: db.connectionString, maxBatchBytes: bad as number }))
      expect([bad, isTurnlogError(e, 'INVALID_INPUT')]).toEqual([bad, true])
    }
  })
})

describe('JSON nesting depth', () => {
  it.each([5_000, 100_000])(
    'refuses %i levels in every write that takes JSON with a typed error, and writes nothing (incident)',
    async (levels) => {
      // given
      const sessionId = await store.createSession()
      const q = createMessage({ role: 'user', content: 'q' })
      const streaming = createMessage({ role: 'assistant', content: 'a' }, { status: 'partial' })
      await store.append(sessionId, [q, streaming])
      const deep = nest(levels)
      const raw = { id: q.id, payload: { role: 'user', content: 'x', deep }, createdAt: q.createdAt } as never
      const before = await snapshot(store)

      // when
      const errors = {
        createMessage: await caught(() => createMessage({ role: 'user', content: 'x', deep })),
        createSession: await caught(store.createSession({ metadata: deep as never })),
        fork: await caught(store.fork(sessionId, { at: q.id, metadata: deep as never })),
        compact: await caught(
          store.compact(sessionId, {
            covered: [q.id],
            summary: [createMessage({ role: 'system', content: 's' })],
            metadata: deep as never,
          }),
        ),
        revise: await caught(store.revise(sessionId, q.id, { role: 'user', content: 'q', deep })),
        append: await caught(store.append(sessionId, [raw])),
        flush: await caught(store.flush(sessionId, [q, raw])),
        transaction: await caught(store.db.transaction().execute((trx) => store.withTransaction(trx).append(sessionId, [raw]))),
        finalize: await caught(store.finalize(sessionId, streaming.id, { role: 'assistant', content: 'a', deep })),
      }

      // then
      for (const [entry, e] of Object.entries(errors)) {
        expect([entry, isTurnlogError(e) && ['INVALID_MESSAGE', 'INVALID_INPUT'].includes(e.code)]).toEqual([entry, true])
        expect([entry, (e as Error).message]).toEqual([entry, expect.stringMatching(new RegExp(`deeper than ${MAX_JSON_DEPTH}`))])
      }
      expect(await snapshot(store)).toBe(before)
    },
  )
})

// ---------------------------------------------------------------------------------------------------
// the class: generated sizes and nestings against every write that takes messages or JSON

const LIMIT = 3000
const MESSAGE_LIMIT = 1500

type Op = 'append' | 'flush' | 'transaction' | 'compact' | 'createSession' | 'fork' | 'compactMetadata'

const contentArb = fc.oneof(
  fc.nat({ max: 1600 }).map((n) => 'a'.repeat(n)),
  fc.nat({ max: 400 }).map((n) => 'é\u0000😀'.repeat(n)),
)
/** A payload, sometimes with an extra field nested 1 to 300 levels deep. */
const payloadArb = fc.record({
  content: contentArb,
  depth: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 300 }) }),
})
const metadataArb = fc.record({ size: fc.nat({ max: 3200 }), depth: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })) })

function build(p: { content: string; depth: number }): Record<string, unknown> {
  return p.depth === 0 ? { role: 'user', content: p.content } : { role: 'user', content: p.content, extra: nest(p.depth) }
}

describe('limits of every write (property)', () => {
  it('stores exactly what fits, refuses the rest with a typed error and writes nothing', async () => {
    const small = await openStore({ connectionString: db.connectionString, maxBatchBytes: LIMIT, maxMessageBytes: MESSAGE_LIMIT })
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<Op>('append', 'flush', 'transaction', 'compact', 'createSession', 'fork', 'compactMetadata'),
          fc.array(payloadArb, { minLength: 1, maxLength: 5 }),
          metadataArb,
          async (op, payloads, meta) => {
            // given
            const sessionId: SessionId = await small.createSession()
            const q = createMessage({ role: 'user', content: 'q' })
            await small.append(sessionId, [q])
            const before = await snapshot(small)
            // the payloads a caller would build; the deep ones refused by createMessage already
            let messages: Message[] = []
            let built: unknown
            try {
              messages = payloads.map((p) => createMessage(build(p) as never))
            } catch (e) {
              built = e
            }
            const metadata = meta.depth === 0 ? { pad: 'm'.repeat(meta.size) } : { pad: 'm'.repeat(meta.size), deep: nest(meta.depth) }

            // when
            const result =
              built !== undefined && !['createSession', 'fork', 'compactMetadata'].includes(op)
                ? built
                : await caught(
                    (async () => {
                      switch (op) {
                        case 'append':
                          return small.append(sessionId, messages)
                        case 'flush':
                          return small.flush(sessionId, [q, ...messages])
                        case 'transaction':
                          return small.db.transaction().execute((trx) => small.withTransaction(trx).append(sessionId, messages))
                        case 'compact':
                          return small.compact(sessionId, { covered: [q.id], summary: messages })
                        case 'createSession':
                          return small.createSession({ metadata: metadata as never })
                        case 'fork':
                          return small.fork(sessionId, { at: q.id, metadata: metadata as never })
                        case 'compactMetadata':
                          return small.compact(sessionId, {
                            covered: [q.id],
                            summary: [createMessage({ role: 'system', content: 's' })],
                            metadata: metadata as never,
                          })
                      }
                    })(),
                  )

            // then: the outcome the limits predict
            const metadataOp = ['createSession', 'fork', 'compactMetadata'].includes(op)
            const tooDeep = metadataOp ? meta.depth + 1 > MAX_JSON_DEPTH : payloads.some((p) => p.depth + 1 > MAX_JSON_DEPTH)
            const sizes = messages.map(sizeOf)
            const messageTooLarge = !metadataOp && messages.some((m) => JSON.stringify(m.payload).length > MESSAGE_LIMIT)
            const metadataLength = JSON.stringify(metadata).length
            const batchTooLarge = metadataOp
              ? metadataLength > LIMIT
              : sizes.reduce((a, b) => a + b, 0) + (op === 'compact' ? 16 * messages.length : 0) > LIMIT
            if (tooDeep) {
              expect(isTurnlogError(result) && ['INVALID_MESSAGE', 'INVALID_INPUT'].includes(result.code)).toBe(true)
            } else if (messageTooLarge) {
              expect(isTurnlogError(result, 'MESSAGE_TOO_LARGE') || isTurnlogError(result, 'BATCH_TOO_LARGE')).toBe(true)
            } else if (batchTooLarge) {
              expect(isTurnlogError(result, 'BATCH_TOO_LARGE')).toBe(true)
            } else {
              expect(result).toBeUndefined()
              // stored exactly: the messages are live with their content
              if (!metadataOp) {
                const live = new Map((await small.load(sessionId)).messages.map((m) => [m.id as string, JSON.stringify(m.payload)]))
                for (const m of messages) expect(live.get(m.id)).toBe(JSON.stringify(m.payload))
              }
            }
            if (result !== undefined) {
              expect(result).not.toBeInstanceOf(RangeError)
              expect(await snapshot(small)).toBe(before)
            }
          },
        ),
        { numRuns: 60 },
      )
    } finally {
      await small.close()
    }
  })
})
