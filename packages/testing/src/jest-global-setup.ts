/**
 * Jest global setup: resolves the test server once per run and hands its admin URL to the test workers
 * through `TURNLOG_TEST_ADMIN_URL` (workers are forked after this runs and inherit `process.env`).
 * @packageDocumentation
 */
import { createRequire } from 'node:module'
import type * as ServerModule from './resolve-test-server.js'

/** Where the teardown finds the server to stop; Jest shares `globalThis` between setup and teardown. */
const SERVER_KEY = Symbol.for('turnlog.testing.server')

/** Resolves the server (see `resolveTestServer`) and exports `TURNLOG_TEST_ADMIN_URL`. */
export default async function setup(): Promise<void> {
  // Jest loads this file with plain Node plus a ts-jest require hook, not through its module map, so a
  // `./resolve-test-server.js` import would not find the `.ts` source: require the source itself.
  const { resolveTestServer, TEST_ADMIN_URL_ENV } = createRequire(import.meta.url)('./resolve-test-server.ts') as typeof ServerModule
  const started = Date.now()
  const server = await resolveTestServer()
  Object.assign(globalThis, { [SERVER_KEY]: server })
  process.env[TEST_ADMIN_URL_ENV] = server.adminUrl
  const elapsed = ((Date.now() - started) / 1000).toFixed(1)
  console.log(`\n[turnlog] test server: ${server.source} ${redact(server.adminUrl)} (resolved in ${elapsed} s)`)
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}
