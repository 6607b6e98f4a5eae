/**
 * docs/formats.md and docs/architecture.md ("Write path", "Storage and hashing"), attacked with
 * hostile values through the real stores, Postgres and PGlite (the pure promises are in
 * packages/core/test/formats-doc-adversarial.test.ts):
 *
 * - tool-call ids holding NUL, a lone surrogate, an astral and an RTL character, opened by `id` and
 *   answered by `call_id`: stored, loaded and paired exactly; the audit names the unanswered one; a
 *   redaction keeps them, so pairing and the repaired wire copy do not change (payloads have no NUL
 *   limit; "Redaction works for every format");
 * - `tool_calls` null, `[]` and absent are stored as given: a copy of each is a duplicate, one swapped
 *   for another under the same id is MESSAGE_CONFLICT and nothing is written ("Types": same payload,
 *   same hash; architecture "Write path" 2);
 * - copies of a message (spread, frozen spread, JSON round trip, structured clone, a copy with other
 *   meta) appended or flushed again are duplicates: nothing written, the first meta stays; a spread with
 *   an edited payload is MESSAGE_CONFLICT, nothing written ("meta is not part of the content hash");
 * - a payload whose getter throws is `INVALID_INPUT` with `details.field: 'payload'` (docs/errors.md:
 *   the argument at fault), nothing written (regression: it named `toFrozenJson`);
 * - a payload with keys that are NUL, a lone surrogate, empty or integer-like is loaded exactly, hashed
 *   the same and a duplicate when re-sent; its event `data` has no `format` key for `openai-chat` and
 *   `format` for another format ("Storage and hashing");
 * - a message stored with a format this process has not registered (written by a process that had it):
 *   the loaded value goes through flush, sync, append (duplicates), fork, `load({ at })`, `serializeMessage`
 *   and redact (`{ redacted: true }`); a spread copy and `revise` need the format (`INVALID_MESSAGE`,
 *   `details.format`), nothing written (Postgres; the writer is a real process);
 * - architecture.md "Group commit": concurrent appends to several sessions (hostile payloads) go out as
 *   grouped `append_batches` statements; with `groupCommit: false`, and inside a transaction (`atomically`),
 *   each goes alone through `append_messages` (Postgres, statements seen by the driver hook);
 * - architecture.md "Messages": `splitByBatchBytes` measures the envelope `messageEnvelope` makes, so it
 *   counts a message exactly as the store's batch limit does with a format, astral/RTL `meta` and a
 *   scope too (Postgres; batch-limits.int.test.ts pins it without format and meta).
 */
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from '@jest/globals'
import { audit } from '@turnlog/audit'
import {
  contentHash,
  createMessage,
  messageFormatNames,
  newMessageId,
  serializeMessage,
  toWire,
  toolPairing,
  type Message,
  type StoredEvent,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { logStatements } from './support/statement-log.js'
import { expectSplitMatchesStore } from './support/split-matches-store.js'
import { HOSTILE_TEXT, STORE_KINDS, caught, sameRealmClone, useTestStore, useTestStoreOfKind, type TestDatabase } from '@turnlog/testing'

const fn = { name: 'read_file', arguments: '{"path":"README.md"}' }

async function eventsOf(store: PostgresStore, sessionId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(sessionId)) out.push(e)
  return out
}

