/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not an option of the call is refused, naming it, and
 * nothing is written. Before, `importHermes(store, path, { sesions: ['s-1'] })` imported every session
 * of the file, and `{ tenantID: 'acme' }` imported them under no tenant. Each row gives one call a
 * misspelt key, everything else valid: `INVALID_INPUT` with `details.field` naming the key and the near
 * option in `details.suggestion`, and the store as empty as before.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PostgresStore } from '@turnlog/postgres'
import { refusal, useTestStore } from '@turnlog/testing'
import { importHermes, planHermesSession } from '@turnlog/hermes'
import { HermesFixture } from './hermes-fixture.js'

let store: PostgresStore
let dir: string
let statePath: string
useTestStore((t) => ({ store } = t))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-keys-'))
  statePath = join(dir, 'state.db')
  const f = new HermesFixture(statePath)
  f.session('s-1')
  f.add('s-1', { role: 'user', content: 'hi' })
  f.session('s-2')
  f.add('s-2', { role: 'user', content: 'hello' })
  f.close()
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

type Row = readonly [name: string, call: () => unknown, field: string, suggestion: string | undefined]

describe('hermes refuses a key that is not an option, nothing written', () => {
  it('names the key and imports nothing', async () => {
    // given a state.db of two sessions and an empty store
    const rows: Row[] = [
      ['importHermes sessions', () => importHermes(store, statePath, { sesions: ['s-1'] } as never), 'options.sesions', 'sessions'],
      ['importHermes tenantId', () => importHermes(store, statePath, { tenantID: 'acme' } as never), 'options.tenantID', 'tenantId'],
      ['importHermes (no option near)', () => importHermes(store, statePath, { dryRun: true } as never), 'options.dryRun', undefined],
      ['planHermesSession', () => planHermesSession([], { mapCopis: false } as never), 'options.mapCopis', 'mapCopies'],
    ]

    // when each is called
    const outcomes: unknown[] = []
    for (const [name, call] of rows) outcomes.push([name, await refusal(call)])

    // then each is refused naming its key, and nothing was imported
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    expect((await store.sessions()).sessions).toEqual([])

    // while the option spelt right imports the one session it names (a key given undefined is absent)
    const result = await importHermes(store, statePath, { sessions: ['s-1'], tenantId: undefined, dryRun: undefined } as never)
    expect(result.sessions.map((s) => s.hermesSessionId)).toEqual(['s-1'])
  })
})
