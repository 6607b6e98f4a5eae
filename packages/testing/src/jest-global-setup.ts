/**
 * Jest global setup: resolves the test server once per run and hands its admin URL to the test workers
 * through `TURNLOG_TEST_ADMIN_URL` (workers are forked after this runs and inherit `process.env`).
 * @packageDocumentation
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type * as ServerModule from './resolve-test-server.js'

/** Where the teardown finds the server to stop; Jest shares `globalThis` between setup and teardown. */
const SERVER_KEY = Symbol.for('turnlog.testing.server')

/** Where the teardown finds the PGlite template directory to remove. */
const TEMPLATE_KEY = Symbol.for('turnlog.testing.pgliteTemplateDir')

/** Where the teardown finds the name of the migrated template database to drop. */
const PG_TEMPLATE_KEY = Symbol.for('turnlog.testing.pgTemplateDb')

/**
 * Resolves the server (see `resolveTestServer`) and exports `TURNLOG_TEST_ADMIN_URL`; names the run's
 * migrated template database (see `createTestDatabase`'s `migrated`), made by the first worker that needs
 * it, and exports `TURNLOG_TEST_PG_TEMPLATE_DB` (not with `TURNLOG_TEST_PG_TEMPLATE=off`); makes the run's
 * directory for the migrated PGlite template (see `openTestStore`) and exports
 * `TURNLOG_TEST_PGLITE_TEMPLATE_DIR` (not with `TURNLOG_TEST_PGLITE_TEMPLATE=off`).
 */
export default async function setup(): Promise<void> {
  // Jest loads this file with plain Node plus a ts-jest require hook, not through its module map, so a
  // `./resolve-test-server.js` import would not find the `.ts` source: require the source itself.
  const { resolveTestServer, TEST_ADMIN_URL_ENV } = createRequire(import.meta.url)('./resolve-test-server.ts') as typeof ServerModule
  const started = Date.now()
  const server = await resolveTestServer()
  Object.assign(globalThis, { [SERVER_KEY]: server })
  process.env[TEST_ADMIN_URL_ENV] = server.adminUrl
  // PG_TEMPLATE_ENV of create-test-database.ts (not importable here: it imports the store's sources).
  // TURNLOG_TEST_PG_TEMPLATE=off: every database createTestDatabase({ migrated: true }) makes is migrated by opening a store
  if (process.env['TURNLOG_TEST_PG_TEMPLATE'] !== 'off') {
    const templateDb = `turnlog_template_${randomBytes(6).toString('hex')}`
    Object.assign(globalThis, { [PG_TEMPLATE_KEY]: templateDb })
    process.env['TURNLOG_TEST_PG_TEMPLATE_DB'] = templateDb
  } else delete process.env['TURNLOG_TEST_PG_TEMPLATE_DB']
  // TURNLOG_TEST_PGLITE_TEMPLATE=off: every PGlite store opens as `openStore({ embedded: true })` does
  if (process.env['TURNLOG_TEST_PGLITE_TEMPLATE'] !== 'off') {
    const templateDir = mkdtempSync(join(tmpdir(), 'turnlog-test-pglite-'))
    Object.assign(globalThis, { [TEMPLATE_KEY]: templateDir })
    // PGLITE_TEMPLATE_DIR_ENV of open-test-store.ts (not importable here: it imports @jest/globals)
    process.env['TURNLOG_TEST_PGLITE_TEMPLATE_DIR'] = templateDir
  } else delete process.env['TURNLOG_TEST_PGLITE_TEMPLATE_DIR']
  const elapsed = ((Date.now() - started) / 1000).toFixed(1)
  console.log(`\n[turnlog] test server: ${server.source} ${redact(server.adminUrl)} (resolved in ${elapsed} s)`)
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}
