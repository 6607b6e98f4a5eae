/**
 * Size and depth limits of the importers. Incidents: deeply nested JSON (5,000 levels and more) in an
 * export file's session metadata reached recursive walkers inside the import's transaction and came
 * out as `DB_ERROR: Maximum call stack size exceeded`; a transcript larger than one batch
 * (`maxBatchBytes`) must still import, all or nothing (the hermes importer's case is in
 * packages/hermes/test/hermes-import-limits.int.test.ts). The property nests generated depths into
 * every JSON value of an export line.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { sql } from 'kysely'
import { MAX_JSON_DEPTH, createMessage, isTurnlogError, serializeMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { caught, createTestDatabase, nestedObject as nest, useTwoTestStores, type TestDatabase } from '@turnlog/testing'
import { audit, exportSessions, importEvents, importTranscript } from '@turnlog/audit'

let sourceDb: TestDatabase
let targetDb: TestDatabase
let source: PostgresStore
let target: PostgresStore
/** The export of one session with metadata, a compaction with metadata and tool calls. */
let lines: string[]

useTwoTestStores(
  (t) =>
    ({ sourceDb, source, targetDb, target } = {
      sourceDb: t.source.db,
      source: t.source.store,
      targetDb: t.target.db,
      target: t.target.store,
    }),
)

beforeAll(async () => {
  const sessionId = await source.createSession({ metadata: { agent: 'a', tags: ['x', { y: [1, 2] }] } })
  const q = createMessage({ role: 'user', content: 'q' })
  await source.append(sessionId, [
    q,
    createMessage({
      role: 'assistant',
      content: 'a',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    }),
  ])
  await source.append(sessionId, [createMessage({ role: 'tool', tool_call_id: 'c1', content: 'r' })])
  await source.compact(sessionId, {
    covered: [q.id],
    summary: [createMessage({ role: 'system', content: 'summary' })],
    metadata: { by: 'test', nested: { a: [{ b: 1 }] } },
  })
  lines = []
  for await (const line of exportSessions(source, { sessionIds: [sessionId] })) lines.push(line)
})

