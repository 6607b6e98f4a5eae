#!/usr/bin/env node
// The API report: every name each public package exports from its entry point (src/index.ts), with its
// kind and type signature, read with the TypeScript compiler API from the sources (the same types the
// built .d.ts carry). One file per package, packages/<name>/api-report.api.md, committed: a change of
// the public surface is a reviewed diff. `./internal` subpaths are not public and not reported.
//
//   pnpm api-report                 writes the reports
//   pnpm api-report --check         compares; prints a diff and exits 1 when a report is stale
//   pnpm api-report --undocumented  lists exports without a TSDoc comment (/** … */); exits 1 if any
//   pnpm api-report --json          prints every package's export names and kinds
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The packages users install or run; the others (bench, testing) are private. */
export const PUBLIC_PACKAGES = [
  { dir: 'core', name: '@turnlog/core' },
  { dir: 'postgres', name: '@turnlog/postgres' },
  { dir: 'audit', name: '@turnlog/audit' },
  { dir: 'langgraph', name: '@turnlog/langgraph' },
  { dir: 'ai-sdk', name: '@turnlog/ai-sdk' },
  { dir: 'openai-agents', name: '@turnlog/openai-agents' },
  { dir: 'hermes', name: '@turnlog/hermes' },
  { dir: 'cli', name: '@turnlog/cli' },
  { dir: 'turnlog', name: 'turnlog' },
]
export const UPDATE_COMMAND = 'pnpm api-report'

function createProgram() {
  const configPath = join(ROOT, 'tsconfig.test.json')
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })
  if (config === undefined) throw new Error('cannot read tsconfig.test.json')
  const roots = PUBLIC_PACKAGES.map((p) => join(ROOT, 'packages', p.dir, 'src', 'index.ts'))
  return ts.createProgram(roots, { ...config.options, noEmit: true })
}

const FORMAT =
  ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.WriteArrowStyleSignature | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType
const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

/** One line (or block) per declaration: its kind and signature, without comments or bodies. */
function describe(checker, name, symbol) {
  const decls = symbol.declarations ?? []
  const decl = decls[0]
  if (decl === undefined) return { kind: 'unknown', text: `${name}` }
  const flags = symbol.flags
  if (flags & ts.SymbolFlags.Class) {
    const classDecl = decls.find(ts.isClassDeclaration)
    const type = checker.getDeclaredTypeOfSymbol(symbol)
    const staticType = checker.getTypeOfSymbolAtLocation(symbol, decl)
    const lines = []
    const heritage = classDecl?.heritageClauses?.map((h) => ` ${h.getText()}`).join('') ?? ''
    const typeParams = classDecl?.typeParameters ? `<${classDecl.typeParameters.map((p) => p.getText()).join(', ')}>` : ''
    lines.push(`class ${name}${typeParams}${heritage} {`)
    for (const sig of staticType.getConstructSignatures()) {
      lines.push(`  constructor(${sig.parameters.map((p) => param(checker, p, decl)).join(', ')})`)
    }
    for (const prop of checker.getPropertiesOfType(staticType)) {
      if (prop.name === 'prototype' || !isPublicMember(prop)) continue
      lines.push(`  static ${member(checker, prop, decl)}`)
    }
    for (const prop of checker.getPropertiesOfType(type)) if (isPublicMember(prop)) lines.push(`  ${member(checker, prop, decl)}`)
    lines.push('}')
    return { kind: 'class', text: lines.join('\n') }
  }
  if (flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, decl)
    const text = type
      .getCallSignatures()
      .map((s) => `function ${name}${checker.signatureToString(s, decl, FORMAT & ~ts.TypeFormatFlags.WriteArrowStyleSignature)}`)
      .join('\n')
    return { kind: 'function', text }
  }
  if (flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Enum)) {
    const kind = flags & ts.SymbolFlags.Interface ? 'interface' : flags & ts.SymbolFlags.Enum ? 'enum' : 'type'
    const text = decls
      .filter((d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isEnumDeclaration(d))
      .map((d) => printer.printNode(ts.EmitHint.Unspecified, stripModifiers(d), d.getSourceFile()))
      .join('\n')
    // a name both a type and a value (e.g. a const with a type of the same name) reports both
    if (flags & ts.SymbolFlags.Variable)
      return {
        kind: `${kind} + const`,
        text: `${text}\nconst ${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), decl, FORMAT)}`,
      }
    return { kind, text }
  }
  if (flags & ts.SymbolFlags.Variable) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, decl)
    return { kind: 'const', text: `const ${name}: ${checker.typeToString(type, decl, FORMAT)}` }
  }
  return { kind: 'other', text: name }
}

/** Not `#private`, `private` or `protected`: a member callers can reach. */
function isPublicMember(prop) {
  if (prop.name.startsWith('#') || prop.name.startsWith('__#')) return false
  const decl = prop.valueDeclaration ?? prop.declarations?.[0]
  return decl === undefined || (ts.getCombinedModifierFlags(decl) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) === 0
}

function param(checker, p, at) {
  const decl = p.valueDeclaration
  const optional = decl !== undefined && ts.isParameter(decl) && (decl.questionToken !== undefined || decl.initializer !== undefined)
  return `${p.name}${optional ? '?' : ''}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(p, at), at, FORMAT)}`
}

