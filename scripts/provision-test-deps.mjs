#!/usr/bin/env node
// The test command's first step: the system programs the test command needs, so that the README's two commands alone set up
// a machine. Tests drive programs that npm cannot install: headless Chromium (/usr/bin/chromium, the
// inspect page), PgBouncer (the security tests' transaction pooler) and `ip` (iproute2: the keep-alive
// test cuts a veth link in a network namespace, as root); the database tests need a Postgres:
// TURNLOG_TEST_DATABASE_URL, a server on 127.0.0.1:5432, or Debian's initdb for a private cluster
// (packages/testing/README.md), and two tests always start a private cluster (so initdb is needed). Local clusters that are installed but stopped are started. What is missing
// is installed with apt-get when running as root (CI, containers); otherwise the command stops at once
// with one line naming the packages to install.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { connect } from 'node:net'

const has = (...paths) => paths.some((p) => existsSync(p))
const run = (cmd, args, env = process.env) => spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env })
const listening = (port) =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 1000 })
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket
      .once('connect', () => done(true))
      .once('error', () => done(false))
      .once('timeout', () => done(false))
  })
const initdb = () =>
  existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`))

// Start installed clusters that are stopped (best effort: the tests fall back to a private cluster).
function startClusters() {
  if (!existsSync('/etc/postgresql') || run('sh', ['-c', 'command -v pg_ctlcluster']).status !== 0) return
  for (const version of readdirSync('/etc/postgresql')) run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'])
}

async function missing() {
  const packages = []
  if (!has('/usr/bin/chromium')) packages.push('chromium')
  if (!has('/usr/sbin/pgbouncer', '/usr/bin/pgbouncer')) packages.push('pgbouncer')
  // `ip` (a network namespace and a veth pair: the dead-consumer keep-alive test, run as root)
  if (!has('/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip')) packages.push('iproute2')
  if (process.env.TURNLOG_TEST_DATABASE_URL === undefined && !(await listening(5432))) {
    startClusters()
    if (!(await listening(5432)) && !initdb()) packages.push('postgresql')
  }
  // the prepared-transaction and keep-alive tests start a private cluster of their own (initdb), whatever server the rest uses
  if (!initdb() && !packages.includes('postgresql')) packages.push('postgresql')
  return packages
}

const needed = await missing()
if (needed.length > 0) {
  const isRoot = process.getuid?.() === 0
  const apt = run('sh', ['-c', 'command -v apt-get']).status === 0
  if (!isRoot || !apt) {
    console.error(
      `test prerequisites missing: ${needed.join(', ')}; install them (sudo apt-get install -y ${needed.join(' ')}) and run the test command again`,
    )
    process.exit(1)
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const update = run('apt-get', ['update', '-qq'], env)
  const install = update.status === 0 ? run('apt-get', ['install', '-y', '-qq', ...needed], env) : update
  if (install.status !== 0) {
    const why = (install.stderr ?? '').trim().split('\n').pop() ?? ''
    console.error(
      `test prerequisites missing: ${needed.join(', ')}; apt-get could not install them (${why}): install them and run the test command again`,
    )
    process.exit(1)
  }
  if (needed.includes('postgresql')) startClusters()
  const still = await missing()
  if (still.length > 0) {
    console.error(`test prerequisites still missing after apt-get install: ${still.join(', ')}`)
    process.exit(1)
  }
  console.log(`installed test prerequisites: ${needed.join(', ')}`)
}
