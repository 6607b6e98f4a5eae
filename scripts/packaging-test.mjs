#!/usr/bin/env node
// The packaging test (part of the test command, after the build): packs every public package with pnpm,
// checks each tarball (concrete versions, no build info, no tests, every source map and entry point
// resolves inside it), installs the default set (the umbrella `turnlog` and what it depends on; not the
// opt-in @turnlog/hermes) with plain npm into a scratch app outside the repository (no workspace, no
// links), and there: checks that nothing native was installed, imports `turnlog` from ESM, compiles a typed
// sample and a CommonJS consumer (which `require()`s the packages) with `tsc --strict` without
// `skipLibCheck`, runs them, and runs `npx turnlog --version` and `npx turnlog demo`; then the opt-in
// packages' samples (the adapters, @turnlog/hermes) and a `require()` of each, and the docs' examples
// (scripts/docs-examples-test.mjs, on the current Node). The app's runtime steps run under the current Node and under each major of
// TURNLOG_TEST_NODE_VERSIONS ("22 24" by default, "none" to skip; see scripts/node-runtime.mjs).
// npm's cache makes re-runs fast. TURNLOG_KEEP_PACKAGING_APP=1 keeps the scratch directories.
// After the pack and the tarball checks, the scratch apps are independent: each (the default app, each
// opt-in package and variant, the docs' examples) is a lane, run by this script in a child process
// (TURNLOG_PACKAGING_LANE names it), TURNLOG_PACKAGING_LANES (3 by default) at a time; a lane's output is
// held and printed whole, and the first failing lane fails the test (the others are stopped).
// TURNLOG_PACKAGING_NATIVE_MATRIX=1 also compiles an opt-in package's native dependencies (better-sqlite3)
// from source for each major of the matrix, with that runtime's own headers (no download), and runs the
// package's sample there too: a minute of CPU per major, so not part of the test command (step 8).
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join, posix, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { testDocExamples, workspaceVersion } from './docs-examples-test.mjs'
import { ensureNode, envWithNode, matrixMajors } from './node-runtime.mjs'

const root = realpathSync(fileURLToPath(new URL('..', import.meta.url)))
// no arguments (settings are environment variables): --help prints the header above, anything else is refused
if (process.argv.length > 2) {
  const help = ['--help', '-h'].includes(process.argv[2] ?? '')
  const header = readFileSync(fileURLToPath(import.meta.url), 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.startsWith('//'))
  ;(help ? console.log : console.error)(header.map((l) => l.replace(/^\/\/ ?/, '')).join('\n'))
  if (!help)
    console.error(
      `\npackaging-test: no arguments are taken (got ${process.argv.slice(2).join(' ')}); settings are the environment variables above`,
    )
  process.exit(help ? 0 : 2)
}
const started = Date.now()
const timings = []
function step(name, fn) {
  const t0 = Date.now()
  const result = fn()
  timings.push([name, Date.now() - t0])
  return result
}
const scratch = [] // removed on exit unless TURNLOG_KEEP_PACKAGING_APP=1
function cleanUp() {
  if (process.env.TURNLOG_KEEP_PACKAGING_APP !== '1') for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
}
const lane = process.env.TURNLOG_PACKAGING_LANE // set in a lane's child process
// a lane the parent stops (another lane failed, or the test was stopped) removes its scratch app first
if (lane !== undefined) process.once('SIGTERM', () => (cleanUp(), process.exit(143)))
function fail(message) {
  console.error(`packaging test: FAIL${lane === undefined ? '' : ` (lane ${lane})`}: ${message}`)
  cleanUp()
  process.exit(1)
}
function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
  if (r.status !== 0) {
    fail(`${cmd} ${args.join(' ')} (in ${options.cwd ?? root}) exited ${r.status ?? r.signal}\n${r.stdout ?? ''}${r.stderr ?? ''}`)
  }
  return r.stdout
}

// 1. The public packages, and pnpm (the one running this script, else the pinned one through npx).
const packages = readdirSync(join(root, 'packages'))
  .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) }))
  .filter((p) => p.json.private !== true)
