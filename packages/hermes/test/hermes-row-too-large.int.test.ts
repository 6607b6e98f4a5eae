/**
 * A hermes row larger than the store's `maxMessageBytes` (a tool that printed a 20 MB file; 16 MiB of
 * JSON by default): "result.warnings ... reported, never thrown" (packages/hermes/README.md). The store's
 * `MESSAGE_TOO_LARGE` used to escape `importHermes`, naming neither the hermes session nor the row, and the
 * sessions after it were not imported. Now: the warning `row_too_large` names the row, the session is
 * imported up to the row before it, the next sessions import, and an import into a store with a larger
 * limit finishes the session in hermes' order.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { hermesSessionId, importHermes } from '@turnlog/hermes'
import { HermesFixture } from './hermes-fixture.js'

let targetDb: TestDatabase
let dir: string

beforeAll(async () => {
  targetDb = await createTestDatabase({ migrated: true })
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-too-large-'))
})

afterAll(async () => {
  await targetDb?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('hermes import of a row over maxMessageBytes', () => {
  it('warns row_too_large naming the row, imports the session up to it and the next sessions; a larger limit finishes it', async () => {
    // given a session whose third row is larger than the store's limit, and a session after it
    const path = join(dir, 'state.db')
    const fixture = new HermesFixture(path).session('big').session('next')
    const before = [
      fixture.add('big', { role: 'user', content: 'cat the log' }),
      fixture.add('big', { role: 'assistant', content: 'reading it' }),
    ]
    const huge = fixture.add('big', { role: 'user', content: 'y'.repeat(5000) })
    const after = fixture.add('big', { role: 'assistant', content: 'that was long' })
    fixture.add('next', { role: 'user', content: 'hello' })
    fixture.close()
    const small = await openStore({ connectionString: targetDb.connectionString, migrate: false, maxMessageBytes: 2000 })
    const large = await openStore({ connectionString: targetDb.connectionString, migrate: false })
    try {
      // when
      const first = await importHermes(small, path)

      // then: reported, not thrown; the rows before it written, the next session imported
      const big = first.sessions.find((s) => s.hermesSessionId === 'big')
      const next = first.sessions.find((s) => s.hermesSessionId === 'next')
      expect(first.warnings).toContainEqual(expect.objectContaining({ code: 'row_too_large', hermesSessionId: 'big', rowIds: [huge] }))
      expect(big).toMatchObject({ appended: 2, liveMatches: false })
      expect(next).toMatchObject({ appended: 1, liveMatches: true })
      const partial = await small.load(hermesSessionId('big'))
      expect(partial.messages.map((m) => m.externalId)).toEqual(before.map((r) => `hermes:big:${r}`))

      // when the limit is raised
      const second = await importHermes(large, path)

      // then the session is finished in hermes' order
      expect(second.warnings.map((w) => w.code)).not.toContain('row_too_large')
      expect(second.sessions.find((s) => s.hermesSessionId === 'big')).toMatchObject({ appended: 2, liveMatches: true })
      const whole = await large.load(hermesSessionId('big'))
      expect(whole.messages.map((m) => m.externalId)).toEqual([...before, huge, after].map((r) => `hermes:big:${r}`))
    } finally {
      await small.close()
      await large.close()
    }
  })
})
