/**
 * Jest global teardown: drops the run's migrated template database, stops the private cluster the global
 * setup may have started. Jest runs it even when tests fail; if Jest itself dies, the cluster's watchdog
 * cleans up instead (on a shared server the template database is then left behind).
 * @packageDocumentation
 */
import { rmSync } from 'node:fs'
import pg from 'pg'
import type { TestServer } from './resolve-test-server.js'

/**
 * Drops the migrated template database named by the global setup (and the `_partial` one a worker that died
 * while making it left), stops the server stored by the global setup (a no-op unless it is a private
 * cluster); removes the PGlite template directory.
 */
export default async function teardown(): Promise<void> {
  const templateKey = Symbol.for('turnlog.testing.pgliteTemplateDir') // as in jest-global-setup.ts
  const templateDir = (globalThis as Record<symbol, string | undefined>)[templateKey]
  if (templateDir !== undefined) rmSync(templateDir, { recursive: true, force: true })
  const key = Symbol.for('turnlog.testing.server') // the same key as in jest-global-setup.ts
  const server = (globalThis as Record<symbol, TestServer | undefined>)[key]
  delete (globalThis as Record<symbol, unknown>)[key]
  const pgTemplateKey = Symbol.for('turnlog.testing.pgTemplateDb') // as in jest-global-setup.ts
  const pgTemplate = (globalThis as Record<symbol, string | undefined>)[pgTemplateKey]
  delete (globalThis as Record<symbol, unknown>)[pgTemplateKey]
  try {
    if (server !== undefined && pgTemplate !== undefined) {
      const admin = new pg.Client({ connectionString: server.adminUrl, connectionTimeoutMillis: 10_000 })
      admin.on('error', () => {}) // errors surface through the awaited calls
      try {
        await admin.connect()
        for (const db of [pgTemplate, `${pgTemplate}_partial`]) {
          // the template allows no connections; a partial one may hold a failed migration's sessions
          await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db])
          await admin.query(`DROP DATABASE IF EXISTS "${db}"`)
        }
      } finally {
        await admin.end().catch(() => {})
      }
    }
  } finally {
    await server?.stop()
  }
}
