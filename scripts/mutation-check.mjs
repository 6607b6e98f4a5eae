#!/usr/bin/env node
// The mutation check: puts one realistic bug at a time into the code behind a core invariant, runs the
// tests named for it, and expects them to fail ("killed"). A mutant the tests survive is a promise no
// test guards. The list lives in scripts/mutants.mjs; the result table in docs/reliability.md.
//
//   pnpm mutation                 every mutant (needs the test server, like the suite)
//   pnpm mutation --check         only checks that every search string occurs exactly once (no tests, < 1 s)
//   pnpm mutation --only a,b      these mutants
//   pnpm mutation --list          the list
//   pnpm mutation --report FILE   also writes the markdown table to FILE
//
// Each mutant edits one file in place; the original is restored in `finally`, kept in
// .mutation-backup/ until then (a run that was killed outright restores it at the next start; one
// whose process still runs is left alone, and a second run refuses to start), and checked byte for
// byte after the restore, with `git checkout` as the last resort. Exit status: 0 when
// every mutant was killed; 1 when one survived, a search string was not found exactly once, or the
// unmutated tests fail (the baseline: a mutant can only be "killed" by tests that pass without it).
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MUTANTS } from './mutants.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const BACKUP = join(ROOT, '.mutation-backup')
const JEST = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js')
const TIMEOUT_MS = 10 * 60_000

const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const value = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}

const sha = (text) => createHash('sha256').update(text).digest('hex')
const log = (line) => process.stdout.write(`${line}\n`)

