/**
 * docs/integrating.md, "Your own loop", as a new user's service lives it: the page's loop (taken from
 * the page, transpiled, with a scripted model and a tool that never returns) runs in a Node process of
 * its own against Postgres, importing the built `turnlog` by name, and is killed with SIGKILL while the
 * tool runs. The page's promises about that crash: "the reloaded `live` holds it without its answer, and
 * the check drops the platform's redelivery of it"; the open call is in `toolPairing(live).unanswered`;
 * resuming as the page says (run the call, push its result, flush, call the model) leaves a session the
 * audit finds clean. The store contract suite runs the same loop in-process, never killed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { audit, createMessage, openStore, toolPairing, type Message, type PostgresStore } from 'turnlog'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const doc = readFileSync(fileURLToPath(new URL('../../../docs/integrating.md', import.meta.url)), 'utf8')

/** The page's `async function runTurn(` up to its closing brace at the same indentation. */
function runTurnOf(text: string): string {
  const start = text.indexOf('async function runTurn(')
  if (start < 0) throw new Error('docs/integrating.md has no runTurn')
  const end = text.indexOf('\n}\n', start)
  return text.slice(start, end + 2)
}

/**
 * The service: the page's loop with a scripted model (a tool call, then an answer after the tool's
 * result) and a tool that prints `tool started` and never returns when `HANG` is set; it runs one turn
 * for `PLATFORM_ID` and prints `returned`.
 */
const SERVICE = `
import { openStore, createMessage, toWire, withRetry, type Message, type ToolCall } from 'turnlog'
const store = await openStore({ connectionString: process.env.URL!, directConnection: true })
let calls = 0
const openai = { chat: { completions: { async create(body: { model: string; messages: { role: string }[] }) {
  const last = body.messages[body.messages.length - 1]!
  if (last.role === 'tool') return { choices: [{ message: { role: 'assistant' as const, content: 'It is the acme readme.', refusal: null } }] }
  return { choices: [{ message: { role: 'assistant' as const, content: null, refusal: null, tool_calls: [
    { id: 'call_' + process.pid + '_' + ++calls, type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"README.md"}' } },
  ] } }] }
} } } }
async function runTool(call: ToolCall): Promise<string> {
  if (process.env.HANG === '1') {
    console.log('tool started ' + call.id)
    setInterval(() => {}, 1000)
    await new Promise(() => {})
  }
  return '# acme'
}
${runTurnOf(doc)}
const session = process.env.SESSION!
await runTurn(session, (await store.load(session)).messages, '42', process.env.PLATFORM_ID!, 'What is in README.md?')
console.log('returned')
await store.close()
`

let db: TestDatabase
let store: PostgresStore
let script: string

beforeAll(async () => {
  if (!existsSync(`${packageDir}/dist/index.js`)) throw new Error('packages/turnlog/dist is missing: run the build first')
  script = ts.transpileModule(SERVICE, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
  db = await createTestDatabase({ migrated: true })
  store = await openStore({ connectionString: db.connectionString })
})

afterAll(async () => {
  await store?.close()
  await db?.drop()
})

/** Runs the service; with `killOn`, SIGKILLs it at the first stdout line that starts so. Resolves to its stdout and how it ended. */
function service(
  env: Record<string, string>,
  killOn?: string,
): Promise<{ stdout: string; signal: NodeJS.Signals | null; code: number | null }> {
  return new Promise((resolve, reject) => {
    // inside the package, `turnlog` resolves to its own built entry point (self-reference through its exports)
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageDir,
      env: { ...process.env, URL: db.connectionString, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (killOn !== undefined && stdout.includes(killOn)) child.kill('SIGKILL')
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code, signal) =>
      code !== 0 && signal === null ? reject(new Error(`service exited ${code}: ${stderr}`)) : resolve({ stdout, signal, code }),
    )
  })
}

describe('docs/integrating.md, "Your own loop": the service killed with SIGKILL while a tool runs', () => {
  it('"the reloaded live holds it without its answer, and the check drops the platform\'s redelivery"; resuming from toolPairing(live).unanswered as the page says leaves a clean audit', async () => {
    // given: a session, and the service killed while the tool of its first model reply runs
    const session = await store.createSession()
    const killed = await service({ SESSION: session, PLATFORM_ID: '7001', HANG: '1' }, 'tool started')
    expect(killed.signal).toBe('SIGKILL')
    const callId = /tool started (\S+)/.exec(killed.stdout)?.[1]

    // then: the reloaded list holds the user's message and the model's tool call, flushed before the tool ran
    const loaded = await store.load(session)
    const live = loaded.messages
    let version = loaded.version
    const inbound = createMessage({ role: 'user', content: 'What is in README.md?' }, { externalId: '7001', scope: 'telegram:42' })
    expect(live.map((m) => [m.id === inbound.id ? 'inbound' : m.payload.role, m.payload.tool_calls?.map((c) => c.id) ?? []])).toEqual([
      ['inbound', []],
      ['assistant', [callId]],
    ])
    // and: the open call is toolPairing(live).unanswered; the audit reports it
    expect(toolPairing(live).unanswered).toEqual([{ messageId: live[1]!.id, toolCallId: callId }])
    expect((await audit(store, session)).findings.map((f) => f.kind)).toEqual(['unanswered_tool_call'])

    // when: the platform redelivers the message to a restarted service (the page's loop, unchanged)
    const redelivered = await service({ SESSION: session, PLATFORM_ID: '7001' })

    // then: the check drops it ("already received", not "already answered"): nothing is written
    expect(redelivered.stdout).toContain('returned')
    expect((await store.load(session)).version).toBe(version)

    // when: the service resumes from the loaded list as the page says
    for (const { messageId, toolCallId } of toolPairing(live).unanswered) {
      const call = live.find((m) => m.id === messageId)!.payload.tool_calls!.find((c) => c.id === toolCallId)!
      expect(call.function?.name).toBe('read_file')
      live.push(createMessage({ role: 'tool', tool_call_id: toolCallId, content: '# acme' }))
    }
    await store.flush(session, live)
    live.push(createMessage({ role: 'assistant', content: 'It is the acme readme.' }))
    ;({ version } = await store.flush(session, live))

    // then: the session is whole, each message once, and the audit finds nothing
    const after = await store.load(session)
    expect([after.version, after.messages.map((m: Message) => m.id)]).toEqual([version, live.map((m) => m.id)])
    expect(toolPairing(after.messages).ok).toBe(true)
    expect((await audit(store, session)).findings).toEqual([])
  }, 30_000)
})
