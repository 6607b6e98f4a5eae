// A process that opens an embedded store through the library, for data-dir-lock.int.test.ts (plain
// ESM against the built dist: the child is a real process, started by `node`, not by jest).
//
// argv[2] is JSON: { dataDir, sessionId, prefix, count }. It opens the store (printing "opened", or
// "refused <code> <details json>" and exiting 0 when the open fails with a TurnlogError), creates the
// session, appends `count` messages one at a time printing "ack <id>" after each acknowledged append,
// prints "idle" and then waits. On a line "more <n>" on stdin it appends n more; on "close" (or stdin
// closed) it closes the store and prints "closed".
import { createInterface } from 'node:readline'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'

const { dataDir, sessionId, prefix, count } = JSON.parse(process.argv[2])
const out = (line) => process.stdout.write(`${line}\n`)

let store
try {
  store = await openStore({ embedded: true, dataDir })
} catch (error) {
  if (error?.name === 'TurnlogError') {
    out(`refused ${error.code} ${JSON.stringify(error.details)}`)
    process.exit(0)
  }
  throw error
}
out('opened')
await store.createSession({ id: sessionId }).catch(() => {})
let n = 0
async function append(k) {
  for (let i = 0; i < k; i++) {
    const m = createMessage({ role: 'user', content: `${prefix} #${n}` })
    await store.append(sessionId, [m])
    n++
    out(`ack ${m.id}`)
  }
}
await append(count)
out('idle')
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  const [word, arg] = line.split(' ')
  if (word === 'more') {
    await append(Number(arg))
    out('idle')
  } else if (word === 'close') break
}
await store.close()
out('closed')
process.exit(0)
