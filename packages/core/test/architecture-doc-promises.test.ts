/**
 * docs/architecture.md, the pure promises: the package graph, the lint rules that hold the layering, the
 * port, the format registry and the tooling the document describes. The store's promises, and the table
 * mapping every promise of the document to its test, are in
 * packages/postgres/test/architecture-doc-promises.int.test.ts.
 *
 * | promise | test |
 * |---|---|
 * | the package graph ("The shape at a glance"; adapters: core, postgres, audit at most; nothing inside depends on them) | NEW (fixed: the diagram missed bench → langgraph) |
 * | core: "no Node built-ins: lint-enforced" | NEW (fixed: bare built-ins, `process`, `Buffer` passed the lint) |
 * | "the only package that reads argv/env or writes to stdout" | NEW (fixed: `process.stdout` / `process.stderr` passed the lint) |
 * | the type-aware lint rules are errors | NEW |
 * | the port's calls and three optional capabilities | NEW (types) |
 * | the registry's built-ins, in order | NEW |
 * | "only `turnlog migrate` hands `store.db` to `migrateToLatest`"; the CLI runs no SQL | NEW |
 * | jest tiers, scripts, prettier style, `.gitattributes` `eol=lf`, every published package in PUBLIC_PACKAGES with a report | NEW |
 */
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import { messageFormatNames, type SessionStore } from '@turnlog/core'
import { ESLint } from 'eslint'
import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const PACKAGES = join(ROOT, 'packages')
const read = (...path: string[]): string => readFileSync(join(ROOT, ...path), 'utf8')

/** Every `.ts` file under `dir`. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return tsFiles(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

/** The module specifiers a file imports or re-exports (static, type-only and dynamic `import()`). */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text)
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      found.push(node.arguments[0].text)
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      found.push(node.argument.literal.text)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** A workspace package's directory name from a specifier (`@turnlog/core/internal` → core, `turnlog` → turnlog). */
function workspacePackage(specifier: string): string | undefined {
  if (specifier === 'turnlog') return 'turnlog'
  return /^@turnlog\/([a-z-]+)/.exec(specifier)?.[1]
}

/** The workspace packages each package's `src/` uses. */
function sourceEdges(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>()
  for (const pkg of readdirSync(PACKAGES)) {
    const src = join(PACKAGES, pkg, 'src')
    const to = new Set<string>()
    for (const file of tsFiles(src))
      for (const s of specifiers(file)) {
        const target = workspacePackage(s)
        if (target !== undefined && target !== pkg) to.add(target)
      }
    edges.set(pkg, to)
  }
  return edges
}

/**
 * The edges of architecture.md's diagram ("The shape at a glance"): each line holds chains `a ──▶ b ──▶ c`
 * (`┄┄▶`: loaded on demand), a side holding names separated by commas; parentheses are remarks, and
 * "its executable" is the umbrella's.
 */
function diagramEdges(): Map<string, Set<string>> {
  const doc = read('docs', 'architecture.md')
  const block = /## The shape at a glance\s+```\n([\s\S]*?)```/.exec(doc)?.[1] ?? ''
  const edges = new Map<string, Set<string>>()
  const names = (side: string): string[] =>
    side
      .replace(/\([^)]*\)/g, '')
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '')
      .map((n) => (n === 'its executable' ? 'turnlog' : n))
  for (const line of block.split('\n'))
    for (const segment of line.split(/ {2,}/)) {
      const sides = segment.split(/\s*(?:──|┄┄)▶\s*/)
      for (let i = 0; i + 1 < sides.length; i++)
        for (const from of names(sides[i] as string))
          for (const to of names(sides[i + 1] as string)) edges.set(from, new Set([...(edges.get(from) ?? []), to]))
    }
  return edges
}

describe('architecture.md, "The shape at a glance": the package graph', () => {
  it("each package's src imports what the diagram draws and only what its arrows reach; adapters use core, postgres and audit at most, nothing inside uses them", () => {
    const actual = sourceEdges()
    const drawn = diagramEdges()
    const ADAPTERS = ['openai-agents', 'ai-sdk', 'langgraph']
    /** Every package `pkg` reaches along the drawn arrows. */
    const reach = (pkg: string, seen = new Set<string>()): Set<string> => {
      for (const to of drawn.get(pkg) ?? []) if (!seen.has(to)) reach(to, seen.add(to))
      return seen
    }
    for (const pkg of ['core', 'postgres', 'audit', 'hermes', 'cli', 'turnlog', 'testing', 'bench']) {
      const uses = [...(actual.get(pkg) ?? [])].sort()
      // every arrow is a real import, and every import follows the arrows (cli → audit → core: cli may import core)
      expect([pkg, [...(drawn.get(pkg) ?? [])].filter((to) => !uses.includes(to))]).toEqual([pkg, []])
      expect([pkg, uses.filter((to) => !reach(pkg).has(to))]).toEqual([pkg, []])
    }
    for (const adapter of ADAPTERS) {
      expect(actual.has(adapter)).toBe(true)
      for (const to of actual.get(adapter) ?? []) expect([adapter, ['core', 'postgres', 'audit'].includes(to)]).toEqual([adapter, true])
    }
    for (const inside of ['core', 'postgres', 'audit', 'hermes', 'turnlog'])
      for (const adapter of ADAPTERS) expect([inside, adapter, actual.get(inside)?.has(adapter)]).toEqual([inside, adapter, false])
  })
})

