import { describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages'
import { uuid6, type Checkpoint, type CheckpointTuple } from '@langchain/langgraph-checkpoint'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogCheckpointSaver, migrateLangGraph } from '@turnlog/langgraph'
import { sql } from 'kysely'
import { checkpointRowsViewBefore0004 } from './support/checkpoint-rows-view.js'

// Migration 0003 turns the checkpoint row's `checkpoint` and `metadata` from jsonb into json and
// creates the view over the rows again: rows written before it read back the same after it.

const checkpoint = (messages: readonly BaseMessage[], step: number): Checkpoint => ({
  v: 4,
  id: uuid6(step),
  ts: new Date().toISOString(),
  channel_values: { messages: [...messages], step },
  channel_versions: { messages: step, step },
  versions_seen: { agent: { messages: step - 1 } },
})

const columnTypes = async (store: PostgresStore): Promise<string[]> =>
  (
    await sql<{ t: string }>`
      select column_name || ' ' || data_type as t from information_schema.columns
       where table_schema = 'turnlog_langgraph' and table_name = 'checkpoints' and column_name in ('checkpoint', 'metadata')
       order by column_name`.execute(store.db)
  ).rows.map((r) => r.t)

describe.each(['postgres', 'pglite'] as const)('migration 0003 (%s)', (flavor) => {
  let store: PostgresStore
  useTestStoreOfKind(flavor, (t) => ({ store } = t))

  it('keeps the rows written before it: every tuple, its pending writes and the metadata filter read back the same', async () => {
    // given: a thread written by the saver (a counter channel's blob, a messages write made a reference),
    // its table turned back into what 0002 left (jsonb columns, the view over them), 0003 and 0004 not applied
    const saver = new TurnlogCheckpointSaver({ store })
    const [h1, a1] = [new HumanMessage({ id: 'j1', content: 'question' }), new AIMessage({ id: 'j2', content: 'answer' })]
    const c1 = await saver.put(
      { configurable: { thread_id: 'json' } },
      checkpoint([h1], 1),
      { source: 'input', step: 1, parents: {} },
      {
        messages: 1,
        step: 1,
      },
    )
    await saver.putWrites(c1, [['messages', [a1]]], 'agent')
    const c2 = await saver.put(c1, checkpoint([h1, a1], 2), { source: 'loop', step: 2, parents: {} }, { messages: 2, step: 2 })
    const read = async (s: TurnlogCheckpointSaver): Promise<(CheckpointTuple | undefined)[]> => {
      const tuples = [await s.getTuple(c1), await s.getTuple(c2)]
      for await (const t of s.list({ configurable: { thread_id: 'json' } }, { filter: { source: 'loop' } })) tuples.push(t)
      return tuples
    }
    const before = await read(saver)
    const columns = ['checkpoint', 'metadata'].map((c) => `alter column ${c} type jsonb using ${c}::jsonb`)
    for (const statement of [
      'drop view turnlog_langgraph.checkpoint_rows',
      'alter table turnlog_langgraph.checkpoints drop column blob_keys',
      `alter table turnlog_langgraph.checkpoints alter column metadata drop default, ${columns.join(', ')}`,
      `alter table turnlog_langgraph.checkpoints alter column metadata set default '{}'::jsonb`,
      checkpointRowsViewBefore0004('jsonb_each_text'),
    ])
      await sql.raw(statement).execute(store.db)
    await sql`delete from turnlog_langgraph.migrations where name in ('0003_checkpoint_json', '0004_branch_blob_keys')`.execute(store.db)
    expect(await columnTypes(store)).toEqual(['checkpoint jsonb', 'metadata jsonb'])

    // when
    const migrated = await migrateLangGraph(store.db)

    // then
    expect(migrated.applied).toEqual(['0003_checkpoint_json', '0004_branch_blob_keys'])
    expect(await columnTypes(store)).toEqual(['checkpoint json', 'metadata json'])
    const after = await read(new TurnlogCheckpointSaver({ store }))
    expect(after).toEqual(before)
    expect(before.map((t) => t?.checkpoint.channel_values['step'])).toEqual([1, 2, 2])
    expect((before[0]?.pendingWrites?.[0]?.[2] as BaseMessage[]).map((m) => m.id)).toEqual(['j2'])
    expect(before.length).toBe(3)
  })
})
