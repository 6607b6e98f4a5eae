/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not one of the config's is refused at construction,
 * naming it. Before, `new TurnlogCheckpointSaver({ store, tenantID: 'acme' })` created every thread's
 * sessions under no tenant, `{ deleteThreads: 'redact' }` left deleted threads' content readable, and
 * `new TurnlogChatMessageHistory({ store, sessionID })` failed only at its first call.
 */
import { describe, expect, it } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import { refusal, useTestStore } from '@turnlog/testing'
import { TurnlogChatMessageHistory, TurnlogCheckpointSaver } from '@turnlog/langgraph'

let store: PostgresStore
useTestStore((t) => ({ store } = t))

type Row = readonly [name: string, construct: () => unknown, field: string, suggestion: string | undefined]

describe('the langgraph classes refuse a key that is not one of their config, at once', () => {
  it('names the key', async () => {
    const session = await store.createSession()
    const rows: Row[] = [
      ['saver tenantId', () => new TurnlogCheckpointSaver({ store, tenantID: 'acme' } as never), 'config.tenantID', 'tenantId'],
      [
        'saver deleteThread',
        () => new TurnlogCheckpointSaver({ store, deleteThreads: 'redact' } as never),
        'config.deleteThreads',
        'deleteThread',
      ],
      ['saver (no option near)', () => new TurnlogCheckpointSaver({ store, checkpointNs: 'x' } as never), 'config.checkpointNs', undefined],
      ['history sessionId', () => new TurnlogChatMessageHistory({ store, sessionID: session } as never), 'config.sessionID', 'sessionId'],
      ['history config', () => new TurnlogChatMessageHistory(null as never), 'config', undefined],
    ]

    const outcomes: unknown[] = []
    for (const [name, construct] of rows) outcomes.push([name, await refusal(construct)])

    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    // while the keys spelt right (and a key given undefined) construct
    expect(await refusal(() => new TurnlogCheckpointSaver({ store, tenantId: 'acme', tenantID: undefined } as never))).toBeUndefined()
    expect(await refusal(() => new TurnlogChatMessageHistory({ store, sessionId: session }))).toBeUndefined()
  })
})
