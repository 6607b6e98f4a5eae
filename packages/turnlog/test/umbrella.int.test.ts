import { describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..')

describe('the built umbrella package', () => {
  it('exports the public API to a plain Node ESM import by package name', async () => {
    // given: a script importing 'turnlog' the way an application does (resolved through node_modules)
    const script = `
      import { createMessage, toWire, contentHash, openStore, isTurnlogError } from 'turnlog'
      const m = createMessage({ role: 'user', content: 'hi' })
      const store = await openStore({ embedded: true })
      const s = await store.createSession()
      const r = await store.append(s, [m])
      const { messages } = await store.load(s)
      console.log(JSON.stringify({ wire: toWire([m]), hash: contentHash(m).length, appended: r.appended.length,
        same: messages[0].id === m.id, guard: typeof isTurnlogError }))
      await store.close()
    `
    // when: it runs in a separate Node process inside the package (self-reference through its exports map)
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: packageDir })
    // then
    expect(JSON.parse(stdout.trim())).toEqual({
      wire: [{ role: 'user', content: 'hi' }],
      hash: 64,
      appended: 1,
      same: true,
      guard: 'function',
    })
  }, 60_000)

  it('keeps internals out of the umbrella; the workspace packages reach them through the ./internal subpath', async () => {
    // given the built packages, imported by name the way Node resolves them (exports maps)
    const script = `
      const umbrella = await import('turnlog')
      const internal = await import('@turnlog/postgres/internal')
      console.log(JSON.stringify({
        leaked: ['GroupCommit', 'KnownMessages', 'mapDatabaseError', 'PGliteDialect', 'sqlState', 'importHermes', 'HERMES_MESSAGE_COLUMNS'].filter((n) => n in umbrella),
        internal: typeof internal.mapDatabaseError + ' ' + typeof internal.CUSTOM_SQLSTATES,
      }))
    `
    // when it runs inside @turnlog/audit (a package that depends on @turnlog/postgres)
    const auditDir = join(packageDir, '..', 'audit')
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script.replace("import('turnlog')", `import(${JSON.stringify(join(packageDir, 'dist', 'index.js'))})`)], { cwd: auditDir })
    // then no internal name is in the umbrella, and the subpath resolves
    expect(JSON.parse(stdout.trim())).toEqual({ leaked: [], internal: 'function object' })
  }, 60_000)
})