for (const p of packages) {
  try {
    statSync(join(root, 'packages', p.dir, 'dist', 'index.js'))
  } catch {
    fail(`packages/${p.dir}/dist is missing: run the build first (npx -y pnpm@12.4.2 build)`)
  }
}
const execPath = process.env.npm_execpath ?? ''
const pnpm = !/pnpm/.test(execPath)
  ? ['npx', ['-y', 'pnpm@12.4.2']]
  : /\.[cm]?js$/.test(execPath)
    ? [process.execPath, [execPath]]
    : [execPath, []] // pnpm's own executable (a single-file build, not a script)

// 2. Pack (the parent process; a lane reads the parent's tarballs).
let packDir = process.env.TURNLOG_PACKAGING_PACK_DIR
if (lane === undefined) {
  packDir = mkdtempSync(join(tmpdir(), 'turnlog-pack-'))
  scratch.push(packDir)
  step('pack', () =>
    run(pnpm[0], [...pnpm[1], '-r', ...packages.flatMap((p) => ['--filter', p.json.name]), 'pack', '--pack-destination', packDir], {
      cwd: root,
    }),
  )
} else if (packDir === undefined) fail('TURNLOG_PACKAGING_PACK_DIR is not set')
const tarballs = new Map()
for (const p of packages) {
  const file = join(packDir, `${p.json.name.replace('@', '').replace('/', '-')}-${p.json.version}.tgz`)
  try {
    statSync(file)
  } catch {
    fail(`pnpm pack made no ${file}`)
  }
  tarballs.set(p.json.name, file)
}
const version = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version
const expectedVersion = packages.find((p) => p.json.name === '@turnlog/cli').json.version
const ran = [] // what a lane ran, for the report
/** The runtimes of the lanes' runtime steps: the current Node and each major of the matrix. */
function matrixRuntimes() {
  const runtimes = [{ label: `current ${process.version}`, env: process.env }]
  for (const major of matrixMajors()) {
    const { binDir, version: v } = step(`provision Node ${major}`, () => ensureNode(major))
    runtimes.push({ label: v, env: envWithNode(binDir), nodeDir: dirname(binDir) })
  }
  return runtimes
}
/** The typed samples' tsconfig: strict, no skipLibCheck. */
const sampleCompilerOptions = {
  strict: true,
  skipLibCheck: false,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  types: ['node'],
  outDir: 'out',
}

