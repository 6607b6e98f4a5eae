/**
 * The docs cite their evidence: relative links and anchors, test files ("tested by
 * `faults/dead-consumer-keepalive.int.test.ts`", the short `faults/commit-ack.int`), repository paths,
 * the mutation table of docs/reliability.md, error codes and `turnlog <command>` lines. This file keeps
 * each citation pointing at something that exists, in every doc: README.md, docs/**\/*.md and
 * packages/*\/README.md. No database, no process: it reads files (and the CLI's command table as
 * TypeScript, like architecture-doc-promises.test.ts reads the CLI's sources).
 *
 * Each check lists every stale reference as `file:line → reference (why)`.
 *
 * docs/errors.md's code table against `ERROR_CODES`, both ways, is error-codes-doc.test.ts; here, every
 * code named anywhere in the docs must be a code of core or of the CLI.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import { ERROR_CODES, EVENT_TYPES } from '@turnlog/core'
import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')
const PACKAGES = readdirSync(join(ROOT, 'packages')).filter((name) => existsSync(join(ROOT, 'packages', name, 'package.json')))

/** Every file under `dir` (relative to the repository, `/`-separated), `node_modules` and `dist` left out. */
function filesUnder(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return []
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist') return []
    const path = `${dir}/${name}`
    return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [path]
  })
}

/** The docs this file checks. */
const DOCS = [
  'README.md',
  ...filesUnder('docs').filter((f) => f.endsWith('.md')),
  ...PACKAGES.map((p) => `packages/${p}/README.md`).filter((f) => existsSync(join(ROOT, f))),
]

/** One line of a doc: its text, and the language of the fenced block it is in (`null` outside one). */
interface DocLine {
  readonly file: string
  readonly line: number
  readonly text: string
  readonly fence: string | null
}

/** The lines of `file` (or of `text`, as if it were that file), each with the fenced block it belongs to (the fence lines themselves left out). */
function docLines(file: string, text = read(file)): DocLine[] {
  const out: DocLine[] = []
  let fence: { marker: string; lang: string } | null = null
  text.split('\n').forEach((text, i) => {
    const opener = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(text)
    if (opener !== null) {
      const marker = opener[1] as string
      if (fence === null) fence = { marker, lang: opener[2] ?? '' }
      else if (marker.startsWith(fence.marker.slice(0, 3)) && marker.length >= fence.marker.length) fence = null
      else out.push({ file, line: i + 1, text, fence: fence.lang })
      return
    }
    out.push({ file, line: i + 1, text, fence: fence === null ? null : (fence as { lang: string }).lang })
  })
  return out
}

const LINES = DOCS.flatMap((file) => docLines(file))
const PROSE = LINES.filter((l) => l.fence === null)

/** The inline code spans of a prose line, with the text right before each. */
function codeSpans(line: DocLine): { code: string; before: string }[] {
  return [...line.text.matchAll(/(`+)(?!`)(.+?)(?<!`)\1(?!`)/g)].map((m) => ({
    code: (m[2] as string).trim(),
    before: line.text.slice(0, m.index),
  }))
}

const where = (l: DocLine): string => `${l.file}:${l.line}`

// ---------------------------------------------------------------------------------------------------
// links and anchors

/** GitHub's anchor of a heading's text: the rendered text, lower-cased, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/`+/g, '') // code spans: their text
    .replace(/\*+/g, '') // emphasis
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors of a doc's headings, a repeated one numbered `-1`, `-2`, … as GitHub does. */
function anchorsOf(lines: readonly DocLine[]): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const l of lines) {
    const heading = l.fence === null ? /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(l.text) : null
    if (heading === null) continue
    const base = slug(heading[1] as string)
    let anchor = base
    while (seen.has(anchor)) {
      const n = (seen.get(base) ?? 0) + 1
      seen.set(base, n)
      anchor = `${base}-${n}`
    }
    seen.set(anchor, 0)
    anchors.add(anchor)
  }
  return anchors
}

/** The relative link targets of a prose line (inline links, images and reference definitions), code spans left out. */
function linkTargets(line: DocLine): string[] {
  const text = line.text.replace(/(`+)(?!`)(.+?)(?<!`)\1(?!`)/g, '')
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string)
  const definitions = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1] as string)
  return [...inline, ...definitions].filter((t) => !/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(t))
}

