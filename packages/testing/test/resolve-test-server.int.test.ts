import { describe, expect, it } from '@jest/globals'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { TEST_ADMIN_URL_ENV, TEST_DATABASE_URL_ENV, findPostgresBinDir, resolveTestServer } from '@turnlog/testing'

describe('jest global setup', () => {
  it('hands a working admin URL to the test workers', async () => {
    // given
    const adminUrl = process.env[TEST_ADMIN_URL_ENV]
    expect(adminUrl).toMatch(/^postgres(ql)?:\/\//)
    // when
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      const { rows } = await client.query('SELECT rolsuper OR rolcreatedb AS ok FROM pg_roles WHERE rolname = current_user')
      // then
      expect(rows).toEqual([{ ok: true }])
    } finally {
      await client.end()
    }
  })
})

describe('resolveTestServer', () => {
  it(`uses ${TEST_DATABASE_URL_ENV} first, as given`, async () => {
    // given
    const url = process.env[TEST_ADMIN_URL_ENV] ?? ''
    // when
    const server = await resolveTestServer({ env: { [TEST_DATABASE_URL_ENV]: url } })
    // then
    expect(server).toMatchObject({ source: 'env', adminUrl: url })
    await server.stop()
  })

  it(`fails fast when ${TEST_DATABASE_URL_ENV} points nowhere`, async () => {
    // given: a port nothing listens on
    const env = { [TEST_DATABASE_URL_ENV]: 'postgresql://postgres@127.0.0.1:1/postgres' }
    // when / then
    await expect(resolveTestServer({ env })).rejects.toThrow(`${TEST_DATABASE_URL_ENV} is not usable for tests`)
  })

  it('says how to start a server when it finds none', async () => {
    // given: no binaries to start a private cluster with
    const empty = mkdtempSync(join(tmpdir(), 'turnlog-empty-'))
    try {
      // when / then
      await expect(resolveTestServer({ env: {}, forcePrivateCluster: true, postgresLibDir: empty })).rejects.toThrow(
        /docker compose up -d[\s\S]*TURNLOG_TEST_DATABASE_URL=/,
      )
    } finally {
      rmSync(empty, { recursive: true })
    }
  })
})

describe('findPostgresBinDir', () => {
  it('picks the highest version that has both initdb and pg_ctl', () => {
    // given
    const lib = mkdtempSync(join(tmpdir(), 'turnlog-lib-'))
    const install = (version: string, tools: string[]): void => {
      mkdirSync(join(lib, version, 'bin'), { recursive: true })
      for (const tool of tools) writeFileSync(join(lib, version, 'bin', tool), '')
    }
    install('9.6', ['initdb', 'pg_ctl'])
    install('15', ['initdb', 'pg_ctl'])
    install('17', ['initdb']) // client-only install: no pg_ctl
    mkdirSync(join(lib, 'extras'))
    try {
      // when / then
      expect(findPostgresBinDir(lib)).toBe(join(lib, '15', 'bin'))
      expect(findPostgresBinDir(join(lib, 'missing'))).toBeUndefined()
    } finally {
      rmSync(lib, { recursive: true })
    }
  })
})
