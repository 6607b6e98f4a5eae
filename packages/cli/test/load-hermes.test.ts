import { describe, expect, it } from '@jest/globals'
import { CliError } from '../src/cli-error.js'
import { loadHermes, type HermesModule } from '../src/load-hermes.js'

/** The error Node's ESM loader throws for a package it cannot find. */
const notFound = (name: string): Error =>
  Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/@turnlog/cli/dist/load-hermes.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  })

describe('loadHermes', () => {
  it('loads @turnlog/hermes in the workspace (where it is installed)', async () => {
    // when
    const hermes = await loadHermes()
    // then
    expect(typeof hermes.importHermes).toBe('function')
  })

  it('answers a missing @turnlog/hermes with PACKAGE_MISSING and rethrows any other failure as it is', async () => {
    // given
    const brokenDependency = notFound('better-sqlite3')
    const other = new TypeError('boom')
    // when
    const missing = await loadHermes(() => Promise.reject(notFound('@turnlog/hermes'))).catch((e: unknown) => e)
    const dependency = await loadHermes(() => Promise.reject(brokenDependency)).catch((e: unknown) => e)
    const thrown = await loadHermes(() => Promise.reject(other)).catch((e: unknown) => e)
    const loaded = await loadHermes(() => Promise.resolve({ importHermes: 'stub' } as unknown as HermesModule))
    // then
    expect(missing).toBeInstanceOf(CliError)
    expect(missing).toMatchObject({
      code: 'PACKAGE_MISSING',
      exitCode: 3,
      hint: undefined,
      message: expect.stringContaining('npm install @turnlog/hermes'),
    })
    expect(dependency).toBe(brokenDependency)
    expect(thrown).toBe(other)
    expect(loaded).toEqual({ importHermes: 'stub' })
  })
})