// ---------------------------------------------------------------------------------------------------
// test files and repository paths

const TEST_FILES = PACKAGES.flatMap((p) => filesUnder(`packages/${p}/test`))

/** A full test file name anywhere in a line (`faults/commit-ack.int.test.ts`, `packages/x/test/y.test.ts`). */
const FULL_TEST_NAME = /(?<![\w./-])((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.test\.ts)(?![\w])/g
/** A short test file name as a whole code span: `faults/commit-ack.int`, `to-wire.test`, `projection.prop`. */
const SHORT_TEST_NAME = /^((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:int|prop|test))$/

/** The file a cited test name means: `x.int` is `x.int.test.ts`, `x.test` is `x.test.ts`. */
function testFileOf(cited: string): string {
  if (cited.endsWith('.test.ts')) return cited
  if (cited.endsWith('.test')) return `${cited}.ts`
  return `${cited}.test.ts`
}

/** The test files a cited name can mean, in the package named right before it if one is (core `x.test`). */
function testsMatching(cited: string, before: string, doc: string): string[] {
  const file = testFileOf(cited)
  // a package's README cites its own `test/…`; elsewhere the package may be named before the name
  const own = /^packages\/([\w-]+)\/README\.md$/.exec(doc)?.[1]
  const pkg =
    own !== undefined && file.startsWith('test/') ? own : new RegExp(`(?:^|[\\s(;,])(${PACKAGES.join('|')}) \`?$`).exec(before)?.[1]
  return TEST_FILES.filter(
    (f) =>
      (f === file || f.endsWith(`/${file}`)) && (pkg === undefined || file.startsWith('packages/') || f.startsWith(`packages/${pkg}/`)),
  )
}

/**
 * Cited files that are not in the repository on purpose, each with why. Nothing else may be missing.
 */
const NOT_IN_THE_REPOSITORY: Readonly<Record<string, string>> = {
  'latest.md': "the bench's report, written into bench-results/ when it runs (docs/performance.md)",
}

/** The first segments of a code span that is a path into the repository (`scripts/…`, `core/src/…`, `test/…`, `sql/…`). */
const REPO_PATH_ROOTS = new Set([
  'packages',
  'scripts',
  'docs',
  ...PACKAGES,
  'src',
  'test',
  'sql',
  'faults',
  'security',
  'formats',
  'support',
  'tables',
  'functions',
  'policies',
  'triggers',
])

/** Whether `path`, cited in `file`, names something in the repository: from the doc, the root, docs/, or inside a package (or its test/, sql/). */
function pathExists(path: string, file: string): boolean {
  const clean = path.replace(/^\.\//, '').replace(/\/$/, '')
  const candidates = [
    posix.join(posix.dirname(file), clean),
    clean,
    `docs/${clean}`,
    `packages/${clean}`,
    ...PACKAGES.flatMap((p) => [`packages/${p}/${clean}`, `packages/${p}/test/${clean}`, `packages/${p}/sql/${clean}`]),
  ]
  return candidates.some((c) => !c.startsWith('..') && existsSync(join(ROOT, c)))
}

// ---------------------------------------------------------------------------------------------------
// error codes

/** The keys of the object literal `export const <name> = { … }` in a TypeScript file. */
function objectKeys(path: string, name: string): string[] {
  const source = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true)
  const keys: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === name && node.initializer !== undefined) {
      let init: ts.Expression = node.initializer
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression
      if (ts.isObjectLiteralExpression(init)) for (const p of init.properties) if (p.name !== undefined) keys.push(p.name.getText(source))
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  if (keys.length === 0) throw new Error(`no object literal ${name} in ${path}`)
  return keys
}

const CLI_ERROR_CODES = objectKeys('packages/cli/src/cli-error.ts', 'CLI_ERROR_CODES')
const KNOWN_CODES = new Set([...Object.keys(ERROR_CODES), ...CLI_ERROR_CODES])
/** What an error code looks like: the endings and beginnings the codes of core and the CLI use. */
const CODE_LIKE =
  /\b(?:DB_[A-Z_]+|[A-Z]+(?:_[A-Z]+)*_(?:FAILED|NOT_FOUND|CONFLICT|LOCKED|INVALID|CLOSED|EXISTS|DENIED|TOO_LARGE|REQUIRED|STOPPED|MESSAGE|INPUT|LOG|ID|MISSING|ERROR))\b/g

// ---------------------------------------------------------------------------------------------------
// the CLI's commands

/** An option of the CLI: whether it takes a value, and the values it accepts when it lists them (`.choices(…)`). */
interface CliOption {
  readonly takesValue: boolean
  readonly choices?: readonly string[]
}

/** A command of the CLI: its name and its options, by flag (`-o` and `--output` both). */
interface CliCommand {
  readonly name: string
  readonly options: Map<string, CliOption>
}

/** The string arrays `export const NAME = ['a', 'b'] as const` of a TypeScript file, by name. */
function stringArrays(path: string): Map<string, string[]> {
  const source = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true)
  const arrays = new Map<string, string[]>()
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer !== undefined) {
      let init: ts.Expression = node.initializer
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression
      if (ts.isArrayLiteralExpression(init) && init.elements.every(ts.isStringLiteral))
        arrays.set(
          node.name.getText(source),
          init.elements.map((e) => (e as ts.StringLiteral).text),
        )
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return arrays
}