/** ESLint with the repository's configuration, its type-aware rules off (the probes are not files of the program). */
function probeLinter(): ESLint {
  const typeAware = ['no-floating-promises', 'no-misused-promises', 'await-thenable', 'return-await', 'prefer-promise-reject-errors']
  return new ESLint({
    cwd: ROOT,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { project: null } },
        rules: Object.fromEntries(typeAware.map((r) => [`@typescript-eslint/${r}`, 'off'])),
      },
    ],
  })
}

/** The rule ids ESLint reports for `code` as the file `path`, one list per line of `code`. */
async function lintLines(eslint: ESLint, code: string, path: string): Promise<string[][]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) })
  const lines: string[][] = code.split('\n').map(() => [])
  for (const m of result?.messages ?? []) lines[m.line - 1]?.push(m.ruleId ?? `fatal: ${m.message}`)
  return lines
}

describe('architecture.md, the packages: the lint rules that hold the layers', () => {
  it('core: "no Node built-ins: lint-enforced": every built-in module, bare or node:, and the process and Buffer globals are errors', async () => {
    // given one import per built-in module, both ways, and the Node globals, in a file of core
    const modules = builtinModules.filter((m) => !m.startsWith('_'))
    const code = [
      ...modules.flatMap((m, i) => [`import * as bare${i} from '${m}'`, `import * as prefixed${i} from 'node:${m}'`]),
      `export const used = [${modules.map((_, i) => `bare${i}, prefixed${i}`).join(', ')}]`,
      'export const version = process.version',
      "export const bytes = Buffer.from('x')",
    ].join('\n')

    // when it is linted as core's
    const lines = await lintLines(probeLinter(), code, 'packages/core/src/zz-probe.ts')

    // then every import line and both globals are refused
    const unrefused = lines
      .map((rules, i) => ({ line: code.split('\n')[i], rules }))
      .filter((l, i) => i !== modules.length * 2 && l.rules.length === 0)
    expect(unrefused).toEqual([])
    expect(lines[modules.length * 2]).toEqual([])
  })

  it('"the only package that reads argv/env or writes to stdout": argv, env, stdout, stderr and console are errors in every library package', async () => {
    const code = [
      'export const args = process.argv',
      'export const env = process.env',
      "process.stdout.write('out')",
      "process.stderr.write('err')",
      "console.log('log')",
      'export const fine = 1',
    ].join('\n')
    const eslint = probeLinter()
    for (const pkg of ['core', 'postgres', 'audit', 'hermes', 'openai-agents', 'ai-sdk', 'langgraph']) {
      const lines = await lintLines(eslint, code, `packages/${pkg}/src/zz-probe.ts`)
      expect([pkg, lines.map((rules) => rules.length > 0)]).toEqual([pkg, [true, true, true, true, true, false]])
    }
    // the umbrella's library entry too (its executable, bin.ts, runs the CLI with argv)
    const umbrella = await lintLines(eslint, code, 'packages/turnlog/src/index.ts')
    expect(umbrella.map((rules) => rules.length > 0)).toEqual([true, true, true, true, true, false])
  })

  it('"Guardrails": a floating promise, a misused promise, an await of a non-promise and a return skipping its try are errors, in every package', async () => {
    const eslint = new ESLint({ cwd: ROOT })
    for (const file of [
      'packages/core/src/index.ts',
      'packages/postgres/src/index.ts',
      'packages/cli/src/index.ts',
      'packages/core/test/ids.test.ts',
    ]) {
      const config = (await eslint.calculateConfigForFile(join(ROOT, file))) as { rules: Record<string, unknown> }
      const severity = (rule: string): string => {
        const setting: unknown = config.rules[`@typescript-eslint/${rule}`]
        const level: unknown = Array.isArray(setting) ? setting[0] : setting
        return level === 2 || level === 'error' ? 'error' : String(level)
      }
      for (const rule of ['no-floating-promises', 'no-misused-promises', 'await-thenable', 'return-await'])
        expect([file, rule, severity(rule)]).toEqual([file, rule, 'error'])
    }
  })
})

