import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'
import { resolveDatabase, redactUrl } from '../src/resolve-database.js'

const URL_A = 'postgresql://a:pw@host-a/db'
const URL_B = 'postgres://b@host-b/db'

describe('resolveDatabase', () => {
  it('takes --database-url, then --data-dir, then TURNLOG_DATABASE_URL, then DATABASE_URL, then ./.turnlog/', () => {
    // given
    const env = { TURNLOG_DATABASE_URL: URL_A, DATABASE_URL: URL_B }
    // when / then
    expect(resolveDatabase({ databaseUrl: URL_B }, env, '/w')).toMatchObject({
      kind: 'postgres',
      connectionString: URL_B,
      source: '--database-url',
    })
    expect(resolveDatabase({ dataDir: 'db' }, env, '/w')).toMatchObject({
      kind: 'embedded',
      dataDir: join('/w', 'db'),
      source: '--data-dir',
    })
    expect(resolveDatabase({}, env, '/w')).toMatchObject({ kind: 'postgres', connectionString: URL_A, source: 'TURNLOG_DATABASE_URL' })
    expect(resolveDatabase({}, { DATABASE_URL: URL_B, TURNLOG_DATABASE_URL: '' }, '/w')).toMatchObject({ source: 'DATABASE_URL' })
    expect(resolveDatabase({}, {}, '/w')).toMatchObject({ kind: 'embedded', dataDir: join('/w', '.turnlog'), source: 'default' })
  })

  it('refuses both --database-url and --data-dir, and a URL that is not Postgres, as usage errors', () => {
    // when
    const both = (): unknown => resolveDatabase({ databaseUrl: URL_A, dataDir: 'x' }, {}, '/w')
    const mysql = (): unknown => resolveDatabase({}, { DATABASE_URL: 'mysql://u:secret@h/db' }, '/w')
    // then
    expect(both).toThrow(expect.objectContaining({ code: 'USAGE', exitCode: 2 }))
    expect(mysql).toThrow(/DATABASE_URL must be a postgres/)
    expect(mysql).not.toThrow(/secret/)
  })

  it('never prints a password', () => {
    expect(redactUrl(URL_A)).toBe('postgresql://a:***@host-a/db')
    expect(resolveDatabase({ databaseUrl: URL_A }, {}, '/w').where).not.toContain('pw')
  })
})