/**
 * The command table of packages/cli/src/run-cli.ts, read from its `program.command(…)` chains (and the
 * program's own options), with the choices of packages/cli/src/command-choices.ts.
 */
function cliCommands(): { global: Map<string, CliOption>; commands: Map<string, CliCommand> } {
  const path = 'packages/cli/src/run-cli.ts'
  const source = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true)
  const choiceLists = stringArrays('packages/cli/src/command-choices.ts')
  const global = new Map<string, CliOption>()
  const commands = new Map<string, CliCommand>()
  type Call = { method: string; args: readonly ts.Expression[] }
  /** The calls of a chain `a.b(…).c(…)`, innermost first, with the root's text. */
  const chain = (expr: ts.Expression): { root: ts.Expression; calls: Call[] } => {
    const calls: Call[] = []
    let e = expr
    while (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
      calls.unshift({ method: e.expression.name.text, args: e.arguments })
      e = e.expression.expression
    }
    return { root: e, calls }
  }
  const text = (e: ts.Expression | undefined): string | undefined => (e !== undefined && ts.isStringLiteral(e) ? e.text : undefined)
  /** Adds the option a call of a command's chain declares, if it declares one. */
  const addOption = ({ method, args }: Call, into: Map<string, CliOption>): void => {
    let spec: string | undefined
    let choices: readonly string[] | undefined
    if (method === 'option' || method === 'requiredOption' || method === 'helpOption') spec = text(args[0])
    else if (method === 'version') spec = text(args[1])
    else if (method === 'addOption' && args[0] !== undefined) {
      // new Option('--x <v>', …).choices(LIST).default(…)
      const option = chain(args[0])
      if (ts.isNewExpression(option.root) && option.root.expression.getText(source) === 'Option') spec = text(option.root.arguments?.[0])
      const list = option.calls.find((c) => c.method === 'choices')?.args[0]
      if (list !== undefined) {
        choices = ts.isIdentifier(list) ? choiceLists.get(list.text) : undefined
        if (choices === undefined) throw new Error(`cannot read the choices ${list.getText(source)} of ${spec ?? '?'} in ${path}`)
      }
    }
    if (spec === undefined) return
    const option: CliOption = { takesValue: /[<[]/.test(spec), ...(choices === undefined ? {} : { choices }) }
    for (const flag of spec.split(/[\s,|]+/)) if (flag.startsWith('-')) into.set(flag, option)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isExpressionStatement(node)) {
      const { root, calls } = chain(node.expression)
      if (root.getText(source) === 'program' && calls.length > 0) {
        const name = calls[0]?.method === 'command' ? text(calls[0].args[0]) : undefined
        const options = name === undefined ? global : new Map<string, CliOption>()
        for (const call of calls) addOption(call, options)
        if (name !== undefined) commands.set(name, { name, options })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  if (commands.size === 0 || global.size === 0) throw new Error(`no command table found in ${path}`)
  return { global, commands }
}

/**
 * The values an option without `.choices` takes from a fixed list: `tail --types`, comma-separated
 * event types (run-cli.ts parses it with `commaList`; command-choices.ts lists core's EVENT_TYPES).
 */
const LISTED_VALUES: Readonly<Record<string, { readonly values: readonly string[]; readonly separator: string }>> = {
  'tail --types': { values: EVENT_TYPES, separator: ',' },
}

/** A `turnlog …` command line a doc shows, split into words (`[`, `]` and `…` dropped). */
interface Invocation {
  readonly at: DocLine
  readonly text: string
  readonly words: readonly string[]
}

/**
 * What the docs show as command lines: code spans that start with `turnlog ` (or `npx turnlog `), and
 * in shell blocks (`sh`, `bash`, `shell`, `console`) or after a `$ ` prompt in any block, each
 * `turnlog …` of a line cut at `&&`, `||`, `;`, `|` and a `#` comment.
 */
function invocations(): Invocation[] {
  const out: Invocation[] = []
  const add = (at: DocLine, text: string): void => {
    const m = /^(?:\$\s+)?(?:npx\s+)?turnlog(?:\s+(.*))?$/.exec(text.trim())
    if (m === null) return
    const words = (m[1] ?? '')
      .replace(/[[\]…]/g, ' ')
      .split(/\s+/)
      .filter((w) => w !== '')
    out.push({ at, text: text.trim(), words })
  }
  for (const l of LINES) {
    if (l.fence === null) {
      for (const { code } of codeSpans(l))
        if (/^(?:npx\s+)?turnlog\s/.test(code)) for (const part of code.split(/\s+(?:\|\||&&|\||;)\s+/)) add(l, part)
      continue
    }
    const shell = ['sh', 'bash', 'shell', 'console', 'zsh'].includes(l.fence)
    if (!shell && !/^\s*\$\s+(?:npx\s+)?turnlog\s/.test(l.text)) continue
    for (const part of l.text.replace(/\s#.*$/, '').split(/\s*(?:\|\||&&|\||;)\s*/)) add(l, part)
  }
  return out
}

/**
 * Code spans that read like a command line but are not one, each with why. Nothing else is exempt.
 */
const NOT_A_COMMAND_LINE: Readonly<Record<string, string>> = {
  'turnlog subscription <name>': "the application_name of tail's subscription connection (docs/cli.md), not a command",
}

// ---------------------------------------------------------------------------------------------------

describe('the docs cite what exists (README.md, docs/**/*.md, packages/*/README.md)', () => {
  it('reads the docs it checks', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/reliability.md', 'docs/errors.md', 'packages/core/README.md']))
    expect(DOCS.length).toBeGreaterThan(20)
  })

  it('every relative link names a file or directory that exists, and its #anchor a heading of that file', () => {
    const anchors = new Map<string, Set<string>>()
    const stale: string[] = []
    for (const l of PROSE)
      for (const target of linkTargets(l)) {
        const [rawPath = '', anchor] = target.split('#', 2) as [string, string | undefined]
        const path = decodeURIComponent(rawPath)
        const file = path === '' ? l.file : posix.normalize(posix.join(posix.dirname(l.file), path))
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
          stale.push(`${where(l)} → ${target} (no file ${file})`)
          continue
        }
        if (anchor === undefined || anchor === '') continue
        if (!file.endsWith('.md')) {
          stale.push(`${where(l)} → ${target} (an anchor into a file that is not markdown)`)
          continue
        }
        if (!anchors.has(file)) anchors.set(file, anchorsOf(docLines(file)))
        if (!anchors.get(file)?.has(decodeURIComponent(anchor))) stale.push(`${where(l)} → ${target} (no heading #${anchor} in ${file})`)
      }
    expect(stale).toEqual([])
  })

  it('computes anchors as GitHub does (punctuation dropped, spaces to -, repeats numbered)', () => {
    expect(slug('`sync_retraction` — info')).toBe('sync_retraction--info')
    expect(slug('Redaction (GDPR erasure)')).toBe('redaction-gdpr-erasure')
    expect(slug('OpenAI Responses (`openai-responses`): API items')).toBe('openai-responses-openai-responses-api-items')
    expect(slug("The payload's own id is not turnlog's id")).toBe('the-payloads-own-id-is-not-turnlogs-id')
    // a repeated heading gets -1, -2; a heading that reads like a numbered one then moves on; a fenced `#` is no heading
    const doc = ['# A', '## A', '```sh', '# a comment', '```', '### A', '## A-1', '## A.'].join('\n')
    expect([...anchorsOf(docLines('x.md', doc))]).toEqual(['a', 'a-1', 'a-2', 'a-1-1', 'a-3'])
  })

  it('every cited test file exists under packages/*/test (full names anywhere, short ones like `faults/commit-ack.int` as code)', () => {
    const stale: string[] = []
    for (const l of LINES) {
      for (const m of l.text.matchAll(FULL_TEST_NAME)) {
        const cited = m[1] as string
        if (testsMatching(cited, l.text.slice(0, m.index), l.file).length === 0) stale.push(`${where(l)} → ${cited}`)
      }
      if (l.fence !== null) continue
      for (const { code, before } of codeSpans(l)) {
        const short = SHORT_TEST_NAME.exec(code)?.[1]
        if (short !== undefined && !short.endsWith('.test.ts') && testsMatching(short, before, l.file).length === 0)
          stale.push(`${where(l)} → ${short} (no ${testFileOf(short)})`)
      }
    }
    expect(stale).toEqual([])
  })

  it('every cited repository path exists (`packages/…`, `scripts/…`, `docs/…`, `core/src/…`, `test/…`, any `*.md`)', () => {
    const stale: string[] = []
    const check = (l: DocLine, path: string): void => {
      if (path in NOT_IN_THE_REPOSITORY || pathExists(path, l.file)) return
      stale.push(`${where(l)} → ${path}`)
    }
    for (const l of LINES) {
      const named = new Set<string>()
      const text = l.fence === null ? l.text.replace(/\]\([^)]*\)/g, ']') : l.text // link targets are the link check's
      // paths from the root, in prose or code (not a pattern such as `packages/*/README.md` or `contract.*`)
      for (const m of text.matchAll(/(?<![\w./<>*@~-])(?:packages|scripts|docs)\/[\w./-]*(?![\w./<>*-])/g))
        named.add(m[0].replace(/[./]+$/, ''))
      // any markdown file named
      for (const m of text.matchAll(/(?<![\w./<>*@~-])(?:\.\.?\/)*[\w./-]*[\w-]\.md(?![\w/<>*-]|\.\w)/g)) named.add(m[0])
      if (l.fence === null)
        // a code span that is a path inside the repository or a package (`core/src/x.ts`, `test/support/…`, `sql/…`)
        for (const { code } of codeSpans(l))
          if (/^(?:\.\/)?[\w.-]+(?:\/[\w.-]+)+\/?$/.test(code) && !SHORT_TEST_NAME.test(code))
            if (REPO_PATH_ROOTS.has(code.replace(/^\.\//, '').split('/')[0] as string)) named.add(code)
      // (test files are the test-file check's; `NNNN` is a placeholder)
      for (const path of named) if (!/NNNN/.test(path) && !path.endsWith('.test.ts')) check(l, path)
    }
    expect(stale).toEqual([])
  })

  it("docs/reliability.md's mutation table has one row per mutant of scripts/mutants.mjs, each with the mutant's invariant, and no other", async () => {
    const { MUTANTS } = (await import(join(ROOT, 'scripts', 'mutants.mjs'))) as { MUTANTS: readonly { id: string; invariant: string }[] }
    const lines = docLines('docs/reliability.md')
    const header = lines.findIndex((l) => /^\|\s*mutant\s*\|\s*invariant\s*\|/.test(l.text))
    expect(header).toBeGreaterThan(0)
    const rows: { at: DocLine; id: string; invariant: string }[] = []
    for (const l of lines.slice(header + 2)) {
      if (!l.text.startsWith('|')) break
      const cells = l.text.split(' | ')
      rows.push({ at: l, id: (cells[0] ?? '').replace(/^\|\s*`?|`$/g, ''), invariant: cells[1] ?? '' })
    }
    const listed = new Map(MUTANTS.map((m) => [m.id, m]))
    const stale: string[] = []
    const seen = new Set<string>()
    for (const row of rows) {
      const mutant = listed.get(row.id)
      if (mutant === undefined) stale.push(`${where(row.at)} → ${row.id} (no such mutant in scripts/mutants.mjs)`)
      else if (mutant.invariant !== row.invariant)
        stale.push(`${where(row.at)} → ${row.id} (invariant differs: mutants.mjs says "${mutant.invariant}")`)
      if (seen.has(row.id)) stale.push(`${where(row.at)} → ${row.id} (a second row)`)
      seen.add(row.id)
    }
    for (const m of MUTANTS) if (!seen.has(m.id)) stale.push(`docs/reliability.md → ${m.id} (in scripts/mutants.mjs, no row)`)
    // the mutants the section's text names (`fold-redaction-ignored`, the ones added since the last full run)
    const section = lines.findIndex((l) => /^## The mutation check/.test(l.text))
    expect(section).toBeGreaterThan(0)
    for (const l of lines.slice(section, header))
      if (l.fence === null)
        for (const { code } of codeSpans(l))
          if (/^[a-z0-9]+(?:-[a-z0-9]+)+$/.test(code) && !listed.has(code))
            stale.push(`${where(l)} → ${code} (no such mutant in scripts/mutants.mjs)`)
    // the sentence that counts them
    for (const l of lines)
      for (const m of l.text.matchAll(/every mutant of the list, (\d+)/g))
        if (Number(m[1]) !== MUTANTS.length) stale.push(`${where(l)} → ${m[0]} (the list has ${MUTANTS.length})`)
    expect(stale).toEqual([])
    expect(rows.length).toBe(MUTANTS.length)
  })

  it("every error code the docs name is one of core's ERROR_CODES or the CLI's CLI_ERROR_CODES", () => {
    const stale: string[] = []
    for (const l of LINES) for (const m of l.text.matchAll(CODE_LIKE)) if (!KNOWN_CODES.has(m[0])) stale.push(`${where(l)} → ${m[0]}`)
    expect(stale).toEqual([])
    // the pattern recognises every real code (else a renamed code could slip by unchecked)
    expect([...KNOWN_CODES].filter((c) => c !== 'USAGE' && c !== 'INTERNAL' && !new RegExp(CODE_LIKE.source).test(c))).toEqual([])
  })

  it('every `turnlog <command>` line names a command of the CLI, with options that command (or the program) has and values they accept', () => {
    const { global, commands } = cliCommands()
    const stale: string[] = []
    const lines = invocations()
    for (const { at, text, words } of lines) {
      if (text in NOT_A_COMMAND_LINE) continue
      let command: CliCommand | undefined
      let sawCommand = false
      for (let i = 0; i < words.length; i++) {
        const word = words[i] as string
        if (word.startsWith('-') && word !== '-') {
          const [flag = '', inline] = word.split('=', 2)
          const on = command === undefined ? 'turnlog' : `turnlog ${command.name}`
          const option = command?.options.get(flag) ?? global.get(flag)
          if (option === undefined) {
            stale.push(`${where(at)} → ${text} (no option ${flag} on ${on})`)
            continue
          }
          if (!option.takesValue) continue
          const value = inline ?? words[++i]
          if (value === undefined || value.startsWith('<')) continue // `--html <file>`: a placeholder
          const listed = LISTED_VALUES[`${on.replace(/^turnlog ?/, '')} ${flag}`]
          const bad = option.choices
            ? [value].filter((v) => !option.choices?.includes(v))
            : listed
              ? value.split(listed.separator).filter((v) => !listed.values.includes(v))
              : []
          if (bad.length > 0)
            stale.push(
              `${where(at)} → ${text} (${flag} takes ${(option.choices ?? listed?.values ?? []).join(', ')}; not ${bad.join(', ')})`,
            )
          continue
        }
        if (sawCommand) continue // an argument
        sawCommand = true
        if (word === '<command>') continue
        if (word === 'help') {
          const of = words[i + 1]
          if (of !== undefined && of !== '<command>' && !commands.has(of)) stale.push(`${where(at)} → ${text} (no command ${of})`)
          i++
          continue
        }
        command = commands.get(word)
        if (command === undefined) stale.push(`${where(at)} → ${text} (no command ${word})`)
      }
    }
    expect(stale).toEqual([])
    // the scan finds the docs' command lines, and the table its commands and choices
    expect(lines.length).toBeGreaterThan(40)
    expect([...commands.keys()]).toEqual(expect.arrayContaining(['demo', 'migrate', 'replay', 'audit', 'export', 'import', 'tail']))
    expect(commands.get('replay')?.options.get('--view')?.choices).toEqual(['live', 'transcript', 'wire'])
    expect(commands.get('export')?.options.get('-o')).toEqual({ takesValue: true })
    expect([...global.keys()]).toEqual(
      expect.arrayContaining(['--database-url', '--data-dir', '--json', '--help', '-h', '--version', '-V']),
    )
  })
})