/** True when process `pid` still runs (another mutation run holding its mutant in place). */
function alive(pid) {
  if (typeof pid !== 'number' || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/**
 * Restores files a killed run left mutated (their originals are in .mutation-backup/); returns the
 * mutants of runs still going (another process: their files are left alone, read as their originals).
 */
function recoverLeftovers() {
  const running = new Map()
  if (!existsSync(BACKUP)) return running
  for (const name of readdirSync(BACKUP)) {
    const { file, original, pid } = JSON.parse(readFileSync(join(BACKUP, name), 'utf8'))
    if (alive(pid)) {
      running.set(file, { original, pid })
      continue
    }
    writeFileSync(join(ROOT, file), original)
    rmSync(join(BACKUP, name))
    log(`restored ${file} (left mutated by an interrupted run)`)
  }
  return running
}

function occurrences(text, search) {
  let n = 0
  for (let i = text.indexOf(search); i >= 0; i = text.indexOf(search, i + 1)) n++
  return n
}

/**
 * Problems with the list itself: unknown files, search strings not found exactly once, duplicate ids.
 * A file another run holds mutated is checked as its original (`running`).
 */
function checkList(mutants, running = new Map()) {
  const problems = []
  const ids = new Set()
  for (const m of mutants) {
    if (ids.has(m.id)) problems.push(`${m.id}: duplicate id`)
    ids.add(m.id)
    const path = join(ROOT, m.file)
    if (!existsSync(path)) {
      problems.push(`${m.id}: ${m.file} does not exist`)
      continue
    }
    const n = occurrences(running.get(m.file)?.original ?? readFileSync(path, 'utf8'), m.search)
    if (n !== 1) problems.push(`${m.id}: the search string occurs ${n} times in ${m.file} (must be exactly once)`)
    if (m.search === m.replace) problems.push(`${m.id}: the replacement equals the search string`)
    for (const t of m.tests) if (!existsSync(join(ROOT, t))) problems.push(`${m.id}: test file ${t} does not exist`)
  }
  return problems
}

/** Runs jest on `tests` (optionally only the tests whose name matches `name`); true when they all pass. */
function runJest(tests, name) {
  const jestArgs = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', JEST, '--ci', '--silent', ...tests]
  if (name !== undefined) jestArgs.push('-t', name)
  const started = Date.now()
  const result = spawnSync(process.execPath, jestArgs, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`
  const failed = [...output.matchAll(/^\s+● (.+)$/gm)].map((m) => m[1]).filter((t) => !t.startsWith('Console'))
  const failedFiles = [...output.matchAll(/^FAIL (\S+)/gm)].map((m) => m[1].split('/').pop())
  return {
    passed: result.status === 0,
    timedOut: result.error?.code === 'ETIMEDOUT',
    failed,
    failedFiles,
    output,
    seconds: (Date.now() - started) / 1000,
  }
}

/** Applies `m`, runs `fn`, and restores the file whatever happens. */
function withMutant(m, fn) {
  const path = join(ROOT, m.file)
  const original = readFileSync(path, 'utf8')
  const digest = sha(original)
  mkdirSync(BACKUP, { recursive: true })
  const backup = join(BACKUP, `${m.id}.json`)
  writeFileSync(backup, JSON.stringify({ file: m.file, original, pid: process.pid }))
  try {
    writeFileSync(
      path,
      original.replace(m.search, () => m.replace),
    )
    return fn()
  } finally {
    writeFileSync(path, original)
    if (sha(readFileSync(path, 'utf8')) !== digest) {
      spawnSync('git', ['checkout', '--', m.file], { cwd: ROOT })
      throw new Error(`could not restore ${m.file}: checked out from git; compare it with ${relative(ROOT, backup)}`)
    }
    rmSync(backup)
  }
}

function table(rows) {
  const lines = ['| mutant | invariant | killing test | result |', '|---|---|---|---|']
  for (const r of rows) lines.push(`| \`${r.id}\` | ${r.invariant} | ${r.killer} | ${r.result} |`)
  return lines.join('\n')
}

let interrupted = false

async function main() {
  const running = recoverLeftovers()
  const only = value('--only')?.split(',')
  const mutants = only === undefined ? MUTANTS : MUTANTS.filter((m) => only.includes(m.id))
  if (only !== undefined && mutants.length !== only.length) {
    log(`unknown mutant ids: ${only.filter((id) => !MUTANTS.some((m) => m.id === id)).join(', ')}`)
    return 1
  }
  if (flag('--list')) {
    for (const m of mutants) log(`${m.id.padEnd(34)} ${m.invariant}  [${m.file}]`)
    return 0
  }
  const problems = checkList(mutants, running)
  for (const p of problems) log(`LIST ERROR ${p}`)
  if (flag('--check')) {
    log(problems.length === 0 ? `${mutants.length} mutants: every search string occurs exactly once` : `${problems.length} problems`)
    return problems.length === 0 ? 0 : 1
  }
  if (problems.length > 0) return 1
  if (running.size > 0) {
    // two runs at once would judge each other's mutants (and one would restore the other's file)
    for (const [file, { pid }] of running) log(`another mutation run (pid ${pid}) holds a mutant in ${file}: wait for it`)
    return 1
  }

  const started = Date.now()
  // the baseline: every test the mutants name must pass unmutated
  const baselineFiles = [...new Set(mutants.flatMap((m) => m.tests))]
  log(`baseline: ${baselineFiles.length} test files`)
  const baseline = runJest(baselineFiles)
  if (!baseline.passed) {
    log(baseline.output.slice(-4000))
    log(`baseline FAILED (${baseline.failed.slice(0, 5).join('; ')}): fix the tests before judging mutants`)
    return 1
  }
  log(`baseline passed in ${baseline.seconds.toFixed(0)} s`)

  const rows = []
  for (const m of mutants) {
    // lets a Ctrl-C or SIGTERM that arrived during the last run be handled (spawnSync blocks signals' handlers)
    await new Promise((resolve) => setImmediate(resolve))
    if (interrupted) {
      log('interrupted')
      return 130
    }
    const run = withMutant(m, () => runJest(m.tests, m.name))
    // how many tests failed: all of a file failing at once can mean the mutant broke its setup (a
    // migration that no longer runs), not that a test caught the bug; look at such a kill closer
    const result = run.timedOut ? 'killed (timeout)' : run.passed ? '**SURVIVED**' : `killed (${run.failed.length} failed)`
    const killer =
      run.passed || run.failed.length === 0
        ? m.tests.map((t) => t.split('/').pop()).join(', ')
        : `${run.failedFiles[0] ?? m.tests[0].split('/').pop()}: ${run.failed[0]}`
    rows.push({ id: m.id, invariant: m.invariant, killer: killer.replace(/\|/g, '\\|'), result, seconds: run.seconds })
    log(
      `${result.replace(/\*/g, '').padEnd(16)} ${m.id.padEnd(34)} ${run.seconds.toFixed(0).padStart(4)} s  ${run.passed ? '' : (run.failed[0] ?? '')}`,
    )
  }
  const survived = rows.filter((r) => r.result.includes('SURVIVED'))
  const minutes = ((Date.now() - started) / 60_000).toFixed(1)
  const summary = `${rows.length - survived.length} of ${rows.length} mutants killed in ${minutes} min (baseline ${baseline.seconds.toFixed(0)} s)`
  const markdown = `${table(rows)}\n\n${summary}\n`
  log(`\n${markdown}`)
  const report = value('--report')
  if (report !== undefined) writeFileSync(resolve(report), markdown)
  return survived.length === 0 ? 0 : 1
}

// A Ctrl-C ends the child jest too; the run's finally block restores the file, then the loop stops. If
// this process is killed outright (SIGKILL), the next run restores the file from .mutation-backup/.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true
  })
}
process.exitCode = await main()
