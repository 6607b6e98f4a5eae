import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import type { RunnableConfig } from '@langchain/core/runnables'
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'
import {
  MemorySaver,
  emptyCheckpoint,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointMetadata,
} from '@langchain/langgraph-checkpoint'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogCheckpointSaver, migrateLangGraph } from '@turnlog/langgraph'
import { sql } from 'kysely'
import { checkpointRowsViewBefore0004 } from './support/checkpoint-rows-view.js'

// Channel versions are LangGraph's integers: two branches of a thread (a fork by `updateState` on an
// old checkpoint, a replay) put the same version of a channel with different values. Each checkpoint
// reads the values that were put with it (adversarial test lg12; in a graph, lg11 and lg7: a paused
// or failed run on a branch never resumed, `next=[]`, the user's message never answered). The
// results are compared with LangGraph's own MemorySaver.

const meta = (step: number): CheckpointMetadata => ({ source: 'loop', step, parents: {} })
const at = (values: Record<string, unknown>, versions: Record<string, number>): Checkpoint => ({
  ...emptyCheckpoint(),
  id: uuid6(-1),
  channel_values: values,
  channel_versions: versions,
})

/** The values each checkpoint of two branches reads: a root, two children putting `x` at version 2, a grandchild leaving `x` alone. */
async function twoBranches(saver: BaseCheckpointSaver, thread: string): Promise<unknown[]> {
  const base = { configurable: { thread_id: thread, checkpoint_ns: '' } }
  const root = await saver.put(base, at({ x: 'root', y: 1 }, { x: 1, y: 1 }), { ...meta(-1), source: 'input' }, { x: 1, y: 1 })
  const a = await saver.put(root, at({ x: 'branch A', y: 1 }, { x: 2, y: 1 }), meta(0), { x: 2 })
  const b = await saver.put(root, at({ x: 'branch B', y: 1 }, { x: 2, y: 1 }), meta(0), { x: 2 })
  // the grandchild of B puts only y: its x is B's
  const b2 = await saver.put(b, at({ x: 'branch B', y: 2 }, { x: 2, y: 2 }), meta(1), { y: 2 })
  // a third branch putting A's value again, and a channel emptied on a fourth
  const c = await saver.put(root, at({ x: 'branch A', y: 1 }, { x: 2, y: 1 }), meta(0), { x: 2 })
  const d = await saver.put(root, at({ y: 1 }, { x: 2, y: 1 }), meta(0), { x: 2 })
  const out: unknown[] = []
  for (const config of [root, a, b, b2, c, d]) out.push((await saver.getTuple(config))?.checkpoint.channel_values)
  return out
}

/** A one-node graph answering the last message, paused before the node (`interruptBefore`) or failing once on 'three'. */
function answeringGraph(checkpointer: BaseCheckpointSaver, mode: 'interrupt' | 'fail-once') {
  let n = 0
  let failed = false
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (s) => {
      const last = s.messages.at(-1) as BaseMessage
      if (mode === 'fail-once' && last.content === 'three' && !failed) {
        failed = true
        throw new Error('model timeout')
      }
      n += 1
      return { messages: [new AIMessage({ content: `answer to ${String(last.content)}`, id: `ai-${n}` })] }
    })
    .addEdge(START, 'agent')
    .addEdge('agent', END)
  return graph.compile({ checkpointer, ...(mode === 'interrupt' ? { interruptBefore: ['agent' as const] } : {}) })
}

/**
 * Two turns, a fork of the checkpoint after the first answer (`updateState` editing the question), a
 * third question on the branch that pauses (or fails), then the resume LangGraph documents:
 * `invoke(null, config)`. What the thread says before and after the resume.
 */
async function resumeOnBranch(checkpointer: BaseCheckpointSaver, mode: 'interrupt' | 'fail-once', thread: string) {
  const graph = answeringGraph(checkpointer, mode)
  const config = { configurable: { thread_id: thread }, durability: 'sync' as const }
  for (const [content, id] of [
    ['one', 'h1'],
    ['two', 'h2'],
  ] as const) {
    await graph.invoke({ messages: [new HumanMessage({ content, id })] }, config)
    if (mode === 'interrupt') await graph.invoke(null, config)
  }
  const history = []
  for await (const s of graph.getStateHistory(config)) history.push(s)
  const old = history.find((s) => (s.values as { messages?: unknown[] }).messages?.length === 2 && s.next.length === 0)
  if (old === undefined) throw new Error('no checkpoint after the first answer')
  const fork = await graph.updateState(old.config, { messages: [new HumanMessage({ content: 'one (edited)', id: 'h1' })] })
  try {
    await graph.invoke({ messages: [new HumanMessage({ content: 'three', id: 'h3' })] }, { ...fork, durability: 'sync' })
  } catch (error) {
    if (mode !== 'fail-once') throw error
  }
  const paused = await graph.getState(config)
  await graph.invoke(null, config)
  const after = await graph.getState(config)
  return {
    pausedNext: paused.next,
    after: (after.values as { messages: BaseMessage[] }).messages.map((m) => m.content),
    next: after.next,
  }
}

