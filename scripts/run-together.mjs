#!/usr/bin/env node
// Runs several package scripts at once (`node scripts/run-together.mjs test:packaging test:node-versions`),
// each with its output held and printed whole when it ends (no interleaved lines), and exits non-zero when
// any failed. The test command ends with the packaging test and the Node-matrix test this way: they are
// independent (one packs and installs into scratch apps, the other runs the contract suites under other
// Node majors), and side by side they take little more than the longer one. The static checks run the same
// way before jest, beside the provisioning of the system programs the tests need (test:provision, build,
// typecheck, lint, format:check and depcheck: each one process, none reads what another writes). The Node runtimes of the matrix are provisioned first, once, so two
// scripts never install the same one at the same time.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode, matrixMajors } from './node-runtime.mjs'

const scripts = process.argv.slice(2)
if (scripts.length === 0) {
  console.error('usage: node scripts/run-together.mjs <script> [<script> …]')
  process.exit(2)
}
// Each script's command line from package.json, run by `sh` with the workspace's node_modules/.bin first
// on PATH (what `pnpm run` does), not through `pnpm run`: with five `pnpm run` processes at once, a
// temporary file (`_tmp_<pid>_…`, the naming pnpm uses for its atomic writes; which process wrote it was
// not pinned down) appeared in the workspace root and vanished, and the concurrent `prettier --check .`
// listed it and then could not read it (ENOENT: a CI run failed). Without pnpm none runs concurrently.
const root = fileURLToPath(new URL('..', import.meta.url))
const { scripts: defined } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
for (const name of scripts) {
  if (typeof defined[name] !== 'string') {
    console.error(`run-together: FAIL: package.json has no script ${name}`)
    process.exit(2)
  }
}
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` }
const started = Date.now()
for (const major of matrixMajors()) {
  try {
    console.log(`run-together: Node ${major} is ${ensureNode(major).version}`)
  } catch (error) {
    console.error(`run-together: FAIL: ${error.message}`)
    process.exit(1)
  }
}
const results = await Promise.all(
  scripts.map(
    (name) =>
      new Promise((resolve) => {
        const t0 = Date.now()
        const chunks = []
        const child = spawn('sh', ['-c', defined[name]], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
        chunks.push(Buffer.from(`$ ${defined[name]}\n`))
        child.stdout.on('data', (c) => chunks.push(c))
        child.stderr.on('data', (c) => chunks.push(c))
        child.on('close', (code, signal) => {
          process.stdout.write(
            `\n=== ${name}: ${code === 0 ? 'passed' : `FAILED (${code ?? signal})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s ===\n`,
          )
          process.stdout.write(Buffer.concat(chunks))
          resolve(code === 0)
        })
      }),
  ),
)
console.log(`\nrun-together: ${scripts.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
process.exit(results.every(Boolean) ? 0 : 1)
