import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { BaseMessage } from '@langchain/core/messages'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, makeMigratedDataDir, type TestDatabase } from '@turnlog/testing'
import { TurnlogCheckpointSaver, decodeLangChainMessage } from '@turnlog/langgraph'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectCleanAudit } from './support/expect-clean-audit.js'

// A real process runs the ReAct graph on the saver (the built package: run the build first) and is killed
// with SIGKILL between `put` and `putWrites` (inside the tool, after the checkpoint holding the tool call
// was written), or after the tool's `putWrites` and before the next `put`. Another process resumes the
// thread. No message is lost or written twice, turnlog's live list equals the graph's final state, and
// the audit is clean. On Postgres and on PGlite (a data directory the killed process held).

const WORKER = fileURLToPath(new URL('./support/crash-worker.mjs', import.meta.url))
const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))
const POSTGRES_DIST = fileURLToPath(new URL('../../postgres/dist/index.js', import.meta.url))

type Mode = 'crash-in-tool' | 'crash-after-writes' | 'resume'
interface Run {
  readonly lines: string[]
  readonly signal: NodeJS.Signals | null
  readonly code: number | null
  readonly stderr: string
}

/** Runs the worker; with `killOn`, kills it with SIGKILL as soon as it prints that line. */
function runWorker(target: { connectionString?: string; dataDir?: string }, threadId: string, mode: Mode, killOn?: string): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env['NODE_OPTIONS'] // no jest VM flags in the child
  env['TURNLOG_LANGGRAPH_WORKER'] = JSON.stringify({ ...target, threadId, mode, dist: DIST, postgresDist: POSTGRES_DIST })
  const child = spawn(process.execPath, [WORKER], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  let buffer = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk
    let i
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i)
      buffer = buffer.slice(i + 1)
      lines.push(line)
      if (line === killOn) child.kill('SIGKILL')
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ lines, signal, code, stderr })
    })
  })
}

jest.setTimeout(300_000)

describe.each(['postgres', 'pglite'] as const)('a graph process killed with SIGKILL and resumed (%s)', (flavor) => {
  let database: TestDatabase | undefined
  let dataDir: string | undefined
  let target: { connectionString?: string; dataDir?: string }

  beforeAll(async () => {
    if (!existsSync(DIST) || !existsSync(POSTGRES_DIST))
      throw new Error('build first (npx -y pnpm@12.4.2 build): the worker runs the built packages')
    if (flavor === 'postgres') {
      database = await createTestDatabase({ migrated: true })
      target = { connectionString: database.connectionString }
    } else {
      // a migrated database: the workers open it (the saver's own migrations run in the first)
      dataDir = await mkdtemp(join(tmpdir(), 'turnlog-langgraph-crash-'))
      await makeMigratedDataDir(dataDir)
      target = { dataDir }
    }
  })
  afterAll(async () => {
    await database?.drop()
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true })
  })

  /** Opens the store (PGlite: only while no worker runs), runs `work`, closes it. */
  const withStore = async <T>(work: (store: PostgresStore, saver: TurnlogCheckpointSaver) => Promise<T>): Promise<T> => {
    const store = await openStore(
      target.connectionString !== undefined
        ? { connectionString: target.connectionString }
        : { embedded: true, dataDir: dataDir as string },
    )
    try {
      return await work(store, new TurnlogCheckpointSaver({ store }))
    } finally {
      await store.close()
    }
  }

  it.each([
    ['between put and putWrites (inside the tool)', 'crash-in-tool', 'IN_TOOL', 2],
    ['after the tool’s putWrites, before the next put', 'crash-after-writes', 'WROTE', 1],
  ] as const)('killed %s: nothing lost, nothing twice, audit clean', async (_when, mode, killOn, toolRuns) => {
    const threadId = `crash-${mode}`
    const config = { configurable: { thread_id: threadId } }

    // given: a process killed at the chosen point
    const crashed = await runWorker(target, threadId, mode, killOn)
    expect({ signal: crashed.signal, stderr: crashed.stderr }).toEqual({ signal: 'SIGKILL', stderr: '' })
    expect(crashed.lines).toContain(killOn)
    const before = await withStore(async (store, saver) => {
      const tuple = await saver.getTuple(config)
      const toolWrites = (tuple?.pendingWrites ?? []).filter(
        ([, channel, value]) => channel === 'messages' && JSON.stringify(value).includes('ToolMessage'),
      ).length
      const ref = await saver.messagesRef(config)
      return { toolWrites, live: ref === undefined ? [] : (await store.load(ref.sessionId)).messages.map((m) => m.externalId) }
    })
    const writtenBefore = before.live
    if (mode === 'crash-in-tool') {
      // the latest checkpoint holds the question and the tool call, in turnlog; the tool's result is nowhere
      expect(before).toEqual({ toolWrites: 0, live: [expect.any(String), expect.any(String)] })
    } else {
      // the tool's result is durable in exactly one place: a pending write of the latest checkpoint, or
      // (when LangGraph's next put won the race with the kill) that next checkpoint's messages in turnlog
      expect(before.toolWrites + (before.live.length - 2)).toBe(1)
    }

    // when: another process resumes the thread
    const resumed = await runWorker(target, threadId, 'resume')
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: '' })
    const done = resumed.lines.find((l) => l.startsWith('DONE '))
    const finalIds = JSON.parse(done?.slice(5) ?? '[]') as string[]

    // then: the tool ran again only when its result had not been written
    expect([...crashed.lines, ...resumed.lines].filter((l) => l === 'TOOL_RAN')).toHaveLength(toolRuns)
    await withStore(async (store, saver) => {
      const ref = await saver.messagesRef(config)
      if (ref === undefined) throw new Error('no session')
      const loaded = await store.load(ref.sessionId)
      expect(loaded.messages.map((m) => m.externalId)).toEqual(finalIds)
      expect(finalIds.slice(0, writtenBefore.length)).toEqual(writtenBefore)
      const messages: BaseMessage[] = await Promise.all(loaded.messages.map((m) => decodeLangChainMessage(saver.serde, m)))
      expect(messages.map((m) => [m.getType(), m.content])).toEqual([
        ['human', 'What is 2 + 3?'],
        ['ai', ''],
        ['tool', '5'],
        ['ai', 'The sum is 5.'],
      ])
      // every message was appended once, none revised or retracted
      const types: string[] = []
      for await (const e of store.events(ref.sessionId)) types.push(e.type)
      expect(types).toEqual(['message_appended', 'message_appended', 'message_appended', 'message_appended'])
      await expectCleanAudit(store, ref.sessionId)
    })
  })
})