describe.each(STORE_KINDS)('docs/formats.md, attacked, in the store (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('hostile tool-call ids (id / call_id) are stored and paired exactly, the audit names the unanswered one, and a redaction keeps them', async () => {
    // given a call answered by call_id, and a second call with a hostile id that nothing answers
    const sid = await store.createSession()
    const call = createMessage(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: HOSTILE_TEXT, type: 'function', function: fn },
          { id: `${HOSTILE_TEXT}\u0000open`, type: 'function', function: fn },
        ],
      },
      { meta: { model: 'm\u{1F600}' } },
    )
    const result = createMessage({ role: 'tool', call_id: HOSTILE_TEXT, content: `secret ${HOSTILE_TEXT}` })
    await store.append(sid, [call, result])

    // when
    const loaded = (await store.load(sid)).messages
    const report = await audit(store, sid)
    const wireBefore = toWire(loaded, { repairPairing: true })
    await store.redact(sid, result.id)
    const redacted = (await store.load(sid)).messages

    // then the ids are what was given, and they pair as given
    expect(JSON.stringify(loaded.map((m) => m.payload))).toBe(JSON.stringify([call.payload, result.payload]))
    expect(toolPairing(loaded).unanswered).toEqual([{ messageId: call.id, toolCallId: `${HOSTILE_TEXT}\u0000open` }])
    expect(toolPairing(loaded).orphans).toEqual([])
    const unanswered = report.findings.filter((f) => f.kind === 'unanswered_tool_call')
    expect(unanswered).toHaveLength(1)
    expect(JSON.stringify(unanswered[0])).toContain(JSON.stringify(`${HOSTILE_TEXT}\u0000open`).slice(1, -1))
    // and the redacted result still answers its call: only its content changed
    expect(redacted[1]?.payload).toEqual({ role: 'tool', call_id: HOSTILE_TEXT, content: '[redacted]' })
    expect(toolPairing(redacted)).toEqual(toolPairing(loaded))
    const wireAfter = toWire(redacted, { repairPairing: true })
    expect(wireAfter).toEqual(wireBefore.map((w, i) => (i === 1 ? { ...w, content: '[redacted]' } : w)))
  })

  it('tool_calls null, [] and absent are stored as given: a copy of each is a duplicate, one swapped for another is MESSAGE_CONFLICT and nothing is written', async () => {
    // given three replies stored, each saying "no calls" its own way
    const sid = await store.createSession()
    const asNull = createMessage({ role: 'assistant', content: 'a', tool_calls: null })
    const asEmpty = createMessage({ role: 'assistant', content: 'b', tool_calls: [] })
    const absent = createMessage({ role: 'assistant', content: 'c' })
    await store.append(sid, [asNull, asEmpty, absent])

    // when copies are sent again, and then the null replaced by [] under its id
    const again = await store.append(sid, [JSON.parse(JSON.stringify(asNull)) as Message, { ...asEmpty }, sameRealmClone(absent)])
    const swapped = await caught(
      store.append(sid, [{ ...asNull, payload: { role: 'assistant', content: 'a', tool_calls: [] } } as Message]),
    )
    const dropped = await caught(store.append(sid, [{ ...asEmpty, payload: { role: 'assistant', content: 'b' } } as Message]))

    // then
    expect(again).toMatchObject({ version: 3, appended: [], duplicates: [asNull.id, asEmpty.id, absent.id] })
    expect(swapped).toMatchObject({ code: 'MESSAGE_CONFLICT', details: { messageId: asNull.id, reason: 'content_mismatch' } })
    expect(dropped).toMatchObject({ code: 'MESSAGE_CONFLICT', details: { messageId: asEmpty.id, reason: 'content_mismatch' } })
    const loaded = (await store.load(sid)).messages
    expect(loaded.map((m) => m.payload)).toEqual([asNull.payload, asEmpty.payload, absent.payload])
    expect(loaded.map((m) => contentHash(m))).toEqual([asNull, asEmpty, absent].map((m) => contentHash(m)))
    expect(toWire(loaded)).toEqual(['a', 'b', 'c'].map((content) => ({ role: 'assistant', content })))
    expect((await store.getSession(sid)).version).toBe(3)
  })

  it('copies of a message appended or flushed again are duplicates (the first meta stays); a spread with an edited payload is MESSAGE_CONFLICT, nothing written', async () => {
    // given a stored message with hostile text and meta
    const sid = await store.createSession()
    const m = createMessage(
      { role: 'assistant', content: HOSTILE_TEXT, reasoning_content: '\udfff', provider_specific_fields: { '\u0000': [null, {}] } },
      { meta: { model: 'first', latencyMs: 120 } },
    )
    await store.append(sid, [m])

    // when every copy a runtime makes comes back, one of them with the retry's own meta
    const copies = [
      { ...m },
      Object.freeze({ ...m }),
      JSON.parse(JSON.stringify(m)) as Message,
      sameRealmClone(m),
      { ...m, meta: { model: 'retry', latencyMs: 950 } },
    ]
    const appended = await store.append(sid, copies)
    const flushed = await store.flush(sid, [sameRealmClone(m), { ...m, meta: { model: 'flush' } }])
    const edited = await caught(store.append(sid, [{ ...m, payload: { ...m.payload, content: `${HOSTILE_TEXT} (edited)` } } as Message]))

    // then
    expect(appended).toMatchObject({ version: 1, appended: [], duplicates: [m.id] })
    expect(flushed).toMatchObject({ version: 1, appended: [], duplicates: [m.id] })
    expect(edited).toMatchObject({ code: 'MESSAGE_CONFLICT', details: { messageId: m.id, reason: 'content_mismatch' } })
    const [loaded] = (await store.load(sid)).messages
    expect(loaded?.meta).toEqual({ model: 'first', latencyMs: 120 })
    expect(JSON.stringify(loaded?.payload)).toBe(JSON.stringify(m.payload))
    expect((await store.getSession(sid)).version).toBe(1)
  })

  it('a payload whose getter throws is INVALID_INPUT naming the argument (details.field payload, messages[i].payload, live[i].payload); nothing is written', async () => {
    // given
    const sid = await store.createSession()
    const m = createMessage({ role: 'user', content: 'x' })
    await store.append(sid, [m])
    const unreadable = {
      role: 'user',
      get content(): string {
        throw new Error('boom')
      },
    }

    // when
    const refusals = [
      await caught(store.revise(sid, m.id, unreadable)),
      await caught(store.append(sid, [{ ...m, id: newMessageId(), payload: unreadable } as unknown as Message])),
      await caught(store.flush(sid, [m, { ...m, payload: unreadable } as unknown as Message])),
    ]

    // then
    expect(refusals.map((e) => [(e as { code?: unknown }).code, (e as { details?: { field?: unknown } }).details?.field])).toEqual([
      ['INVALID_INPUT', 'payload'],
      ['INVALID_INPUT', 'messages[0].payload'],
      ['INVALID_INPUT', 'live[1].payload'],
    ])
    expect((await store.getSession(sid)).version).toBe(1)
  })

  it('payload keys that are NUL, a lone surrogate, empty or integer-like are loaded exactly and hashed the same; data has format only when it is not openai-chat', async () => {
    // given
    const sid = await store.createSession()
    const chat = createMessage({
      role: 'user',
      content: 'x',
      '\u0000': { '\ud800': '\u{1F600}', '\u202e': [] },
      '': null,
      '10': 1,
      b: { '\udc00x': HOSTILE_TEXT },
      '2': 3,
    } as Message['payload'])
    const json = createMessage<object>({ '\u0000': HOSTILE_TEXT, nested: { '': [{}] } }, { format: 'json' })
    await store.append(sid, [chat, json])

    // when
    const loaded = (await store.load(sid)).messages as Message<unknown>[]
    const again = await store.append(sid, [JSON.parse(JSON.stringify(chat)) as Message, sameRealmClone(json) as Message])
    const data = (await eventsOf(store, sid)).map((e) => e.data as Record<string, unknown>)

    // then
    expect(loaded.map((m) => JSON.stringify(m.payload))).toEqual([JSON.stringify(chat.payload), JSON.stringify(json.payload)])
    expect(loaded.map((m) => contentHash(m))).toEqual([contentHash(chat), contentHash(json)])
    expect(loaded.map((m) => m.format)).toEqual(['openai-chat', 'json'])
    expect(again).toMatchObject({ appended: [], duplicates: [chat.id, json.id] })
    expect(data.map((d) => Object.hasOwn(d, 'format'))).toEqual([false, true])
    expect(data[1]?.['format']).toBe('json')
  })
})

