import { describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The directory `name` resolves to from the package in `dir`, the way Node looks it up (real path). */
function resolvePackageDir(dir: string, name: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate)
    if (dirname(d) === d) return undefined
  }
}

/** Every package installing `dir` pulls in (dependencies and optional dependencies, recursively), by name. */
function installClosure(dir: string): Map<string, { dir: string; native: boolean }> {
  const seen = new Map<string, { dir: string; native: boolean }>()
  const queue = [realpathSync(dir)]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const pkg = JSON.parse(readFileSync(join(next, 'package.json'), 'utf8')) as {
      name: string
      gypfile?: boolean
      dependencies?: object
      optionalDependencies?: object
    }
    if (seen.has(pkg.name)) continue
    seen.set(pkg.name, { dir: next, native: pkg.gypfile === true || existsSync(join(next, 'binding.gyp')) })
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const found = resolvePackageDir(next, name)
      if (found !== undefined) queue.push(found)
    }
  }
  return seen
}

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

  it('is require()d by package name from CommonJS, every public package, as the same module import() gives', async () => {
    // given: each public package's directory (a package reaches itself by name through its exports map)
    const packagesDir = join(packageDir, '..')
    const published = ['turnlog', 'core', 'postgres', 'audit', 'cli', 'hermes', 'ai-sdk', 'openai-agents', 'langgraph'].map((dir) => ({
      dir: join(packagesDir, dir),
      name: (JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8')) as { name: string }).name,
    }))
    // when: a CommonJS script require()s it by name (Node 20.19+, 22.12+, 24 load an ES module without
    // top-level await synchronously), then import()s it
    const results = await Promise.all(
      published.map(async ({ dir, name }) => {
        const script = `const required = require(${JSON.stringify(name)})
          import(${JSON.stringify(name)}).then((esm) => console.log(JSON.stringify({ same: required === esm, names: Object.keys(required).length > 0 })))`
        const { stdout } = await run(process.execPath, ['--input-type=commonjs', '-e', script], { cwd: dir })
        return [name, JSON.parse(stdout.trim()) as unknown] as const
      }),
    )
    // then: it loads, and both give the one module (no second copy of a class or of a store)
    expect(Object.fromEntries(results)).toEqual(Object.fromEntries(published.map(({ name }) => [name, { same: true, names: true }])))
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
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script.replace("import('turnlog')", `import(${JSON.stringify(join(packageDir, 'dist', 'index.js'))})`)],
      { cwd: auditDir },
    )
    // then no internal name is in the umbrella, and the subpath resolves
    expect(JSON.parse(stdout.trim())).toEqual({ leaked: [], internal: 'function object' })
  })

  it('has no native dependency: the hermes importer (better-sqlite3) is the opt-in @turnlog/hermes, not part of the default install', async () => {
    // given: what installing the umbrella pulls in, and what the hermes package pulls in
    const umbrella = installClosure(packageDir)
    const hermes = installClosure(join(packageDir, '..', 'hermes'))
    // when: the built umbrella is imported by name in a separate Node process
    const script = `
      const api = await import('turnlog')
      console.log(JSON.stringify(['importHermes', 'planHermesSession', 'HermesStateDb', 'hermesSessionId'].filter((name) => name in api)))
    `
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: packageDir })
    // then: no native package and no hermes importer in the default install; the opt-in package has them
    expect([...umbrella].filter(([, p]) => p.native).map(([name]) => name)).toEqual([])
    expect([...umbrella.keys()]).not.toContain('@turnlog/hermes')
    expect([...umbrella.keys()]).not.toContain('better-sqlite3')
    expect(JSON.parse(stdout.trim())).toEqual([])
    expect(hermes.get('better-sqlite3')?.native).toBe(true)
    expect([...hermes.keys()]).toEqual(expect.arrayContaining(['@turnlog/hermes', '@turnlog/core', '@turnlog/postgres']))
  }, 60_000)
})
