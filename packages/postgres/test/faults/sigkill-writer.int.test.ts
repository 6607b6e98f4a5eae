/**
 * The late flush and the partial batch (docs: domain brief §1): a writer process is killed with
 * SIGKILL at random points, mid-batch, many times. Each restart re-flushes the whole live list its
 * predecessor had in memory (written or not) and carries on. At the end the log holds every message
 * exactly once, in order, and the live list equals the deterministic list the parent computed itself.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn, type ChildProcess } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { Ledger, createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { auditProblems, builtEntry, seededRandom, seededUuid } from './support/fault-helpers.js'

const KILLS = Number(process.env['TURNLOG_SIGKILL_KILLS'] ?? 24)
const TOTAL = 3000
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'support', 'kill-writer.js')

let db: TestDatabase
let direct: PostgresStore
/**
 * The writer processes still running: a test cut short by its timeout must not leave one behind in the
 * worker (its loop would also go on starting new ones after the file ended, unless told the file is over).
 */
const running = new Set<ChildProcess>()
let tornDown = false

beforeAll(async () => {
  builtEntry('postgres')
  db = await createTestDatabase()
  direct = await openStore({ connectionString: db.connectionString })
})

afterAll(async () => {
  tornDown = true
  await Promise.all([...running].map((child) => new Promise((resolve) => child.once('close', resolve).kill('SIGKILL'))))
  await direct?.close()
  await db?.drop()
})

/** Message i of the child's list, computed here independently (same rule as kill-writer.js). */
function killWriterPayload(seed: string, i: number): { role: 'user' | 'assistant'; content: string } {
  const content = `${seed}#${i} ${'x'.repeat((i * 7919) % 3000)}`
  return i % 3 === 0 ? { role: 'user', content } : { role: 'assistant', content }
}

interface Run {
  /** The length of the live list the child was flushing (or had flushed) last. */
  readonly inMemory: number
  /** The last flush the child saw acknowledged. */
  readonly acknowledged: number
  /** The child died between "flush n" and "done n": inside the flush call. */
  readonly midFlush: boolean
  readonly finished: boolean
  readonly signal: NodeJS.Signals | null
  readonly code: number | null
  readonly stderr: string
}

/** Runs the child; kills it `killAfterMs` after it printed "ready" (never, when undefined). */
function runChild(args: Record<string, unknown>, killAfterMs: number | undefined): Promise<Run> {
  return new Promise((resolve, reject) => {
    if (tornDown) return reject(new Error('the test file has ended: no new writer'))
    const child = spawn(process.execPath, [SCRIPT, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    let inMemory = Number(args['resumeAt'])
    let acknowledged = 0
    let pending = false
    let finished = false
    let stderr = ''
    let buffer = ''
    let timer: NodeJS.Timeout | undefined
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => (stderr += chunk))
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      for (const line of lines) {
        const [word, n] = line.split(' ')
        if (word === 'ready' && killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
        else if (word === 'flush') {
          inMemory = Number(n)
          pending = true
        } else if (word === 'done') {
          acknowledged = Number(n)
          pending = false
        } else if (word === 'finished') finished = true
      }
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      running.delete(child)
      if (timer) clearTimeout(timer)
      resolve({ inMemory, acknowledged, midFlush: pending, finished, signal, code, stderr })
    })
  })
}

describe('a writer killed with SIGKILL mid-batch, again and again', () => {
  it(`ends with every message exactly once, in order, after ${KILLS} kills`, async () => {
    // given
    const seed = `sigkill-${Date.now()}`
    const session = await direct.createSession()
    const random = seededRandom(42)
    const expected: Message[] = Array.from({ length: TOTAL }, (_, i) =>
      createMessage(killWriterPayload(seed, i), { id: seededUuid(seed, i) }),
    )
    let resumeAt = 0
    let kills = 0
    let midFlush = 0
    let restarts = 0
    let finished = false
    const started = performance.now()

    // when
    while (!finished) {
      const kill = kills < KILLS ? random.int(0, 150) : undefined
      const run = await runChild({ connectionString: db.connectionString, sessionId: session, seed, total: TOTAL, resumeAt }, kill)
      restarts++
      if (run.signal === 'SIGKILL') {
        kills++
        if (run.midFlush) midFlush++
        // the restarted process re-flushes the whole list its predecessor had in memory
        resumeAt = run.inMemory
        continue
      }
      if (run.code !== 0) throw new Error(`writer failed (code ${String(run.code)}):\n${run.stderr}`)
      finished = run.finished
      if (kills < KILLS) throw new Error(`the writer finished after only ${kills} kills: make TOTAL larger`)
    }
    const seconds = (performance.now() - started) / 1000

    // then
    const appended: string[] = []
    for await (const e of direct.events(session)) if (e.type === 'message_appended') appended.push(e.messageId)
    const ids = expected.map((m) => m.id)
    expect(appended).toEqual(ids) // every message once, in list order; no nudge
    const loaded = await direct.load(session)
    expect(loaded.messages.map((m) => m.id)).toEqual(ids)
    expect(loaded.messages.map((m) => JSON.stringify(m.payload))).toEqual(expected.map((m) => JSON.stringify(m.payload)))
    const ledger = new Ledger()
    ledger.appended(session, expected)
    const report = await ledger.verify(direct)
    expect(report).toMatchObject({ lost: 0, duplicated: 0, phantom: 0, outOfOrder: 0, liveMismatches: 0, brokenChains: 0 })
    expect((await direct.rebuild({ sessionId: session, verify: true })).drift).toEqual([])
    expect((await auditProblems(direct)).problems).toEqual([])
    console.log(
      `sigkill-writer: ${TOTAL} messages, ${kills} SIGKILLs (${midFlush} inside a flush call), ${restarts} processes, ${seconds.toFixed(1)} s; ` +
        `lost ${report.lost}, duplicated ${report.duplicated}`,
    )
    // most kills landed inside a flush: the test exercised the partial-batch case, not just idle kills
    expect(midFlush).toBeGreaterThanOrEqual(Math.floor(KILLS / 3))
  }, 180_000)
})
