/**
 * Regression (adversarial review): the importers checked a timestamp (a session's `createdAt` /
 * `updatedAt`, an event's `recordedAt`) by its shape and `Date.parse`, which reads `2024-02-30` as
 * March 1 and `T24:00:00` as the next day: such a file was accepted and its dates stored as other
 * dates. Both readers, the file importer (`importEvents`) and the store's `importSessions`, now refuse a
 * date or time that does not exist with IMPORT_FAILED naming the line and the field, and write nothing.
 * Regression: a message event's `data.createdAt` (the message's own creation time, which load returns)
 * was not checked at all: `2024-02-30T00:00:00Z`, or no date, was imported and loaded back as it was.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import {
  GENESIS_HASH,
  contentHash,
  createMessage,
  eventChainHash,
  isTurnlogError,
  type ChatMessage,
  type ImportedEvent,
  type ImportedSession,
  type JsonValue,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { caught, useTwoTestStores } from '@turnlog/testing'
import { exportSessions, importEvents } from '@turnlog/audit'

let source: PostgresStore
let target: PostgresStore
/** The export of one session of two messages. */
let lines: string[]

useTwoTestStores((t) => ({ source, target } = { source: t.source.store, target: t.target.store }))

beforeAll(async () => {
  const sessionId = await source.createSession()
  await source.append(sessionId, [createMessage({ role: 'user', content: 'q' }), createMessage({ role: 'assistant', content: 'a' })])
  lines = []
  for await (const line of exportSessions(source, { sessionIds: [sessionId] })) lines.push(line)
})

async function stored(store: PostgresStore): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|', (select count(*) from turnlog.events), (select count(*) from turnlog.sessions)) as s`.execute(store.db)
  return rows[0]?.s ?? ''
}

/** `file` with the chain link (`hash`) of every event line computed again over the line as it is. */
function relinked(file: readonly string[]): string[] {
  let prev = GENESIS_HASH
  return file.map((l) => {
    const record = JSON.parse(l) as Record<string, unknown> & { kind?: string; seq?: number }
    if (record.kind !== 'event') return l
    if (record.seq === 1) prev = GENESIS_HASH
    prev = eventChainHash(prev, record as unknown as Parameters<typeof eventChainHash>[1])
    return JSON.stringify({ ...record, hash: prev })
  })
}

/** The export with `field` of the first line of kind `kind` set to `value`, and that line's number (1-based). */
function withField(kind: 'session' | 'event', field: string, value: string): { file: string[]; line: number } {
  const index = lines.findIndex((l) => (JSON.parse(l) as { kind?: string }).kind === kind)
  const record = JSON.parse(lines[index] as string) as Record<string, unknown>
  expect(typeof record[field]).toBe('string')
  record[field] = value
  return { file: lines.map((l, i) => (i === index ? JSON.stringify(record) : l)), line: index + 1 }
}

describe('importers refuse a timestamp that is no real date and time', () => {
  it.each([
    ['session', 'createdAt', '2024-02-30T00:00:00Z'],
    ['session', 'updatedAt', '2024-01-01T24:00:00Z'],
    ['event', 'recordedAt', '2023-02-29T12:00:00.123456Z'],
  ] as const)('importEvents: %s line whose %s is %s', async (kind, field, value) => {
    // given
    const { file, line } = withField(kind, field, value)

    // when
    const error = await caught(importEvents(target, file))

    // then
    expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({ line, field })
    expect(await stored(target)).toBe('0|0')
  })

  it('(the links relinked computes are the export’s own: an edited file below differs only by its date)', () => {
    expect(relinked(lines).map((l) => (JSON.parse(l) as { hash?: unknown }).hash)).toEqual(
      lines.map((l) => (JSON.parse(l) as { hash?: unknown }).hash),
    )
  })

  it.each([
    ['2024-02-30T00:00:00Z', 'a day February does not have'],
    ['2024-01-01T00:00:60Z', 'second 60'],
    ['yesterday', 'no timestamp'],
    [undefined, 'absent'],
  ])('importEvents: a message event whose data.createdAt is %s (%s)', async (value, _what) => {
    // given: the second event of the file (the assistant reply) with its envelope's createdAt edited and
    // the chain links written again, so the date is the file's only fault
    const index = lines.findIndex((l) => {
      const r = JSON.parse(l) as { kind?: string; seq?: number }
      return r.kind === 'event' && r.seq === 2
    })
    const record = JSON.parse(lines[index] as string) as { seq: number; data: Record<string, unknown> }
    expect(typeof record.data['createdAt']).toBe('string')
    const data = { ...record.data }
    if (value === undefined) delete data['createdAt']
    else data['createdAt'] = value
    const file = relinked(lines.map((l, i) => (i === index ? JSON.stringify({ ...record, data }) : l)))

    // when
    const error = await caught(importEvents(target, file))

    // then: refused naming the line and the field; nothing of the session written
    expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({ line: index + 1, seq: 2, field: 'data.createdAt' })
    expect(await stored(target)).toBe('0|0')
  })

  it('importSessions: a message_revised event whose data.createdAt is 2023-02-29T00:00:00Z', async () => {
    // given: a session appending a message and revising it, its revision's envelope dated a day 2023 does not have
    const sessionId = randomUUID()
    const messageId = randomUUID()
    const at = '2025-01-01T00:00:00.000Z'
    const first: ChatMessage = { role: 'user', content: 'q' }
    const second: ChatMessage = { role: 'user', content: 'q, edited' }
    const specs = [
      { type: 'message_appended', payload: first, data: { createdAt: at } },
      { type: 'message_revised', payload: second, data: { createdAt: '2023-02-29T00:00:00Z', revision: 1 } },
    ]
    let prev = GENESIS_HASH
    const events: ImportedEvent[] = specs.map((spec, i) => {
      const event = {
        seq: i + 1,
        eventId: randomUUID(),
        type: spec.type,
        messageId,
        contentHash: contentHash(spec.payload),
        payload: spec.payload as unknown as JsonValue,
        data: spec.data,
        recordedAt: at,
      }
      // the link the store computes: a file whose only fault is the date
      prev = eventChainHash(prev, { ...event, sessionId })
      return { ...event, hash: prev, line: 12 + i }
    })
    const session: ImportedSession = {
      id: sessionId,
      tenantId: null,
      metadata: null,
      createdAt: at,
      updatedAt: at,
      parent: null,
      events,
      line: 11,
    }

    // when
    const error = await caught(target.importSessions([session]))

    // then
    expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({ line: 13, seq: 2, field: 'data.createdAt' })
    expect(await stored(target)).toBe('0|0')
  })

  it.each([
    ['createdAt', '2024-04-31T00:00:00Z'],
    ['updatedAt', '2024-13-01T00:00:00Z'],
  ])('importSessions: a session whose %s is %s', async (field, value) => {
    // given
    const at = '2025-01-01T00:00:00.000Z'
    const session = { id: randomUUID(), tenantId: null, metadata: null, createdAt: at, updatedAt: at, parent: null, events: [], line: 7 }

    // when
    const error = await caught(target.importSessions([{ ...session, [field]: value }]))

    // then
    expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({ line: 7, field })
    expect(await stored(target)).toBe('0|0')
  })
})
