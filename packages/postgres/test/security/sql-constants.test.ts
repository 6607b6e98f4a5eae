import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import ts from 'typescript'

/**
 * All SQL is parameterized and identifiers never come from input: every escape hatch of kysely that
 * splices text into SQL (`sql.raw`, `sql.ref`, `sql.id`, `sql.lit`, `sql.table`, `CompiledQuery.raw`)
 * must take a constant, and no `.query(…)` / `.exec(…)` call may build its text from substitutions or
 * concatenation. Constant: a string or number literal, a template whose substitutions are constants
 * (also under `String.raw`), or a `const` of this file initialised with one.
 *
 * Scope: the published packages. `@turnlog/testing` and `@turnlog/bench` are private dev tools that
 * create throwaway databases under names they generate (`CREATE DATABASE` takes no parameters).
 */

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '../../../..')
const SPLICERS = new Set(['raw', 'ref', 'id', 'lit', 'table'])
const PUBLISHED = ['core', 'postgres', 'audit', 'cli', 'turnlog']

/**
 * Reviewed exceptions, by file and call text. Each says why the text is not input.
 * - The baseline migration runs the schema's `.sql` files shipped in the package (`schemaSql()`: the
 *   files of the constant manifest `SCHEMA_FILES`, read from the package's own `sql/` directory).
 * - The PGlite dialect builds `set transaction isolation level …` from kysely's `TransactionSettings`, whose
 *   values are kysely's `IsolationLevel` / `AccessMode` literal unions (kysely's own Postgres driver
 *   does the same): no string of the caller reaches it through turnlog's API.
 */
const REVIEWED = new Set([
  // the transaction's isolation level and access mode: Kysely's enumerated values (its validateTransactionSettings refuses any other)
  "packages/postgres/src/pglite-dialect.ts: tx.exec(`set transaction ${characteristics.join(' ')}`)",
  // the baseline schema: the package's own sql/ files (SCHEMA_FILES, a constant list), no input
  'packages/postgres/src/migrations/0001_create_schema.ts: sql.raw(schemaSql())',
  // 0002: sql/ files of a constant list, each made create or replace, and a constant owner/privilege text; no input
  'packages/postgres/src/migrations/0002_compute_append_links.ts: sql.raw(replacementSql())',
  // 0003: the same, two sql/ files of a constant list
  'packages/postgres/src/migrations/0003_accept_duplicates_without_content.ts: sql.raw(replacementSql())',
  // 0004: one sql/ file and a constant repair block
  'packages/postgres/src/migrations/0004_repair_compaction_placement.ts: sql.raw(replacementSql())',
  // 0005: constant table/privilege texts and sql/ files of a constant list (functions made create or replace, one policy file); no input
  'packages/postgres/src/migrations/0005_tenant_subscriptions.ts: sql.raw(migrationSql())',
  // 0006: one sql/ file, made create or replace; no input
  'packages/postgres/src/migrations/0006_check_fork_copies.ts: sql.raw(replacementSql())',
  // 0007: a constant column and privilege text and sql/ files of constant lists; no input
  'packages/postgres/src/migrations/0007_read_appends_only_sessions.ts: sql.raw(migrationSql())',
  // 0008: sql/ files of a constant list, made create or replace, and a constant owner text; no input
  'packages/postgres/src/migrations/0008_check_redaction_placeholders.ts: sql.raw(replacementSql())',
  // 0009: one sql/ file of a constant list, made create or replace; no input
  'packages/postgres/src/migrations/0009_keep_custom_tool_calls.ts: sql.raw(replacementSql())',
  // 0010: one sql/ file of a constant list, made create or replace; no input
  'packages/postgres/src/migrations/0010_hide_foreign_predecessors.ts: sql.raw(replacementSql())',
  // statement is one of the append module's constant { name, text } objects (APPEND_MESSAGES, APPEND_BATCHES)
  'packages/postgres/src/store/store-context.ts: CompiledQuery.raw(statement.text, [...values])',
])

interface Finding {
  readonly file: string
  readonly line: number
  readonly call: string
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/** Unsafe SQL-building calls in one TypeScript source. */
function findUnsafeSql(fileName: string, text: string): Finding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true)
  const consts = new Map<string, ts.Expression>()
  const visitConsts = (node: ts.Node): void => {
    if (ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.Const) !== 0) {
      for (const d of node.declarations) if (ts.isIdentifier(d.name) && d.initializer) consts.set(d.name.text, d.initializer)
    }
    ts.forEachChild(node, visitConsts)
  }
  visitConsts(source)

  const isConstant = (e: ts.Expression, depth = 0): boolean => {
    if (depth > 5) return false
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return isConstant(e.expression, depth)
    if (ts.isStringLiteral(e) || ts.isNumericLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return true
    if (ts.isTemplateExpression(e)) return e.templateSpans.every((span) => isConstant(span.expression, depth + 1))
    if (ts.isTaggedTemplateExpression(e)) {
      return e.tag.getText(source) === 'String.raw' && (ts.isNoSubstitutionTemplateLiteral(e.template) || isConstant(e.template, depth))
    }
    if (ts.isIdentifier(e)) {
      const init = consts.get(e.text)
      return init !== undefined && isConstant(init, depth + 1)
    }
    return false
  }
  const isDynamicText = (e: ts.Expression): boolean =>
    ts.isTemplateExpression(e) || (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken)

  const findings: Finding[] = []
  const report = (node: ts.Node): void => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
    findings.push({ file: fileName, line: line + 1, call: node.getText(source).slice(0, 120) })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const target = node.expression.expression.getText(source)
      const method = node.expression.name.text
      const first = node.arguments[0]
      const splices = (target === 'sql' && SPLICERS.has(method)) || (target === 'CompiledQuery' && method === 'raw')
      if (splices && (first === undefined || !node.arguments.every((a) => isConstant(a)))) report(node)
      if ((method === 'query' || method === 'exec') && first !== undefined && isDynamicText(first)) report(node)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return findings
}

describe('SQL text comes from constants only', () => {
  it('finds a spliced identifier or value in a sample (the check can fail)', () => {
    // given code that splices input into SQL in every way the check knows
    const sample = [
      "const TABLE = 'turnlog.events'",
      'const fine = sql.raw(TABLE)',
      'const alsoFine = sql.raw(String.raw`select 1`)',
      'function bad(name: string, x: string) {',
      '  sql.raw(`select * from ${name}`)',
      '  sql.ref(name)',
      '  sql.raw(`listen ${TABLE}`)',
      '  sql.lit(x)',
      '  CompiledQuery.raw(x)',
      '  client.query(`select ${x}`)',
      "  pool.query('select ' + x)",
      '}',
    ].join('\n')
    // when checking it
    const found = findUnsafeSql('sample.ts', sample)
    // then each unsafe call is reported, and the constant ones are not
    expect(found.map((f) => f.line)).toEqual([5, 6, 8, 9, 10, 11])
  })

  it('holds for every source file of every package', () => {
    // given the sources of all packages
    const files = PUBLISHED.flatMap((p) => sourceFiles(join(ROOT, 'packages', p, 'src')))
    // when checking each
    const found = files
      .flatMap((f) => findUnsafeSql(relative(ROOT, f), readFileSync(f, 'utf8')))
      .filter((f) => !REVIEWED.has(`${f.file}: ${f.call}`))
    // then none splices non-constant text into SQL
    expect(files.length).toBeGreaterThan(20)
    expect(found).toEqual([])
  })
})
