// A process that takes and gives up the data-directory lock in a loop, for data-dir-lock.int.test.ts
// (plain ESM against the built dist).
//
// argv[2] is JSON: { dir, log, untilMs, dieEvery }. Until the wall clock passes `untilMs` it tries to
// take the lock on `dir`; holding it, it appends "enter <pid>" to the shared `log` (O_APPEND, one write
// per line), stays a moment, appends "exit <pid>" and releases. Every `dieEvery`-th acquisition (0:
// never) it exits while holding the lock, without releasing it, as a killed holder would: the parent
// starts a new racer. It prints "held <n> busy <m>" at the end.
import { appendFileSync } from 'node:fs'
import { acquireDataDirLock } from '@turnlog/postgres/internal'

const { dir, log, untilMs, dieEvery } = JSON.parse(process.argv[2])
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
let held = 0
let busy = 0
while (Date.now() < untilMs) {
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