describe('docs/architecture.md, "Messages": splitByBatchBytes measures the envelope the store writes (Postgres)', () => {
  let db: TestDatabase
  useTestStore((t) => ({ db } = t))

  it('counts format, meta with astral and RTL text, and a scope exactly as the store does: one run at the total, two one code unit below', async () => {
    // given messages whose envelope carries every optional field, each size read from a refusal at a 1-byte limit
    const messages = [
      createMessage<object>(
        { note: HOSTILE_TEXT },
        { format: 'json', meta: { model: 'm\u{1F600}\u202e', usage: { total: 3 } }, externalId: 'e1', scope: 'תל' },
      ),
      createMessage({ role: 'assistant', content: HOSTILE_TEXT }, { status: 'partial', meta: { traceId: '\u{1F600}'.repeat(5) } }),
    ] as Message[]

    // when / then core splits where the store's limit falls, and the store agrees
    await expectSplitMatchesStore(db.connectionString, messages as [Message, Message])
  })
})

describe('docs/formats.md, a format this process has not registered (Postgres)', () => {
  let db: TestDatabase
  let store: PostgresStore
  useTestStore((t) => ({ db, store } = t))

  it('the loaded messages go through flush, sync, append, fork, load({ at }), serializeMessage and redact; a copy and revise need the format', async () => {
    // given another process, which has the format, wrote a call and an orphan output in it
    const sid = await store.createSession()
    const writer = join(dirname(fileURLToPath(import.meta.url)), 'support', 'app-format-writer.js')
    const { stdout } = await promisify(execFile)(process.execPath, [
      writer,
      JSON.stringify({ connectionString: db.connectionString, sessionId: sid }),
    ])
    const [callId, outputId] = (JSON.parse(stdout) as { ids: [string, string] }).ids
    expect(messageFormatNames()).not.toContain('promises.app-items')
    const loaded = (await store.load(sid)).messages

    // when the loaded list comes back through every write that takes messages, and the session is forked
    const flushed = await store.flush(sid, loaded)
    const synced = await store.sync(sid, loaded)
    const appended = await store.append(sid, loaded)
    const fork = await store.fork(sid, { at: outputId })
    const copy = await caught(store.append(sid, [{ ...loaded[0] } as Message]))
    const revised = await caught(store.revise(sid, callId, { kind: 'call', id: 'c1', text: 'new' }))
    const versionBefore = (await store.getSession(sid)).version

    // then nothing is written, the fork and the fold read them as they are, and what needs the format says so
    expect(flushed).toMatchObject({ appended: [], duplicates: [callId, outputId] })
    expect(synced).toMatchObject({ appended: [], retracted: [], revised: [] })
    expect(appended).toMatchObject({ appended: [], duplicates: [callId, outputId] })
    expect((await store.load(fork)).messages.map((m) => [m.id, m.format, m.payload])).toEqual(
      loaded.map((m) => [m.id, m.format, m.payload]),
    )
    expect((await store.load(sid, { at: 1 })).messages.map((m) => [m.id, m.format])).toEqual([[callId, 'promises.app-items']])
    expect(JSON.parse(serializeMessage(loaded[0] as Message))).toMatchObject({ id: callId, format: 'promises.app-items' })
    for (const refused of [copy, revised])
      expect(refused).toMatchObject({ code: 'INVALID_MESSAGE', details: { format: 'promises.app-items' } })
    expect(versionBefore).toBe(2)

    // and a redaction stores the opaque placeholder, which is sent as it is
    await store.redact(sid, outputId)
    expect(toWire((await store.load(sid)).messages as Message<unknown>[])).toEqual([loaded[0]?.payload, { redacted: true }])
  })
})

