/**
 * The demo's doomed writer: a separate Node process that opens the same database as the demo, flushes
 * the first part of a turn (the assistant's tool call, before the tool runs), reports it on stdout and
 * then "runs the tool" until the demo kills it with SIGKILL, before it can flush the rest.
 *
 * Input (JSON on stdin): {@link DemoWriterInput}. Output: one JSON line, {@link DemoWriterReport}.
 * @packageDocumentation
 */
import { parseMessage } from '@turnlog/core'
import { openCliStore } from '../open-cli-store.js'
import type { DatabaseTarget } from '../resolve-database.js'

/** What the demo sends the writer on stdin. */
export interface DemoWriterInput {
  readonly target: DatabaseTarget
  readonly sessionId: string
  /** The live list up to the end of the turn, as `serializeMessage` texts. */
  readonly live: readonly string[]
  /** How many messages of `live` are flushed before the tool runs. */
  readonly flushFirst: number
}

/** The writer's one line of output, once its first flush committed. */
export interface DemoWriterReport {
  readonly pid: number
  readonly version: number
  readonly appended: readonly string[]
  readonly duplicates: readonly string[]
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

async function main(): Promise<void> {
  const input = JSON.parse(await readStdin()) as DemoWriterInput
  const live = input.live.map((text) => parseMessage(text))
  const { store } = await openCliStore(input.target, { migrate: false, create: true })
  // the flush before tool execution: the call is durable before the tool runs
  const first = await store.flush(input.sessionId, live.slice(0, input.flushFirst))
  const report: DemoWriterReport = { pid: process.pid, version: first.version, appended: first.appended, duplicates: first.duplicates }
  process.stdout.write(`${JSON.stringify(report)}\n`)
  // "run the tool": the demo kills this process with SIGKILL now. Were it still alive after 60 s
  // (the demo died), give up without flushing: the demo's point is that the rest was never written.
  await new Promise((resolve) => setTimeout(resolve, 60_000))
  process.exit(1)
}

main().catch((error: unknown) => {
  process.stderr.write(`demo writer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
