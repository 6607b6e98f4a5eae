/**
 * The public surface as a reviewed diff: the committed API reports (packages/<name>/api-report.api.md)
 * must equal what scripts/api-report.mjs generates from the sources now; every export has TSDoc; the
 * umbrella lists every public name of core, postgres and audit (hermes importer names aside) and
 * nothing else.
 */
import { describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const script = join(root, 'scripts', 'api-report.mjs')

interface ScriptRun {
  readonly code: number
  readonly stdout: string
}

async function runScript(...args: string[]): Promise<ScriptRun> {
  try {
    const { stdout } = await run(process.execPath, [script, ...args], { cwd: root, maxBuffer: 64 * 1024 * 1024 })
    return { code: 0, stdout }
  } catch (error) {
    const e = error as { code?: unknown; stdout?: unknown; stderr?: unknown }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: `${String(e.stdout ?? '')}${String(e.stderr ?? '')}` }
  }
}

/** `--json` once per file: three tests read it (each run type-checks every package: ≈ 6 s). */
let apiJson: Promise<ScriptRun> | undefined
function runJson(): Promise<ScriptRun> {
  apiJson ??= runScript('--json')
  return apiJson
}

interface ApiExport {
  readonly name: string
  readonly kind: string
  readonly documented: boolean
  readonly example: boolean
}
interface ApiPackage {
  readonly name: string
  readonly exports: readonly ApiExport[]
}

describe('the public API', () => {
  it('matches the committed API reports (update: pnpm api-report, then review and commit the diff)', async () => {
    // given the reports generated from the sources now; when compared with the committed ones
    const { code, stdout } = await runScript('--check')
    // then they are the same: the message carries the diff and the command that updates the reports
    if (code !== 0)
      throw new Error(`The public API changed. Review the diff; if intended, run \`pnpm api-report\` and commit the reports.\n${stdout}`)
    expect(code).toBe(0)
  }, 120_000)

  it('has a TSDoc comment on every export of every public package', async () => {
    // given every package's exports, as --undocumented reads them (the same `documented` flag)
    const { code, stdout } = await runJson()
    expect(code).toBe(0)
    const api = JSON.parse(stdout) as ApiPackage[]
    // then none is undocumented
    expect(api.flatMap((p) => p.exports.filter((e) => !e.documented).map((e) => `${p.name}: ${e.name}`))).toEqual([])
    expect(api.reduce((n, p) => n + p.exports.length, 0)).toBeGreaterThan(100)
  }, 120_000)

  it('the umbrella lists every public name of core, postgres and audit by name, and no other (hermes importer names aside)', async () => {
    // given every package's exports
    const { code, stdout } = await runJson()
    expect(code).toBe(0)
    const api = JSON.parse(stdout) as ApiPackage[]
    const names = (pkg: string): string[] => (api.find((p) => p.name === pkg)?.exports ?? []).map((e) => e.name)
    const isHermes = (n: string): boolean => /hermes/i.test(n) || ['epochToIso', 'SqliteValue', 'PlannedLiveMessage'].includes(n)
    // when we compare the umbrella with the union of the three packages' public names
    const expected = [...new Set([...names('@turnlog/core'), ...names('@turnlog/postgres'), ...names('@turnlog/audit')])]
      .filter((n) => !isHermes(n))
      .sort()
    // then they are equal: nothing forgotten, no internal or hermes name leaked
    expect(names('turnlog').sort()).toEqual(expected)
    for (const internal of [
      'GroupCommit',
      'KnownMessages',
      'mapDatabaseError',
      'PGliteDialect',
      'sqlState',
      'CUSTOM_SQLSTATES',
      'HERMES_MESSAGE_COLUMNS',
      'importHermes',
      'guardInput',
      'parseInput',
      'checkOptions',
      'StructureBuilder',
      'withApplyTo',
    ]) {
      expect(names('turnlog')).not.toContain(internal)
    }
  }, 120_000)
})

describe('the entry points of the public API', () => {
  it('carry a TSDoc @example', async () => {
    // given the functions a user starts from (docs/getting-started.md, integrating.md, audit.md)
    const entryPoints = [
      'openStore',
      'createMessage',
      'toWire',
      'isTurnlogError',
      'withRetry',
      'migrateToLatest',
      'audit',
      'verifyChain',
      'exportSessions',
      'importTranscript',
      'foldSession',
    ]
    const { stdout } = await runJson()
    const umbrella = (JSON.parse(stdout) as ApiPackage[]).find((p) => p.name === 'turnlog')
    // then each is exported by the umbrella with an example in its TSDoc
    const missing = entryPoints.filter((n) => umbrella?.exports.find((e) => e.name === n)?.example !== true)
    expect(missing).toEqual([])
  }, 120_000)
})