/** 3. Checks each tarball's contents and manifest; returns their sizes. */
function checkTarballs() {
  const forbidden = [/\.tsbuildinfo$/, /(^|\/)(test|tests|__tests__)\//, /\.(test|spec)\.[cm]?[jt]sx?$/, /(^|\/)\.turnlog\//, /\.log$/]
  const sizes = []
  for (const p of packages) {
    const file = tarballs.get(p.json.name)
    const entries = run('tar', ['tzf', file])
      .split('\n')
      .filter(Boolean)
      .map((e) => e.replace(/^package\//, ''))
    const set = new Set(entries)
    const bad = entries.filter((e) => forbidden.some((re) => re.test(e)))
    if (bad.length > 0) fail(`${p.json.name}: the tarball holds build info or test files: ${bad.join(', ')}`)
    const x = join(packDir, 'x', p.dir)
    mkdirSync(x, { recursive: true })
    run('tar', ['xzf', file, '-C', x, '--strip-components=1'])
    const manifestText = readFileSync(join(x, 'package.json'), 'utf8')
    if (manifestText.includes('workspace:')) fail(`${p.json.name}: the packed package.json still has a workspace: range`)
    const manifest = JSON.parse(manifestText)
    for (const field of ['name', 'version', 'description', 'license', 'engines', 'files', 'types', 'exports']) {
      if (manifest[field] === undefined) fail(`${p.json.name}: the packed package.json has no "${field}"`)
    }
    if (!set.has('README.md')) fail(`${p.json.name}: no README.md in the tarball`)
    // the license text travels with each package (npm takes LICENSE from the package's own folder)
    if (!set.has('LICENSE')) fail(`${p.json.name}: no LICENSE in the tarball (copy the repository's LICENSE into packages/${p.dir})`)
    if (readFileSync(join(x, 'LICENSE'), 'utf8') !== readFileSync(join(root, 'LICENSE'), 'utf8'))
      fail(`${p.json.name}: its LICENSE differs from the repository's`)
    // every entry point and every source a map names is in the tarball
    const targets = [
      manifest.main,
      manifest.types,
      ...Object.values(manifest.bin ?? {}),
      ...Object.values(manifest.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e))),
    ]
    for (const t of targets) if (!set.has(posix.normalize(t))) fail(`${p.json.name}: ${t} (named by package.json) is not in the tarball`)
    for (const mapFile of entries.filter((e) => e.endsWith('.map'))) {
      for (const s of JSON.parse(readFileSync(join(x, mapFile), 'utf8')).sources) {
        const resolved = posix.normalize(posix.join(posix.dirname(mapFile), s))
        if (!set.has(resolved)) fail(`${p.json.name}: ${mapFile} names ${s}, which is not in the tarball`)
      }
    }
    const unpacked = Number(run('sh', ['-c', `tar xzOf '${file}' | wc -c`]).trim())
    sizes.push({ name: p.json.name, packed: statSync(file).size, unpacked, files: entries.length })
  }
  return sizes
}

/** The default lane: sections 4 to 7. Returns the npm install's milliseconds. */
function defaultLane() {
  // 4. The scratch app: the default install with plain npm, outside the repository.
  const app = mkdtempSync(join(tmpdir(), 'turnlog-app-'))
  scratch.push(app)
  if (!relative(root, app).startsWith('..')) fail(`the scratch app ${app} is inside the repository`)
  const defaultSet = ['turnlog', '@turnlog/core', '@turnlog/postgres', '@turnlog/audit', '@turnlog/cli']
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'turnlog-packaging-app',
        private: true,
        type: 'module',
        // what an application does: depend on `turnlog` alone; the overrides serve its @turnlog/* dependencies
        // from the fresh tarballs instead of the registry
        dependencies: { turnlog: `file:${tarballs.get('turnlog')}` },
        overrides: Object.fromEntries(defaultSet.filter((n) => n !== 'turnlog').map((n) => [n, `file:${tarballs.get(n)}`])),
        devDependencies: { typescript: version('typescript'), '@types/node': version('@types/node') },
      },
      null,
      2,
    ),
  )
  const installMs = step('npm install', () => {
    const t0 = Date.now()
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app })
    return Date.now() - t0
  })

  // 5. Nothing native, the opt-in importer absent.
  const natives = []
  ;(function walk(dir) {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name)
      if (e.isDirectory()) walk(path)
      else if (e.name.endsWith('.node') || e.name === 'binding.gyp') natives.push(relative(app, path))
    }
  })(join(app, 'node_modules'))
  if (natives.length > 0) fail(`the default install has native code: ${natives.join(', ')}`)
  for (const n of ['better-sqlite3', '@turnlog/hermes']) {
    try {
      statSync(join(app, 'node_modules', n))
      fail(`the default install has ${n}`)
    } catch (e) {
      if (e.code !== 'ENOENT') throw e
    }
  }

  // 6. A typed sample, compiled with tsc --strict and no skipLibCheck.
  writeFileSync(
    join(app, 'sample.ts'),
    `import { audit, createMessage, openStore, toWire, type Message } from 'turnlog'

  const store = await openStore({ embedded: true })
  try {
    const session = await store.createSession()
    const live: Message[] = [createMessage({ role: 'user', content: "What's in README.md?" })]
    await store.flush(session, live)
    live.push(createMessage({ role: 'assistant', content: 'A title and two commands.' }))
    await store.flush(session, live)
    await store.flush(session, live) // nothing new: writes nothing
    const { messages } = await store.load(session)
    const wire = toWire(messages)
    const report = await audit(store, session)
    const ok = messages.length === 2 && messages[0]?.id === live[0]?.id && wire.length === 2 && !('id' in (wire[0] ?? {}))
    if (!ok) throw new Error(\`unexpected: \${JSON.stringify({ messages, wire })}\`)
    console.log(JSON.stringify({ node: process.version, messages: messages.length, findings: report.findings.length }))
  } finally {
    await store.close()
  }
  `,
  )
  // A CommonJS service: `require()` of the ES modules (Node 20.19+, 22.12+, 24: no top-level await in their
  // import graph), typed by the same declarations; it gets the very module instances `import()` gets.
  writeFileSync(
    join(app, 'consumer.cts'),
    `import { createMessage, openStore, toWire } from 'turnlog'
  import * as core from '@turnlog/core'
  import * as postgres from '@turnlog/postgres'
  import * as auditPackage from '@turnlog/audit'
  import * as cli from '@turnlog/cli'

  async function main(): Promise<void> {
    // the same module instances as import(): what sample.js does through import() holds here too
    const esm = await import('turnlog')
    if (esm.openStore !== openStore || esm.createMessage !== core.createMessage || esm.audit !== auditPackage.audit)
      throw new Error('require() and import() gave different module instances')
    if (typeof postgres.withRetry !== 'function' || typeof cli.runCli !== 'function') throw new Error('missing exports')
    const wire = toWire([createMessage({ role: 'user', content: 'from CommonJS' })])
    if (wire[0]?.content !== 'from CommonJS') throw new Error(\`unexpected: \${JSON.stringify(wire)}\`)
    console.log(JSON.stringify({ node: process.version, commonjs: typeof module === 'object', exports: Object.keys(esm).length }))
  }
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  `,
  )
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: sampleCompilerOptions,
        files: ['sample.ts', 'consumer.cts'],
      },
      null,
      2,
    ),
  )
  step('tsc --strict', () => run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app }))

  // 7. The runtime steps, under the current Node and each major of the matrix.
  const runtimes = matrixRuntimes()
  for (const rt of runtimes) {
    const env = { ...rt.env, NODE_OPTIONS: '', npm_config_yes: 'false' }
    const opts = { cwd: app, env }
    step(`${rt.label}: import`, () => {
      const out = run(
        'node',
        [
          '--input-type=module',
          '-e',
          `import * as t from 'turnlog'; for (const n of ['openStore','createMessage','toWire','audit']) if (typeof t[n] !== 'function') throw new Error(n); console.log(process.version)`,
        ],
        opts,
      ).trim()
      if (rt.label.startsWith('v') && out !== rt.label) fail(`the app ran ${out}, not ${rt.label}`)
    })
    const sample = step(`${rt.label}: sample`, () => run('node', ['out/sample.js'], opts).trim())
    const required = step(`${rt.label}: require() from CommonJS`, () => run('node', ['out/consumer.cjs'], opts).trim())
    if (!required.includes('"commonjs":true')) fail(`the CommonJS consumer printed ${JSON.stringify(required)}`)
    ran.push(`${rt.label} require(): ${required}`)
    const v = step(`${rt.label}: npx turnlog --version`, () => run('npx', ['turnlog', '--version'], opts).trim())
    if (v !== expectedVersion) fail(`npx turnlog --version printed ${JSON.stringify(v)}, expected ${expectedVersion}`)
    // npm links one `turnlog` executable (the umbrella's or @turnlog/cli's, the same CLI): run the umbrella's too
    const direct = step(`${rt.label}: turnlog/dist/bin.js --version`, () =>
      run('node', ['node_modules/turnlog/dist/bin.js', '--version'], opts).trim(),
    )
    if (direct !== expectedVersion) fail(`the umbrella's executable printed ${JSON.stringify(direct)}, expected ${expectedVersion}`)
    step(`${rt.label}: npx turnlog demo`, () => run('npx', ['turnlog', 'demo'], opts))
    ran.push(`${rt.label} ${sample}`)
  }
  return installMs
}

