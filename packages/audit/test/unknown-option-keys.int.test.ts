/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not an option of the call is refused, naming it, and
 * nothing is written. Before, audit's entry points read their options for the keys they knew and
 * ignored the rest: `exportSessions(store, { all: true, tenantID: 'acme' })` exported every tenant's
 * sessions, `importTranscript(store, lines, { sesionId })` imported into a new derived session, and
 * `audit(store, id, { chekcs: ['chain'] })` ran every check. Each row gives one call a misspelt (or
 * misplaced) key, everything else valid: the call must throw `INVALID_INPUT` with `details.field`
 * naming the key (and the near option in `details.suggestion`), and the target database must hold
 * exactly what it held before.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { refusal, useTwoTestStores } from '@turnlog/testing'
import { audit, exportSessions, importEvents, importTranscript } from '@turnlog/audit'
import { sql } from 'kysely'

let source: PostgresStore
let target: PostgresStore
useTwoTestStores((t) => ({ source, target } = { source: t.source.store, target: t.target.store }))

/** Everything a refused call could have written. */
async function snapshot(store: PostgresStore): Promise<unknown> {
  const { rows } = await sql<Record<string, string>>`
    select (select count(*) from turnlog.events)::text as events,
           (select count(*) from turnlog.sessions)::text as sessions`.execute(store.db)
  return rows[0]
}

/** All lines of an export (the first `next()` is where its checks run). */
async function lines(generator: AsyncGenerator<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of generator) out.push(line)
  return out
}

type Row = readonly [name: string, call: () => unknown, field: string, suggestion: string | undefined]

describe('audit, export and import refuse a key that is not an option, nothing written', () => {
  it('names the key and writes nothing', async () => {
    // given a session of tenant acme in the source, its export, and the target as it is
    const session: SessionId = await source.createSession({ tenantId: 'acme' })
    await source.append(session, [createMessage({ role: 'user', content: 'hi' })])
    const exported = await lines(exportSessions(source, { sessionIds: [session] }))
    const transcript = [JSON.stringify({ role: 'user', content: 'hello' })]
    const before = { source: await snapshot(source), target: await snapshot(target) }
    const onProgress = (): void => undefined
    const rows: Row[] = [
      ['audit options', () => audit(source, session, { chekcs: ['chain'] } as never), 'options.chekcs', 'checks'],
      ['audit { all: true } target', () => audit(source, { all: true, tenantId: 'acme' } as never), 'target.tenantId', undefined],
      ['exportSessions options', () => lines(exportSessions(source, { all: true }, { verfy: false } as never)), 'options.verfy', 'verify'],
      [
        'exportSessions { all: true } selection',
        () => lines(exportSessions(source, { all: true, tenantID: 'acme' } as never)),
        'selection.tenantID',
        'tenantId',
      ],
      [
        'exportSessions { sessionIds } selection',
        () => lines(exportSessions(source, { sessionIds: [session], tenantId: 'acme' } as never)),
        'selection.tenantId',
        undefined,
      ],
      ['importEvents options', () => importEvents(target, exported, { onProgres: onProgress } as never), 'options.onProgres', 'onProgress'],
      [
        'importTranscript options',
        () => importTranscript(target, transcript, { sesionId: session } as never),
        'options.sesionId',
        'sessionId',
      ],
    ]

    // when each is called, then each is refused naming its key
    const outcomes: unknown[] = []
    for (const [name, call] of rows) outcomes.push([name, await refusal(call)])
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    // and nothing was written
    expect({ source: await snapshot(source), target: await snapshot(target) }).toEqual(before)

    // while the same calls with the keys spelt right do their work (the rows were valid but for the key)
    await importEvents(target, exported, { onProgress })
    await importTranscript(target, transcript, { sessionId: session, tenantId: 'acme' })
    expect((await target.load(session)).messages.map((m) => m.payload.content)).toEqual(['hi', 'hello'])
    expect((await audit(source, session, { checks: ['chain'] })).sessionsAudited).toBe(1)
    expect(await lines(exportSessions(source, { all: true, tenantId: 'other' }, { verify: false }))).toHaveLength(2)
  })

  it('names a malformed session id argument where the call got it', async () => {
    const session = await source.createSession()
    const rows: Row[] = [
      ['audit target', () => audit(source, 'not-a-session'), 'target', undefined],
      [
        'exportSessions sessionIds',
        () => lines(exportSessions(source, { sessionIds: [session, 'x'] })),
        'selection.sessionIds[1]',
        undefined,
      ],
      [
        'exportSessions sessionIds not an array',
        () => lines(exportSessions(source, { sessionIds: 'x' } as never)),
        'selection.sessionIds',
        undefined,
      ],
    ]
    const outcomes: unknown[] = []
    for (const [name, call] of rows) outcomes.push([name, await refusal(call)])
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
  })

  it('takes a key whose value is undefined as absent', async () => {
    const session = await source.createSession()
    expect(await refusal(() => audit(source, session, { checks: undefined, chekcs: undefined } as never))).toBeUndefined()
    expect(await refusal(() => lines(exportSessions(source, { sessionIds: [session], tenantId: undefined } as never)))).toBeUndefined()
  })
})
