#!/usr/bin/env node
// Part of the test command (after the packaging test): the store contract suites
// (packages/postgres/test/contract.*: Postgres and PGlite) under each Node major of
// TURNLOG_TEST_NODE_VERSIONS ("22 24" by default, "none" to skip), with the runtimes of
// scripts/node-runtime.mjs. The main jest run covers the current Node. Here the PGlite stores open as
// `openStore({ embedded: true })` does (TURNLOG_TEST_PGLITE_TEMPLATE=off): the main run loads them from a
// migrated dump through `openStore({ pglite })`, so each path runs on every Node of the matrix.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ensureNode, envWithNode, matrixMajors } from './node-runtime.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const results = []
for (const major of matrixMajors()) {
  const t0 = Date.now()
  let runtime
  try {
    runtime = ensureNode(major)
  } catch (error) {
    console.error(`node versions test: FAIL: ${error.message}`)
    process.exit(1)
  }
  console.log(`node versions test: store contract suites on Node ${runtime.version}`)
  const env = {
    ...envWithNode(runtime.binDir),
    NODE_OPTIONS: '--experimental-vm-modules --no-warnings=ExperimentalWarning',
    TURNLOG_TEST_PGLITE_TEMPLATE: 'off',
  }
  const r = spawnSync('node', ['node_modules/jest/bin/jest.js', 'packages/postgres/test/contract'], { cwd: root, env, stdio: 'inherit' })
  if (r.status !== 0) {
    console.error(`node versions test: FAIL: the contract suites failed on Node ${runtime.version}`)
    process.exit(1)
  }
  results.push(`${runtime.version} ${((Date.now() - t0) / 1000).toFixed(1)} s`)
}
console.log(`node versions test: PASS (${results.length === 0 ? 'no versions: TURNLOG_TEST_NODE_VERSIONS=none' : results.join('; ')})`)
