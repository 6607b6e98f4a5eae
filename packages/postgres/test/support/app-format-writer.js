// A process that has an application format the test process never registers, for
// format-promises.int.test.ts (plain ESM against the built dist: a real process, started by `node`).
//
// argv[2] is JSON: { connectionString, sessionId }. It registers the format `promises.app-items`
// (items `{ kind: 'call' | 'output', id }`: a call opens its id, an output answers it), appends one
// call item and one orphan output item to the session, and prints their ids as one JSON line.
import { createMessage, jsonFormat, registerMessageFormat } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'

const { connectionString, sessionId } = JSON.parse(process.argv[2])
registerMessageFormat({
  ...jsonFormat,
  name: 'promises.app-items',
  toolCalls: (p) => (p.kind === 'call' ? [p.id] : []),
  toolResults: (p) => (p.kind === 'output' ? [p.id] : []),
  interruptedResults: (ids) => ids.map((id) => ({ kind: 'output', id, text: 'interrupted' })),
})
const store = await openStore({ connectionString, migrate: false })
try {
  const call = createMessage({ kind: 'call', id: 'c1', text: 'a\u0000b' }, { format: 'promises.app-items' })
  const orphan = createMessage({ kind: 'output', id: 'c9', text: 'x' }, { format: 'promises.app-items' })
  await store.append(sessionId, [call, orphan])
  process.stdout.write(`${JSON.stringify({ ids: [call.id, orphan.id] })}\n`)
} finally {
  await store.close()
}