describe('architecture.md, "The port"', () => {
  it('SessionStore declares the listed calls and, beyond them, exactly three optional capabilities', () => {
    type Calls =
      | 'createSession'
      | 'getSession'
      | 'append'
      | 'flush'
      | 'sync'
      | 'load'
      | 'events'
      | 'sessions'
      | 'rewind'
      | 'compact'
      | 'revise'
      | 'finalize'
      | 'fork'
      | 'transcript'
      | 'state'
      | 'rebuild'
      | 'redact'
      | 'conflicts'
      | 'close'
    type Capabilities = 'maxBatchBytes' | 'atomically' | 'importSessions'
    type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
    type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T]
    // compile-time: a call added to or missing from the port, or a capability made required, fails the type check
    const members: Equal<keyof SessionStore, Calls | Capabilities> = true
    const optional: Equal<OptionalKeys<SessionStore>, Capabilities> = true
    expect([members, optional]).toEqual([true, true])
  })
})

describe('architecture.md, "Formats": the registry', () => {
  it('holds the seven built-ins, in the documented order, before any a process registers', () => {
    expect(messageFormatNames()).toEqual([
      'openai-chat',
      'json',
      'openai-responses',
      'openai-agents',
      'anthropic',
      'ai-sdk-ui',
      'ai-sdk-model',
    ])
  })
})

describe('architecture.md, "The port": the CLI beyond the port', () => {
  it('reads store.db only in `turnlog migrate` (for migrateToLatest) and sends no SQL of its own (no kysely, no pg queries)', () => {
    const cli = join(PACKAGES, 'cli', 'src')
    const dbReads: string[] = []
    const drivers: string[] = []
    for (const file of tsFiles(cli)) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (ts.isPropertyAccessExpression(node) && node.name.text === 'db') dbReads.push(`${relative(cli, file)}: ${node.getText(source)}`)
        ts.forEachChild(node, visit)
      }
      visit(source)
      for (const s of specifiers(file))
        if (s === 'kysely' || s === 'pg' || s.startsWith('pg/')) drivers.push(`${relative(cli, file)}: ${s}`)
    }
    expect(dbReads).toEqual(['commands/run-migrate.ts: store.db'])
    expect(read('packages', 'cli', 'src', 'commands', 'run-migrate.ts')).toContain('migrateToLatest(store.db)')
    expect(drivers).toEqual([])
  })
})

describe('architecture.md, "Guardrails" and the rule table: the tooling', () => {
  it('jest runs three tiers named like the files, only int and prop resolve the test server; the scripts run one or all', async () => {
    const { default: config } = (await import(join(ROOT, 'jest.config.js'))) as {
      default: { projects: { displayName: string; testMatch: string[]; globalSetup?: string }[] }
    }
    expect(config.projects.map((p) => [p.displayName, p.testMatch, p.globalSetup !== undefined])).toEqual([
      ['unit', ['**/test/**/*.test.ts'], false],
      ['int', ['**/test/**/*.int.test.ts'], true],
      ['prop', ['**/test/**/*.prop.test.ts'], true],
    ])
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> }
    for (const tier of ['unit', 'int', 'prop']) expect(scripts[`test:${tier}`]).toBe(`pnpm jest --selectProjects ${tier}`)
    expect(scripts['jest']).toMatch(/ jest$/)
    expect(scripts['depcheck']).toBe('depcruise --config .dependency-cruiser.cjs packages')
  })

  it('prettier: no semicolons, single quotes, 140 columns; Markdown and the SQL files left as written', () => {
    expect(JSON.parse(read('.prettierrc.json'))).toMatchObject({ semi: false, singleQuote: true, printWidth: 140 })
    const ignored = read('.prettierignore').split('\n')
    expect(ignored).toEqual(expect.arrayContaining(['*.md', 'packages/postgres/sql/']))
  })

  it('line endings: .gitattributes gives every text file eol=lf, and no later line changes it for the SQL, the vectors or the sources', () => {
    const lines = read('.gitattributes')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'))
    expect(lines[0]).toBe('* text=auto eol=lf')
    const glob = (pattern: string): RegExp => new RegExp(`(^|/)${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`)
    for (const path of [
      'packages/postgres/sql/functions/chain_link.sql',
      'packages/core/test/chain-vectors.json',
      'packages/core/src/chain-hash.ts',
    ])
      for (const line of lines.slice(1)) {
        const [pattern = ''] = line.split(/\s+/)
        expect([path, line, glob(pattern).test(path)]).toEqual([path, line, false])
      }
  })

  it('every published package (not private) is in PUBLIC_PACKAGES and has its committed API report; the private ones are not', () => {
    const listed = [...read('scripts', 'api-report.mjs').matchAll(/\{ dir: '([^']+)', name: '[^']+' \}/g)].map((m) => m[1]).sort()
    const published = readdirSync(PACKAGES)
      .filter((pkg) => (JSON.parse(read('packages', pkg, 'package.json')) as { private?: boolean }).private !== true)
      .sort()
    expect(listed).toEqual(published)
    expect(published).toEqual(['ai-sdk', 'audit', 'cli', 'core', 'hermes', 'langgraph', 'openai-agents', 'postgres', 'turnlog'])
    for (const pkg of published) expect([pkg, statSync(join(PACKAGES, pkg, 'api-report.api.md')).isFile()]).toEqual([pkg, true])
  })
})
