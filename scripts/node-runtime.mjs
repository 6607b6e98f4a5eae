// Node runtimes for the version matrix of the test command (scripts/packaging-test.mjs,
// scripts/node-versions-test.mjs). The npm registry's `node-<platform>-<arch>` packages ship the official
// Node binaries; one is installed per major into a cache directory outside the repository
// (`$XDG_CACHE_HOME/turnlog/node-<major>`, else `~/.cache/turnlog/node-<major>`) through npm and its cache, so
// a re-run starts it at once and a fresh machine needs nothing but npm.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'

/** The majors the matrix runs besides the current Node: `TURNLOG_TEST_NODE_VERSIONS` ("22 24" by default; "none" skips). */
export function matrixMajors() {
  const raw = process.env.TURNLOG_TEST_NODE_VERSIONS ?? '22 24'
  if (raw.trim() === '' || raw.trim() === 'none') return []
  return raw.split(/[\s,]+/).filter(Boolean)
}

/**
 * The bin directory of Node `major` (e.g. "22"), installed from the registry when not cached yet.
 * Returns `{ binDir, version }`; throws with one line naming what failed.
 */
export function ensureNode(major) {
  const pkg = `node-${process.platform}-${process.arch}`
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'turnlog', `node-${major}`)
  const binDir = join(dir, 'node_modules', pkg, 'bin')
  const node = join(binDir, 'node')
  if (!existsSync(node)) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n')
    try {
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefer-offline', `${pkg}@${major}`], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    } catch (error) {
      throw new Error(
        `could not install Node ${major} (npm install ${pkg}@${major} in ${dir}): ${String(error.stderr ?? error)
          .trim()
          .split('\n')
          .pop()}`,
      )
    }
  }
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  if (!version.startsWith(`v${major}.`)) throw new Error(`${node} is ${version}, not Node ${major}`)
  return { binDir, version }
}

/** An environment whose `node` (and so `npx`, `npm`, whose scripts start with `#!/usr/bin/env node`) is the one in `binDir`. */
export function envWithNode(binDir, env = process.env) {
  return { ...env, PATH: `${binDir}${delimiter}${env.PATH ?? ''}` }
}
