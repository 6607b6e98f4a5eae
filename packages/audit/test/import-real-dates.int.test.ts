/**
 * Regression (adversarial review): the importers checked a timestamp (a session's `createdAt` /
 * `updatedAt`, an event's `recordedAt`) by its shape and `Date.parse`, which reads `2024-02-30` as
 * March 1 and `T24:00:00` as the next day: such a file was accepted and its dates stored as other
 * dates. Both readers, the file importer (`importEvents`) and the store's `importSessions`, now refuse a
 * date or time that does not exist with IMPORT_FAILED naming the line and the field, and write nothing.
 */
import { beforeAll, describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { createMessage, isTurnlogError } from '@turnlog/core'
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