function member(checker, prop, at) {
  const decl = prop.valueDeclaration ?? prop.declarations?.[0]
  const mods = decl !== undefined ? ts.getCombinedModifierFlags(decl) : 0
  const readonly = mods & ts.ModifierFlags.Readonly ? 'readonly ' : ''
  const type = checker.getTypeOfSymbolAtLocation(prop, at)
  if (decl !== undefined && (ts.isMethodDeclaration(decl) || ts.isMethodSignature(decl))) {
    return type
      .getCallSignatures()
      .map((s) => `${prop.name}${checker.signatureToString(s, at, FORMAT & ~ts.TypeFormatFlags.WriteArrowStyleSignature)}`)
      .join('; ')
  }
  if (decl !== undefined && ts.isGetAccessorDeclaration(decl)) return `get ${prop.name}(): ${checker.typeToString(type, at, FORMAT)}`
  return `${readonly}${prop.name}${prop.flags & ts.SymbolFlags.Optional ? '?' : ''}: ${checker.typeToString(type, at, FORMAT)}`
}

/** The declaration without `export`/`declare` (the report lists names; the keyword adds nothing). */
function stripModifiers(node) {
  const keep = (node.modifiers ?? []).filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DeclareKeyword)
  if (ts.isInterfaceDeclaration(node))
    return ts.factory.updateInterfaceDeclaration(node, keep, node.name, node.typeParameters, node.heritageClauses, node.members)
  if (ts.isTypeAliasDeclaration(node)) return ts.factory.updateTypeAliasDeclaration(node, keep, node.name, node.typeParameters, node.type)
  if (ts.isEnumDeclaration(node)) return ts.factory.updateEnumDeclaration(node, keep, node.name, node.members)
  return node
}

/** True when the declaration carries a TSDoc comment (`/** … *\/`). */
function hasTsDoc(decl) {
  const node = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl
  const text = node.getSourceFile().getFullText()
  return (ts.getLeadingCommentRanges(text, node.pos) ?? []).some((r) => text.startsWith('/**', r.pos))
}

/** True when the declaration's TSDoc has an `@example` tag. */
function hasExample(decl) {
  const node = ts.isVariableDeclaration(decl) ? decl.parent.parent : decl
  return ts.getJSDocTags(node).some((t) => t.tagName.text === 'example')
}

/** Every public package's exports: name, kind, signature, where it is declared, whether it has TSDoc. */
export function collectApi() {
  const program = createProgram()
  const checker = program.getTypeChecker()
  return PUBLIC_PACKAGES.map((pkg) => {
    const file = program.getSourceFile(join(ROOT, 'packages', pkg.dir, 'src', 'index.ts'))
    const moduleSymbol = file === undefined ? undefined : checker.getSymbolAtLocation(file)
    if (moduleSymbol === undefined) throw new Error(`no module symbol for ${pkg.name}`)
    const exports = checker
      .getExportsOfModule(moduleSymbol)
      .map((s) => {
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s
        const decl = target.declarations?.[0]
        const described = describe(checker, s.name, target)
        return {
          name: s.name,
          ...described,
          // a type the printer names by its file (`import("/abs/path/…")`) is named from the repository root,
          // so the report is the same in every checkout
          text: described.text.replaceAll(`import("${ROOT}/`, 'import("'),
          declaredIn: decl === undefined ? '' : relative(ROOT, decl.getSourceFile().fileName),
          documented: (target.declarations ?? []).some(hasTsDoc),
          example: (target.declarations ?? []).some(hasExample),
        }
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { ...pkg, exports }
  })
}

/** The markdown report of one package. */
export function renderReport(pkg) {
  const lines = [
    `# API report: ${pkg.name}`,
    '',
    `Generated by \`${UPDATE_COMMAND}\` (scripts/api-report.mjs) from packages/${pkg.dir}/src/index.ts. Do not edit:`,
    'a change here is a change of the public API; review it, then regenerate.',
    '',
    `${pkg.exports.length} exports.`,
    '',
  ]
  for (const e of pkg.exports) {
    lines.push(`## ${e.name} (${e.kind})`, '', '```ts', e.text, '```', '')
  }
  return lines.join('\n')
}

export function reportPath(pkg) {
  return join(ROOT, 'packages', pkg.dir, 'api-report.api.md')
}

function diff(expectedText, actualText) {
  const dir = mkdtempSync(join(tmpdir(), 'api-report-'))
  try {
    writeFileSync(join(dir, 'committed'), expectedText)
    writeFileSync(join(dir, 'current'), actualText)
    const r = spawnSync('diff', ['-u', 'committed', 'current'], { cwd: dir, encoding: 'utf8' })
    return r.stdout || r.stderr || '(the files differ)'
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function main() {
  const args = process.argv.slice(2)
  const api = collectApi()
  if (args.includes('--json')) {
    console.log(
      JSON.stringify(
        api.map((p) => ({
          name: p.name,
          exports: p.exports.map((e) => ({ name: e.name, kind: e.kind, documented: e.documented, example: e.example })),
        })),
      ),
    )
    return
  }
  if (args.includes('--undocumented')) {
    const missing = api.flatMap((p) => p.exports.filter((e) => !e.documented).map((e) => `${p.name}: ${e.name} (${e.declaredIn})`))
    for (const m of missing) console.log(m)
    process.exit(missing.length === 0 ? 0 : 1)
  }
  let stale = 0
  for (const pkg of api) {
    const path = reportPath(pkg)
    const text = renderReport(pkg)
    const committed = existsSync(path) ? readFileSync(path, 'utf8') : ''
    if (committed === text) continue
    if (args.includes('--check')) {
      stale++
      console.log(`${relative(ROOT, path)} is stale: the public API of ${pkg.name} changed.\n${diff(committed, text)}`)
    } else {
      writeFileSync(path, text)
      console.log(`wrote ${relative(ROOT, path)} (${pkg.exports.length} exports)`)
    }
  }
  if (stale > 0) {
    console.log(`If the change is intended, run \`${UPDATE_COMMAND}\` and commit the reports.`)
    process.exit(1)
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