// 8. Opt-in packages (the framework adapters, @turnlog/hermes): a package with a `test/packaging/` folder
// (never in its tarball) is installed on its own into a second scratch app, from its tarball, with the
// peers and the sample that folder names (`package.json`: { "dependencies": {…}, "prebuilt"?: [names],
// "variants"?: [{ "name", "dependencies", "nodeMajors"? }] }, `sample.ts`): the sample compiles with tsc
// --strict and no skipLibCheck, and runs under the current Node and each major of the matrix; each variant
// (other dependency versions) again. On each of those runtimes a CommonJS file `require()`s the package
// and checks it got the module `import()` gets.
// `prebuilt` names native dependencies installed through prebuild-install (better-sqlite3): the scratch
// app gets the version the workspace installed, and its install script is handed the binary the
// workspace's install built, as the local prebuild it looks for before downloading one (CI machines
// cannot download one; compiling it again from source costs a minute of CPU per Node). That binary is for the
// current Node, so such a sample runs on the current Node only; the `require()` still runs on every
// runtime (better-sqlite3 loads its binary when a database is opened, not when it is imported).
const nativeMatrix = process.env.TURNLOG_PACKAGING_NATIVE_MATRIX === '1'
const optIn = packages.filter((p) => {
  try {
    return statSync(join(root, 'packages', p.dir, 'test', 'packaging', 'sample.ts')).isFile()
  } catch {
    return false
  }
})
const requireCheck = `// argv[2]: a package name; require() must give the module namespace import() gives
const name = process.argv[2]
const required = require(name)
import(name).then((esm) => {
  if (required !== esm || Object.keys(esm).length === 0) throw new Error(\`require('\${name}') is not import('\${name}')\`)
  console.log(\`require('\${name}'): \${Object.keys(esm).length} exports on \${process.version}\`)
})
`
/**
 * Local prebuilds for the `prebuilt` native packages of an opt-in package, in `into`: for each, the version
 * the workspace installed (returned, for the app's dependencies) and
 * `into/<name>-v<version>-node-v<abi>-<platform>-<arch>.tar.gz` holding the workspace's
 * `build/Release/<name with _>.node`, the name and layout of the binaries the package publishes.
 */
