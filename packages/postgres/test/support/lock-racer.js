// A process that takes and gives up the data-directory lock in a loop, for data-dir-lock.int.test.ts
// (plain ESM against the built dist).
//
// argv[2] is JSON: { dir, log, target, dieEvery }. Until the shared log holds `target` acquisitions (of
// all racers; a count, not a wall-clock window, so a slow start on a loaded machine still races) it tries
// to take the lock on `dir`; holding it, it appends "enter <pid>" to the shared `log` (O_APPEND, one write
// per line), stays a moment, appends "exit <pid>" and releases. Every `dieEvery`-th acquisition (0:
// never) it exits while holding the lock, without releasing it, as a killed holder would: the parent
// starts a new racer. It prints "held <n> busy <m>" at the end.
import { appendFileSync, readFileSync } from 'node:fs'
import { acquireDataDirLock } from '@turnlog/postgres/internal'

const { dir, log, target, dieEvery } = JSON.parse(process.argv[2])
const acquisitions = () =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('enter')).length
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
let held = 0
let busy = 0
while (acquisitions() < target) {
  let lock
  try {
    lock = acquireDataDirLock(dir)
  } catch (error) {
    if (error?.code !== 'DATA_DIR_LOCKED') throw error
    busy++
    await pause(Math.random() * 2)
    continue
  }
  held++
  appendFileSync(log, `enter ${process.pid}\n`)
  if (Math.random() < 0.5) await pause(Math.random() * 3)
  appendFileSync(log, `exit ${process.pid}\n`)
  if (dieEvery > 0 && held % dieEvery === 0) {
    process.stdout.write(`held ${held} busy ${busy} died\n`)
    process.exit(0)
  }
  lock.release()
  if (Math.random() < 0.3) await pause(Math.random() * 2)
}
process.stdout.write(`held ${held} busy ${busy}\n`)