async function counts(store: PostgresStore): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|', (select count(*) from turnlog.events), (select count(*) from turnlog.sessions),
                          (select count(*) from turnlog.live_messages)) as s`.execute(store.db)
  return rows[0]?.s ?? ''
}

const DEEP = '\u0001deep\u0001'

/** JSON text of `nest(levels)`, built without JSON.stringify (which overflows the stack on it). */
function nestText(levels: number): string {
  return '{"a":'.repeat(levels) + '"leaf"' + '}'.repeat(levels)
}

/**
 * The file with line `index` (0-based) changed by `edit` (a parsed record); the value {@link DEEP} put
 * anywhere by `edit` becomes `levels` levels of nesting.
 */
function edited(index: number, edit: (record: Record<string, unknown>) => void, levels = 0): string[] {
  return lines.map((text, i) => {
    if (i !== index) return text
    const record = JSON.parse(text) as Record<string, unknown>
    edit(record)
    return JSON.stringify(record).replace(JSON.stringify(DEEP), nestText(levels))
  })
}

const kindOf = (i: number): string => (JSON.parse(lines[i] as string) as { kind?: string; type?: string }).kind ?? ''
const typeOf = (i: number): string => (JSON.parse(lines[i] as string) as { type?: string }).type ?? ''

describe('importEvents and JSON nesting', () => {
  it.each([5_000, 100_000])(
    'refuses session metadata nested %i levels with IMPORT_FAILED naming the line, and writes nothing (incident)',
    async (levels) => {
      // given
      const sessionLine = lines.findIndex((_, i) => kindOf(i) === 'session')
      const file = edited(sessionLine, (r) => (r['metadata'] = DEEP), levels)
      const before = await counts(target)

      // when
      const e = await caught(importEvents(target, file))

      // then
      expect(isTurnlogError(e, 'IMPORT_FAILED')).toBe(true)
      expect((e as Error).message).toMatch(new RegExp(`^line ${sessionLine + 1}: .*deeper than`))
      expect(await counts(target)).toBe(before)
    },
  )

  it.each([5_000, 100_000])('refuses event data and payloads nested %i levels with IMPORT_FAILED, and writes nothing', async (levels) => {
    // given
    const compacted = lines.findIndex((_, i) => typeOf(i) === 'messages_compacted')
    const appended = lines.findIndex((_, i) => typeOf(i) === 'message_appended')
    const before = await counts(target)

    // when
    const inData = await caught(
      importEvents(
        target,
        edited(compacted, (r) => ((r['data'] as Record<string, unknown>)['metadata'] = DEEP), levels),
      ),
    )
    const inPayload = await caught(
      importEvents(
        target,
        edited(appended, (r) => ((r['payload'] as Record<string, unknown>)['extra'] = DEEP), levels),
      ),
    )

    // then
    for (const e of [inData, inPayload])
      expect([isTurnlogError(e, 'IMPORT_FAILED'), (e as Error).message]).toEqual([true, expect.stringMatching(/deeper than/)])
    expect(await counts(target)).toBe(before)
  })

  it('refuses a payload one level deeper than the limit, or one its format refuses, naming the line, and writes nothing', async () => {
    // given: a payload of MAX_JSON_DEPTH + 1 levels (the line itself is within its own limit), and a
    // payload that is not a chat message; the payload is checked without a copy (the file's parsed value)
    const appended = lines.findIndex((_, i) => typeOf(i) === 'message_appended')
    const before = await counts(target)

    // when
    const tooDeep = await caught(
      importEvents(
        target,
        edited(appended, (r) => ((r['payload'] as Record<string, unknown>)['extra'] = DEEP), MAX_JSON_DEPTH),
      ),
    )
    const notChat = await caught(
      importEvents(
        target,
        edited(appended, (r) => ((r['payload'] as Record<string, unknown>)['role'] = 'nobody')),
      ),
    )

    // then
    expect([isTurnlogError(tooDeep, 'IMPORT_FAILED'), (tooDeep as Error).message]).toEqual([
      true,
      expect.stringMatching(new RegExp(`^line ${appended + 1}: payload: .*deeper than ${MAX_JSON_DEPTH}`)),
    ])
    expect([isTurnlogError(notChat, 'IMPORT_FAILED'), (notChat as Error).message]).toEqual([
      true,
      expect.stringMatching(new RegExp(`^line ${appended + 1}: payload: invalid chat message at role`)),
    ])
    expect(await counts(target)).toBe(before)
  })

  it('imports the file as exported (the limits leave room for everything the store writes)', async () => {
    // given: metadata nested to the limit, in the session and in a compaction
    const store = await openStore({ connectionString: sourceDb.connectionString })
    try {
      const sessionId = await store.createSession({ metadata: nest(MAX_JSON_DEPTH - 1) as never })
      const q = createMessage({ role: 'user', content: 'q', deep: nest(MAX_JSON_DEPTH - 2) })
      await store.append(sessionId, [q])
      await store.compact(sessionId, {
        covered: [q.id],
        summary: [createMessage({ role: 'system', content: 's' })],
        metadata: nest(MAX_JSON_DEPTH - 1) as never,
      })
      const file: string[] = []
      for await (const line of exportSessions(store, { sessionIds: [sessionId] })) file.push(line)

      // when
      const result = await importEvents(target, file)

      // then
      expect(result.eventsWritten).toBe(3)
    } finally {
      await store.close()
    }
  })

  it('answers nesting anywhere in any line with IMPORT_FAILED or an exact import, never DB_ERROR or a RangeError (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: lines.length - 2 }),
        fc.constantFrom('metadata', 'data', 'payload', 'top'),
        fc.oneof(fc.integer({ min: 1, max: MAX_JSON_DEPTH + 4 }), fc.integer({ min: MAX_JSON_DEPTH + 5, max: 20_000 })),
        async (index, where, levels) => {
          // given: a fresh target per run (one session: a refusal must leave it empty)
          const db = await createTestDatabase()
          const store = await openStore({ connectionString: db.connectionString })
          try {
            const file = edited(
              index,
              (r) => {
                const slot = where === 'top' ? r : where === 'metadata' ? r : (r[where] as Record<string, unknown> | null)
                const key = where === 'metadata' ? 'metadata' : 'extra'
                if (slot !== null && typeof slot === 'object') slot[key] = DEEP
              },
              levels,
            )

            // when
            const e = await caught(importEvents(store, file))

            // then
            if (e === undefined) {
              expect(await counts(store)).not.toBe('0|0|0')
            } else {
              expect([isTurnlogError(e) ? e.code : String(e)]).toEqual([
                expect.stringMatching(/^(IMPORT_FAILED|SESSION_EXISTS|MESSAGE_CONFLICT)$/),
              ])
              expect(await counts(store)).toBe('0|0|0')
            }
          } finally {
            await store.close()
            await db.drop()
          }
        },
      ),
      { numRuns: 25 },
    )
  })
})

describe('the other audit entry points that take JSON', () => {
  it.each([5_000, 100_000])(
    'answer %i levels with a typed error: audit transcripts, importTranscript lines and metadata',
    async (levels) => {
      // given
      const sessionId = await target.createSession()
      const deepText = `{"role":"user","content":"x","deep":${nestText(levels)}}`
      const before = await counts(target)

      // when
      const errors = {
        auditTranscriptText: await caught(audit(target, sessionId, { transcript: [deepText] })),
        auditTranscriptObject: await caught(audit(target, sessionId, { transcript: [{ role: 'user', content: 'x', deep: nest(levels) }] })),
        importTranscriptLine: await caught(importTranscript(target, [deepText])),
        importTranscriptMetadata: await caught(
          importTranscript(target, ['{"role":"user","content":"x"}'], { metadata: nest(levels) as never }),
        ),
      }

      // then
      for (const [entry, e] of Object.entries(errors)) {
        expect([entry, isTurnlogError(e) && ['INVALID_INPUT', 'INVALID_MESSAGE', 'IMPORT_FAILED'].includes(e.code)]).toEqual([entry, true])
      }
      expect(await counts(target)).toBe(before)
    },
  )
})

describe('importers and maxBatchBytes', () => {
  it('imports a transcript larger than one batch in one transaction, and nothing of it when its last message conflicts', async () => {
    // given: ten messages of ~600 code units, a 2,000 limit
    const small = await openStore({ connectionString: targetDb.connectionString, maxBatchBytes: 2000 })
    try {
      const messages: Message[] = Array.from({ length: 10 }, (_, i) =>
        createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}${'t'.repeat(600)}` }),
      )
      const file = messages.map((m) => serializeMessage(m))
      const sessionId = await small.createSession()
      const before = await counts(small)

      // when: first with the last message stored elsewhere with other content, then as it is
      const other = await small.createSession()
      const last = messages[9] as Message
      await small.append(other, [createMessage({ role: 'user', content: 'other' }, { id: last.id })])
      const conflicted = await caught(importTranscript(small, file, { sessionId }))
      const afterConflict = await small.getSession(sessionId)
      const target2 = await small.createSession()
      const ok = await importTranscript(small, file.slice(0, 9), { sessionId: target2 })

      // then
      expect(isTurnlogError(conflicted, 'MESSAGE_CONFLICT')).toBe(true)
      expect(afterConflict.version).toBe(0)
      expect(ok).toMatchObject({ appended: 9, duplicates: 0, version: 9 })
      expect((await small.load(target2)).messages.map((m) => m.id)).toEqual(messages.slice(0, 9).map((m) => m.id))
      expect(before).not.toBe('')
    } finally {
      await small.close()
    }
  })
})