function localPrebuilds(p, names, into) {
  const dependencies = {}
  const requireFromPackage = createRequire(join(root, 'packages', p.dir, 'package.json'))
  for (const name of names) {
    const dir = dirname(requireFromPackage.resolve(`${name}/package.json`))
    const { version: v } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    const binary = `build/Release/${name.replace(/^@[^/]+\//, '').replace(/-/g, '_')}.node`
    try {
      statSync(join(dir, binary))
    } catch {
      fail(`${name} in the workspace has no ${binary} (its install did not build it)`)
    }
    mkdirSync(into, { recursive: true })
    run('tar', [
      'czf',
      join(into, `${name}-v${v}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`),
      '-C',
      dir,
      binary,
    ])
    dependencies[name] = v
  }
  return dependencies
}
/**
 * One scratch app for an opt-in package: its tarball, the umbrella, the sample's dependencies; the sample
 * compiled with tsc --strict and run on each runtime whose major is in `majors` (every runtime when null),
 * the package `require()`d there too.
 */
function tryOptIn(p, dependencies, label, majors, prebuilt, runtimes) {
  const dir = join(root, 'packages', p.dir, 'test', 'packaging')
  const optApp = mkdtempSync(join(tmpdir(), `turnlog-app-${p.dir}-`))
  scratch.push(optApp)
  // prebuild-install reads its settings from `.prebuild-installrc` files up from the package's directory
  const native = localPrebuilds(p, prebuilt, join(optApp, 'prebuilds'))
  if (prebuilt.length > 0) writeFileSync(join(optApp, '.prebuild-installrc'), `local-prebuilds=${join(optApp, 'prebuilds')}\n`)
  writeFileSync(
    join(optApp, 'package.json'),
    JSON.stringify(
      {
        name: `turnlog-packaging-${p.dir}`,
        private: true,
        type: 'module',
        // the umbrella too (a sample imports `openStore` and `audit` from `turnlog`, as a user would), and
        // any workspace package the sample names, from its tarball: npm refuses an override of a direct
        // dependency (EOVERRIDE), so those are pointed at the file instead of overridden
        dependencies: {
          turnlog: `file:${tarballs.get('turnlog')}`,
          ...Object.fromEntries(
            Object.entries(dependencies).map(([name, range]) => [name, tarballs.has(name) ? `file:${tarballs.get(name)}` : range]),
          ),
          ...native,
          [p.json.name]: `file:${tarballs.get(p.json.name)}`,
        },
        // every other @turnlog/* package from the fresh tarballs, never the registry
        overrides: Object.fromEntries(
          packages
            .filter((q) => q.json.name !== p.json.name && q.json.name !== 'turnlog' && !(q.json.name in dependencies))
            .map((q) => [q.json.name, `file:${tarballs.get(q.json.name)}`]),
        ),
        devDependencies: { typescript: version('typescript'), '@types/node': version('@types/node') },
      },
      null,
      2,
    ),
  )
  writeFileSync(join(optApp, 'sample.ts'), readFileSync(join(dir, 'sample.ts'), 'utf8'))
  writeFileSync(join(optApp, 'require-check.cjs'), requireCheck)
  writeFileSync(join(optApp, 'tsconfig.json'), JSON.stringify({ compilerOptions: sampleCompilerOptions, files: ['sample.ts'] }, null, 2))
  step(`${label}: npm install`, () =>
    run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: optApp }),
  )
  // a prebuild that does not load (another Node ran the workspace's install) makes npm compile it: say so
  for (const name of prebuilt) {
    try {
      statSync(join(optApp, 'node_modules', name, 'build', 'Release', 'obj.target'))
      ran.push(`${label}: ${name} was compiled from source, not installed from the workspace's prebuild`)
    } catch (e) {
      if (e.code !== 'ENOENT') throw e
    }
  }
  step(`${label}: tsc --strict`, () =>
    run(process.execPath, [join(optApp, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', optApp], { cwd: optApp }),
  )
  for (const rt of runtimes) {
    if (majors !== null && !majors.some((m) => rt.label.includes(`v${m}.`))) continue
    const env = { ...rt.env, NODE_OPTIONS: '', npm_config_yes: 'false' }
    if (prebuilt.length > 0 && rt.env !== process.env && nativeMatrix) {
      // compile the native dependencies for this runtime from source, with its own headers
      step(`${rt.label}: ${label} npm rebuild ${prebuilt.join(' ')}`, () =>
        run('npm', ['rebuild', ...prebuilt, '--loglevel=error'], { cwd: optApp, env: { ...env, npm_config_nodedir: rt.nodeDir } }),
      )
      ran.push(`${rt.label} ${label}: ${prebuilt.join(', ')} compiled from source for it (TURNLOG_PACKAGING_NATIVE_MATRIX=1)`)
    }
    if (prebuilt.length === 0 || rt.env === process.env || nativeMatrix) {
      const out = step(`${rt.label}: ${label} sample`, () => run('node', ['out/sample.js'], { cwd: optApp, env }).trim())
      ran.push(`${rt.label} ${label}: ${out.split('\n').pop()}`)
    }
    const req = step(`${rt.label}: ${label} require()`, () => run('node', ['require-check.cjs', p.json.name], { cwd: optApp, env }).trim())
    ran.push(`${rt.label} ${label}: ${req}`)
  }
}
/**
 * The opt-in lanes: `opt:<dir>` for each opt-in package, `opt:<dir>:<n>` for its n-th variant (on the Node
 * majors it supports: a variant is left out when none of them runs).
 */
function optInLanes() {
  const majorsRun = [process.version.slice(1).split('.')[0], ...matrixMajors()]
  return optIn.flatMap((p) => {
    const spec = JSON.parse(readFileSync(join(root, 'packages', p.dir, 'test', 'packaging', 'package.json'), 'utf8'))
    return [
      `opt:${p.dir}`,
      ...(spec.variants ?? []).flatMap((v, n) =>
        v.nodeMajors === undefined || v.nodeMajors.some((m) => majorsRun.includes(m)) ? [`opt:${p.dir}:${n}`] : [],
      ),
    ]
  })
}
/** An opt-in lane (`opt:<dir>` or `opt:<dir>:<variant index>`). */
function optInLane(name) {
  const [, dir, variant] = name.split(':')
  const p = optIn.find((q) => q.dir === dir)
  if (p === undefined) fail(`no opt-in package ${dir}`)
  const spec = JSON.parse(readFileSync(join(root, 'packages', p.dir, 'test', 'packaging', 'package.json'), 'utf8'))
  const prebuilt = spec.prebuilt ?? []
  const runtimes = matrixRuntimes()
  if (variant === undefined) return tryOptIn(p, spec.dependencies, p.json.name, null, prebuilt, runtimes)
  // `variants`: the same sample with other versions of its dependencies (e.g. the next major of a peer),
  // on the Node majors they support
  const v = spec.variants[Number(variant)]
  tryOptIn(p, { ...spec.dependencies, ...v.dependencies }, `${p.json.name} with ${v.name}`, v.nodeMajors ?? null, prebuilt, runtimes)
}

// 9. The docs' examples (scripts/docs-examples-test.mjs), on the current Node: every TypeScript block of the
// README, docs/getting-started.md, integrating.md, formats.md, docs/adapters/ and the packages' READMEs
// compiled with tsc --strict in a third scratch app that installs what the docs' `npm install` lines name;
// the complete programs that need no API key or server run on embedded PGlite.
/** The docs lane. Returns the report's lines. */
function docsLane() {
  return testDocExamples({
    root,
    tarballs,
    publicNames: packages.map((p) => p.json.name),
    version: workspaceVersion(root),
    step,
    run,
    fail,
    scratch,
  })
}

// 10. A lane's child process runs its lane and hands its results to the parent on its last line; the
// parent checks the tarballs, runs the lanes (TURNLOG_PACKAGING_LANES at a time, the longest first) and
// reports.
const RESULT = '@@packaging-lane '
if (lane !== undefined) {
  const result = { ran, docs: [], installMs: undefined }
  if (lane === 'default') result.installMs = defaultLane()
  else if (lane === 'docs') result.docs = docsLane()
  else if (lane.startsWith('opt:')) optInLane(lane)
  else fail(`no lane ${lane}`)
  console.log(`${RESULT}${JSON.stringify({ ...result, timings })}`)
  cleanUp()
  process.exit(0)
}
const sizes = step('check the tarballs', () => checkTarballs())
// provisioned once here: the lanes find them installed
for (const major of matrixMajors()) step(`provision Node ${major}`, () => ensureNode(major))
// the longest first (measured: docs ≈ 85 s, default ≈ 80 s, an opt-in package 35 to 60 s, a variant less)
const lanes = ['docs', 'default', ...optInLanes().sort((a, b) => a.split(':').length - b.split(':').length)]
const width = Math.max(1, Number(process.env.TURNLOG_PACKAGING_LANES ?? 3))
const results = new Map()
const children = new Set()
let failed
const queue = [...lanes]
/** Stops the running lanes and what they started (each is a process group of its own). */
function stopLanes() {
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGTERM')
    } catch {
      // already gone
    }
  }
}
// the lanes are detached (their own groups): a signal to this process (the test command's timeout,
// Ctrl-C) must reach them too, or they would go on installing and running after the test was stopped
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopLanes()
    cleanUp()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}