describe('docs/architecture.md, "Group commit": off with groupCommit: false and inside a transaction (Postgres)', () => {
  let db: TestDatabase
  useTestStore((t) => ({ db } = t))

  it('concurrent appends to six sessions go out grouped (append_batches); with groupCommit: false or inside atomically(), six append_messages', async () => {
    // given a grouping store (one statement in flight at a time), a store without group commit, and hostile batches
    const grouped = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: { maxInFlight: 1 } })
    const lone = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
    const log = logStatements(db.name)
    // the first append's reply is held, so the others arrive while it is in flight
    log.hold = (s) => (s.text.includes('append_') ? 50 : 0)
    const run = async (store: PostgresStore, within?: 'atomically'): Promise<{ batches: number; lone: number }> => {
      const sessions = await Promise.all(Array.from({ length: 6 }, () => store.createSession()))
      const batches = sessions.map((_, i) => [
        createMessage({ role: 'user', content: `${HOSTILE_TEXT} ${i}` }, { meta: { i: `\u{1F600}${i}` } }),
      ])
      const from = log.statements.length
      const appendAll = (s: PostgresStore): Promise<unknown> => Promise.all(sessions.map((id, i) => s.append(id, batches[i] ?? [])))
      if (within === 'atomically') await store.atomically((bound) => appendAll(bound as PostgresStore))
      else await appendAll(store)
      for (const [i, id] of sessions.entries())
        expect((await store.load(id)).messages.map((m) => m.id)).toEqual(batches[i]?.map((m) => m.id))
      const sent = log.statements.slice(from).map((st) => st.text)
      return {
        batches: sent.filter((t) => t.includes('append_batches')).length,
        lone: sent.filter((t) => t.includes('append_messages')).length,
      }
    }
    try {
      // when the same load runs on each
      const withGroups = await run(grouped)
      const withoutGroups = await run(lone)
      const inTransaction = await run(grouped, 'atomically')

      // then only the grouping store outside a transaction sends a group
      expect(withGroups.batches).toBeGreaterThanOrEqual(1)
      expect(withGroups.lone).toBeLessThan(6)
      expect(withoutGroups).toEqual({ batches: 0, lone: 6 })
      expect(inTransaction).toEqual({ batches: 0, lone: 6 })
    } finally {
      log.restore()
      await grouped.close()
      await lone.close()
    }
  })
})
