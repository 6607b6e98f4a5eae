// A writer process for sigkill-writer.int.test.ts, run against the built dist (plain ESM: the child is
// a real process, started by `node`, not by jest).
//
// argv[2] is JSON: { connectionString, sessionId, seed, total, resumeAt }.
// It builds the deterministic live list of `total` messages (message i has id seededUuid(seed, i)),
// first re-flushes the whole live list a killed predecessor had in memory (`resumeAt` messages, which
// may or may not have been written), then grows the list batch by batch, flushing after each. Every
// few messages it also carries an ephemeral nudge, which flush must skip. It prints
// "ready", "flush <n>" before and "done <n>" after each flush, and "finished".
import { createHash } from 'node:crypto'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'

const { connectionString, sessionId, seed, total, resumeAt } = JSON.parse(process.argv[2])

/** Same formula as seededUuid in fault-helpers.ts (a version 4 layout). */
function seededUuid(s, index) {
  const h = createHash('sha256').update(`${s}:${index}`).digest('hex')
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** Same formula as killWriterPayload in sigkill-writer.int.test.ts. */
function payload(i) {
  const content = `${seed}#${i} ${'x'.repeat((i * 7919) % 3000)}`
  return i % 3 === 0 ? { role: 'user', content } : { role: 'assistant', content }
}

const messages = Array.from({ length: total }, (_, i) =>
  createMessage(payload(i), { id: seededUuid(seed, i), createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, i)).toISOString() }),
)
const nudge = (n) => createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true, id: seededUuid(`${seed}-nudge`, n) })

/** The live list of the first n messages, with a nudge after every 7th. */
function live(n) {
  const list = []
  for (let i = 0; i < n; i++) {
    list.push(messages[i])
    if (i % 7 === 6) list.push(nudge(i))
  }
  return list
}

const out = (line) => process.stdout.write(`${line}\n`)

const store = await openStore({ connectionString, migrate: false, pool: { max: 1 } })
out('ready')
let n = resumeAt
if (n > 0) {
  out(`flush ${n}`)
  await store.flush(sessionId, live(n))
  out(`done ${n}`)
}
while (n < total) {
  n = Math.min(total, n + 1 + ((n * 31) % 12))
  out(`flush ${n}`)
  await store.flush(sessionId, live(n))
  out(`done ${n}`)
}
await store.close()
out('finished')