/** Runs lanes from the queue one after another until it is empty or one failed. */
async function worker() {
  while (queue.length > 0 && failed === undefined) {
    const name = queue.shift()
    const t0 = Date.now()
    const r = await new Promise((resolve) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, TURNLOG_PACKAGING_LANE: name, TURNLOG_PACKAGING_PACK_DIR: packDir },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // its own process group: a failure elsewhere stops it and what it started
      })
      children.add(child)
      const out = []
      child.stdout.on('data', (c) => out.push(c))
      child.stderr.on('data', (c) => out.push(c))
      child.on('close', (code, signal) => {
        children.delete(child)
        resolve({ name, code, signal, text: Buffer.concat(out).toString('utf8'), ms: Date.now() - t0 })
      })
    })
    results.set(name, r)
    if (r.code !== 0 && failed === undefined) {
      failed = r
      stopLanes()
    }
  }
}
await Promise.all(Array.from({ length: width }, () => worker()))
if (failed !== undefined) {
  process.stderr.write(failed.text)
  fail(`lane ${failed.name} exited ${failed.code ?? failed.signal} after ${(failed.ms / 1000).toFixed(1)} s`)
}
const laneResults = lanes.map((name) => {
  const r = results.get(name)
  const line = r.text.split('\n').find((l) => l.startsWith(RESULT))
  if (line === undefined) fail(`lane ${name} printed no result:\n${r.text}`)
  return { name, ms: r.ms, ...JSON.parse(line.slice(RESULT.length)) }
})

// 11. Report.

const kb = (n) => `${(n / 1024).toFixed(1)} kB`
console.log('packaging test: tarballs (packed / unpacked / files):')
for (const s of sizes)
  console.log(`  ${s.name.padEnd(18)} ${kb(s.packed).padStart(9)} ${kb(s.unpacked).padStart(10)} ${String(s.files).padStart(4)}`)
const installMs = laneResults.find((r) => r.name === 'default').installMs
console.log(`packaging test: npm install of the default set: ${(installMs / 1000).toFixed(1)} s`)
for (const r of laneResults.flatMap((l) => l.ran)) console.log(`packaging test: ran on ${r}`)
for (const d of laneResults.flatMap((l) => l.docs)) console.log(`packaging test: ${d}`)
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`
console.log(`packaging test: steps: ${timings.map(([n, ms]) => `${n} ${secs(ms)}`).join('; ')}`)
console.log(`packaging test: lanes (${width} at a time):`)
for (const l of laneResults) console.log(`  ${l.name} ${secs(l.ms)}: ${l.timings.map(([n, ms]) => `${n} ${secs(ms)}`).join('; ')}`)
console.log(`packaging test: PASS in ${((Date.now() - started) / 1000).toFixed(1)} s`)
cleanUp()
