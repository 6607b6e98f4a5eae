import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { uuid6, type BaseCheckpointSaver, type Checkpoint } from '@langchain/langgraph-checkpoint'
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres'
import { openStore } from '@turnlog/postgres'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import pg from 'pg'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import type { Args } from './parse-args.js'
import { record } from './record.js'
import { pool, summarize } from './stats.js'
import { prng } from './workload.js'

const WORDS =
  'the of and to in is you that it was for on are as with they at be this have from or one had by word but not what all were we'.split(' ')

/** ~`bytes` of words. */
function text(rand: () => number, bytes: number): string {
  let out = ''
  while (out.length < bytes) out += `${WORDS[Math.floor(rand() * WORDS.length)] ?? 'x'} `
  return out.slice(0, bytes)
}

/** The message a ReAct step adds: a question, a tool call, its result, an answer, in turn. */
function stepMessage(rand: () => number, thread: number, step: number): BaseMessage {
  const id = `m-${thread}-${step}`
  switch (step % 4) {
    case 0:
      return new HumanMessage({ id, content: text(rand, 60 + Math.floor(rand() * 500)) })
    case 1:
      return new AIMessage({
        id,
        content: '',
        tool_calls: [{ id: `call_${thread}_${step}`, name: 'search', args: { q: text(rand, 80) }, type: 'tool_call' }],
      })
    case 2:
      return new ToolMessage({ id, tool_call_id: `call_${thread}_${step - 1}`, content: text(rand, 200 + Math.floor(rand() * 2000)) })
    default:
      return new AIMessage({ id, content: text(rand, 200 + Math.floor(rand() * 1500)) })
  }
}

/**
 * One thread's steps as LangGraph's loop drives a saver: per step one `put` (the `messages` channel,
 * grown by one message, and a small counter channel, both in `newVersions`) and one `putWrites` (the
 * task's write of that message). Returns the number of steps.
 */
async function runThread(saver: BaseCheckpointSaver, threadId: string, seed: number, steps: number): Promise<number> {
  const rand = prng(seed)
  let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } as Record<string, unknown> }
  const messages: BaseMessage[] = []
  for (let step = 0; step < steps; step++) {
    const message = stepMessage(rand, seed, step)
    messages.push(message)
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(step),
      ts: new Date().toISOString(),
      channel_values: { messages: [...messages], step },
      channel_versions: { messages: step + 1, step: step + 1 },
      versions_seen: { agent: { messages: step } },
    }
    config = (await saver.put(
      config,
      checkpoint,
      { source: 'loop', step, parents: {} },
      { messages: step + 1, step: step + 1 },
    )) as typeof config
    await saver.putWrites(config, [['messages', [message]]], `task-${step}`)
  }
  return steps
}

/** Bytes on disk of every table of `schemas` in the database. */
async function schemaBytes(connectionString: string, schemas: readonly string[]): Promise<number> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ bytes: string | null }>(
      `select sum(pg_total_relation_size(c.oid)) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind = 'r' and n.nspname = any($1)`,
      [schemas],
    )
    return Number(rows[0]?.bytes ?? 0)
  } finally {
    await client.end()
  }
}

/**
 * The `langgraph` workload: `TurnlogCheckpointSaver` against the stock `PostgresSaver`
 * (@langchain/langgraph-checkpoint-postgres) on the same server, interleaved run by run, each in a
 * database of its own: ms per step (a `put` of the grown message list + a `putWrites`), 4 threads at a
 * time, and the bytes on disk per message after the runs (every table of the saver, and turnlog's).
 */
export async function recordLangGraph(args: Args, admin: pg.Client, dbName: string): Promise<void> {
  const threads = args.quick ? 8 : 40
  const steps = args.quick ? 24 : 100
  const writers = 4
  const ours = `${dbName}_langgraph`
  const peer = `${dbName}_langgraph_peer`
  for (const name of [ours, peer]) await admin.query(`create database ${name}`)
  const store = await openStore({ directConnection: true, connectionString: databaseUrl(args.adminUrl, ours), pool: { max: writers } })
  const saver = new TurnlogCheckpointSaver({ store })
  await saver.setup()
  const stock = PostgresSaver.fromConnString(databaseUrl(args.adminUrl, peer))
  await stock.setup()
  // the empty schemas' own size (table files, indexes) is subtracted: what remains is per message
  const emptyTurnlog = await schemaBytes(databaseUrl(args.adminUrl, ours), ['turnlog', 'turnlog_langgraph'])
  const emptyStock = await schemaBytes(databaseUrl(args.adminUrl, peer), ['public'])
  const turnlogMs: number[] = []
  const stockMs: number[] = []
  let messages = 0
  try {
    for (let run = 0; run < args.runs; run++) {
      const ids = Array.from({ length: threads }, (_, i) => i)
      const timed = async (target: BaseCheckpointSaver, into: number[]): Promise<void> => {
        let done = 0
        const t0 = performance.now()
        await pool(ids, writers, async (i) => {
          done += await runThread(target, `run${run}-thread${i}`, run * 10_000 + i, steps)
        })
        into.push((performance.now() - t0) / done)
      }
      await interleaved(run, [() => timed(saver, turnlogMs), () => timed(stock, stockMs)])
      messages += threads * steps
    }
    // every message once per run in both databases
    const turnlogBytes = (await schemaBytes(databaseUrl(args.adminUrl, ours), ['turnlog', 'turnlog_langgraph'])) - emptyTurnlog
    const stockBytes = (await schemaBytes(databaseUrl(args.adminUrl, peer), ['public'])) - emptyStock
    record({
      workload: 'LangGraph checkpoint saver: per step (put + putWrites)',
      unit: 'ms',
      turnlog: summarize(turnlogMs),
      baseline: summarize(stockMs),
      baselineName: '@langchain/langgraph-checkpoint-postgres',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${threads} threads × ${steps} steps per run, ${writers} at a time; each step adds one message (~1 KB mean) to the messages channel`,
    })
    record({
      workload: 'LangGraph checkpoint saver: bytes on disk per message',
      unit: 'B',
      turnlog: summarize([turnlogBytes / messages]),
      baseline: summarize([stockBytes / messages]),
      baselineName: '@langchain/langgraph-checkpoint-postgres',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${messages} messages in ${args.runs * threads} threads of ${steps} steps; growth of turnlog's and turnlog_langgraph's tables vs the stock saver's four tables, including the pending writes both keep (the stock saver stores the whole list at each step: ${(stockBytes / 1e6).toFixed(1)} MB vs ${(turnlogBytes / 1e6).toFixed(1)} MB)`,
    })
  } finally {
    await store.close()
    await stock.end()
    for (const name of [ours, peer]) await admin.query(`drop database if exists ${name} with (force)`)
  }
}
