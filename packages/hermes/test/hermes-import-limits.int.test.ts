/**
 * A hermes session larger than one batch (`maxBatchBytes`) must still import: the importer splits a run
 * of rows into several appends, each idempotent. (Moved with the importer from the audit package's
 * import-limits tests.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { importHermes } from '@turnlog/hermes'
import { HermesFixture } from './hermes-fixture.js'

let targetDb: TestDatabase

beforeAll(async () => {
  targetDb = await createTestDatabase()
})

afterAll(async () => {
  await targetDb?.drop()
})

describe('hermes import limits', () => {
  it('imports a hermes session larger than one batch', async () => {
    // given
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-limits-'))
    const small = await openStore({ connectionString: targetDb.connectionString, maxBatchBytes: 2000 })
    try {
      const path = join(dir, 'state.db')
      const fixture = new HermesFixture(path).session('big')
      for (let i = 0; i < 12; i++) fixture.add('big', { role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}${'h'.repeat(600)}` })
      fixture.close()

      // when
      const result = await importHermes(small, path)

      // then
      expect(result.sessions[0]).toMatchObject({ appended: 12, liveMatches: true })
    } finally {
      await small.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
