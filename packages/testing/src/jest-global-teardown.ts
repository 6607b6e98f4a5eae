/**
 * Jest global teardown: stops the private cluster the global setup may have started. Jest runs it even
 * when tests fail; if Jest itself dies, the cluster's watchdog cleans up instead.
 * @packageDocumentation
 */
import { rmSync } from 'node:fs'
import type { TestServer } from './resolve-test-server.js'

/** Stops the server stored by the global setup (a no-op unless it is a private cluster); removes the PGlite template directory. */
export default async function teardown(): Promise<void> {
  const templateKey = Symbol.for('turnlog.testing.pgliteTemplateDir') // as in jest-global-setup.ts
  const templateDir = (globalThis as Record<symbol, string | undefined>)[templateKey]
  if (templateDir !== undefined) rmSync(templateDir, { recursive: true, force: true })
  const key = Symbol.for('turnlog.testing.server') // the same key as in jest-global-setup.ts
  const server = (globalThis as Record<symbol, TestServer | undefined>)[key]
  delete (globalThis as Record<symbol, unknown>)[key]
  await server?.stop()
}