describe.each(['postgres', 'pglite'] as const)('channel values on branches (%s)', (flavor) => {
  let store: PostgresStore
  useTestStoreOfKind(flavor, (t) => ({ store } = t))

  it('regression lg12: two children putting one channel version with different values each read their own (as MemorySaver)', async () => {
    // given / when
    const expected = await twoBranches(new MemorySaver(), 'branches')
    const got = await twoBranches(new TurnlogCheckpointSaver({ store }), 'branches')

    // then
    expect(expected.map((v) => (v as { x?: unknown }).x)).toEqual(['root', 'branch A', 'branch B', 'branch B', 'branch A', undefined])
    expect(got).toEqual(expected)
  })

  it('stores a value once per channel version when the branches agree, and once more per other value', async () => {
    // given / when: x@2 put with 'branch A' (twice), 'branch B' and empty; y@1 put by every child
    await twoBranches(new TurnlogCheckpointSaver({ store }), 'stored-once')

    // then: x@2 is three rows (A under the plain version, B and the empty value under a key of their own), y@1 one
    const { rows } = await sql<{ channel: string; version: string }>`
      select channel, version from turnlog_langgraph.blobs where thread_id = 'stored-once' order by channel, version`.execute(store.db)
    const x2 = rows.filter((r) => r.channel === 'x' && r.version.startsWith('2'))
    expect(x2.map((r) => r.version)).toContain('2')
    expect(x2.length).toBe(3)
    expect(rows.filter((r) => r.channel === 'y').map((r) => r.version)).toEqual(['1', '2'])
  })

  it('a saver without memory of the branch (another process) continues it with its values', async () => {
    // given: saver a writes both branches
    const a = new TurnlogCheckpointSaver({ store })
    const base = { configurable: { thread_id: 'two-processes', checkpoint_ns: '' } }
    const root = await a.put(base, at({ x: 'root' }, { x: 1 }), meta(-1), { x: 1 })
    await a.put(root, at({ x: 'branch A' }, { x: 2 }), meta(0), { x: 2 })
    const b = await a.put(root, at({ x: 'branch B' }, { x: 2 }), meta(0), { x: 2 })

    // when: saver b continues branch B, touching another channel only
    const other = new TurnlogCheckpointSaver({ store })
    const b2 = await other.put(b, at({ x: 'branch B', z: 'new' }, { x: 2, z: 1 }), meta(1), { z: 1 })

    // then
    expect((await other.getTuple(b2))?.checkpoint.channel_values).toEqual({ x: 'branch B', z: 'new' })
    expect((await a.getTuple(b2))?.checkpoint.channel_values).toEqual({ x: 'branch B', z: 'new' })
  })

  it('a put that another transaction beat to a channel version runs again and keeps its own value', async () => {
    // given: the root committed; a transaction holding 'branch A' at x@2 uncommitted while B's put runs
    if (flavor === 'pglite') return // one connection: no concurrent transaction
    const saver = new TurnlogCheckpointSaver({ store })
    const root = await saver.put({ configurable: { thread_id: 'race', checkpoint_ns: '' } }, at({ x: 'root' }, { x: 1 }), meta(-1), {
      x: 1,
    })
    const other = new TurnlogCheckpointSaver({ store })
    let putB: Promise<RunnableConfig> | undefined
    await store.atomically(async (tx) => {
      await sql`insert into turnlog_langgraph.blobs (thread_id, checkpoint_ns, channel, version, type, blob)
                values ('race', '', 'x', '2', 'json', convert_to('"branch A"', 'UTF8'))`.execute(tx.db)
      // when: B's put reads no row at x@2, then its insert waits on this transaction's
      putB = other.put(root, at({ x: 'branch B' }, { x: 2 }), meta(0), { x: 2 })
      for (let waited = 0; ; waited += 20) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks where not granted`.execute(store.db)
        if ((rows[0]?.n ?? 0) > 0) break
        if (waited > 10_000) throw new Error('the put never waited on the held row')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })
    const b = await (putB as Promise<RunnableConfig>)

    // then
    expect((await saver.getTuple(b))?.checkpoint.channel_values).toEqual({ x: 'branch B' })
  })

  it.each(['interrupt', 'fail-once'] as const)(
    'regression lg11/lg7: a run paused or failed on a branch (%s) resumes and answers the question, as on MemorySaver',
    async (mode) => {
      // given / when
      const expected = await resumeOnBranch(new MemorySaver(), mode, `resume-${mode}`)
      const got = await resumeOnBranch(new TurnlogCheckpointSaver({ store }), mode, `resume-${mode}`)

      // then
      expect(expected).toEqual({
        pausedNext: ['agent'],
        after: ['one (edited)', 'answer to one', 'three', 'answer to three'],
        next: [],
      })
      expect(got).toEqual(expected)
    },
  )

  it('reads the checkpoints written before migration 0004 the same, and branches them correctly after it', async () => {
    // given: a thread written by the saver, its schema turned back into what 0003 left (no blob keys)
    const saver = new TurnlogCheckpointSaver({ store })
    const base = { configurable: { thread_id: 'before-0004', checkpoint_ns: '' } }
    const root = await saver.put(base, at({ x: 'root' }, { x: 1 }), meta(-1), { x: 1 })
    const a = await saver.put(root, at({ x: 'branch A' }, { x: 2 }), meta(0), { x: 2 })
    const before = [await saver.getTuple(root), await saver.getTuple(a)]
    await sql`drop view turnlog_langgraph.checkpoint_rows`.execute(store.db)
    await sql`alter table turnlog_langgraph.checkpoints drop column blob_keys`.execute(store.db)
    await sql.raw(checkpointRowsViewBefore0004('json_each_text')).execute(store.db)
    await sql`delete from turnlog_langgraph.migrations where name = '0004_branch_blob_keys'`.execute(store.db)

    // when
    const migrated = await migrateLangGraph(store.db)
    const fresh = new TurnlogCheckpointSaver({ store })
    const b = await fresh.put(root, at({ x: 'branch B' }, { x: 2 }), meta(0), { x: 2 })

    // then
    expect(migrated.applied).toEqual(['0004_branch_blob_keys'])
    expect([await fresh.getTuple(root), await fresh.getTuple(a)]).toEqual(before)
    expect((await fresh.getTuple(b))?.checkpoint.channel_values).toEqual({ x: 'branch B' })
  })
})
