import { describe, expect, it } from '@jest/globals'
import {
  MemorySaver,
  emptyCheckpoint,
  uuid6,
  type BaseCheckpointSaver,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
} from '@langchain/langgraph-checkpoint'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { TurnlogCheckpointSaver } from '@turnlog/langgraph'
import { sql } from 'kysely'
import { JSONB_UNSAFE_ESCAPE, hasJsonbUnsafeEscape, jsonContains } from '../src/json-contains.js'

// Checkpoint metadata is stored as its JSON text (a `json` column), NUL characters and lone
// surrogates included, as turnlog stores payloads: nothing is lost. Regression (adversarial test lg2):
// the saver removed the text `\u0000` from the JSON, also where it followed an escaped backslash, so
// "a\\u0000b" (a backslash, then u0000) came back as "a\b", "dir\\u0000" failed the put with a raw
// 22P02, and a real NUL was dropped. `list`'s metadata filter works on threads holding such rows.

const NOTES = ['plain', 'a\\u0000b', 'dir\\u0000', 'x\ud800y', 'x\u0000y', 'q\\\\u0000n', '\\', 'nul at the end\u0000', '\udc00\ud800']

const meta = (note: string, source: CheckpointMetadata['source'], step: number): CheckpointMetadata =>
  ({
    source,
    step,
    parents: {},
    note,
    [`key ${note}`]: step,
  }) as CheckpointMetadata

/** One thread: a checkpoint per note (sources alternating), each put on the one before. */
async function thread(saver: BaseCheckpointSaver, checkpoints: readonly Checkpoint[]): Promise<void> {
  let config = { configurable: { thread_id: 'notes', checkpoint_ns: '' } }
  for (const [i, checkpoint] of checkpoints.entries()) {
    config = (await saver.put(config, checkpoint, meta(NOTES[i] as string, i % 2 === 0 ? 'input' : 'loop', i), {})) as typeof config
  }
}

const listed = async (saver: BaseCheckpointSaver, options: CheckpointListOptions): Promise<[string, unknown][]> => {
  const out: [string, unknown][] = []
  for await (const t of saver.list({ configurable: { thread_id: 'notes' } }, options))
    out.push([t.checkpoint.id, t.metadata?.['note' as never]])
  return out
}

describe.each(['postgres', 'pglite'] as const)('checkpoint metadata text (%s)', (flavor) => {
  let store: PostgresStore
  useTestStoreOfKind(flavor, (t) => ({ store } = t))
  const checkpoints: Checkpoint[] = NOTES.map(() => ({ ...emptyCheckpoint(), id: uuid6(-1) }))
  const memory = new MemorySaver()
  let saver: TurnlogCheckpointSaver

  it('regression lg2: keeps NUL, lone surrogates and escaped backslashes before u0000 exactly (getTuple and list)', async () => {
    // given
    saver = new TurnlogCheckpointSaver({ store })
    await thread(memory, checkpoints)

    // when
    await thread(saver, checkpoints)

    // then
    const got = await Promise.all(
      checkpoints.map(
        async (c) => (await saver.getTuple({ configurable: { thread_id: 'notes', checkpoint_ns: '', checkpoint_id: c.id } }))?.metadata,
      ),
    )
    expect(got.map((m) => m?.['note' as never])).toEqual(NOTES)
    expect(got).toEqual(checkpoints.map((_, i) => meta(NOTES[i] as string, i % 2 === 0 ? 'input' : 'loop', i)))
    expect(await listed(saver, {})).toEqual(await listed(memory, {}))
  })

  it.each([
    ['a filter on another key', { source: 'loop' }],
    ['a NUL in the filter', { note: 'x\u0000y' }],
    ['a backslash before u0000 in the filter', { note: 'a\\u0000b' }],
    ['a lone surrogate in the filter', { note: 'x\ud800y' }],
    ['a key with a lone surrogate', { 'key \udc00\ud800': 8 }],
    ['no match', { note: 'x' }],
  ] as const)('filters rows holding such text as MemorySaver does: %s', async (_, filter) => {
    // given: the thread of the test above
    for (const limit of [undefined, 1, 2, 3]) {
      // when
      const options = { filter: filter as Record<string, unknown>, ...(limit === undefined ? {} : { limit }) }
      const got = await listed(saver, options)

      // then
      expect(got).toEqual(await listed(memory, options))
    }
  })

  it('pins the client rule to Postgres: the escapes jsonb refuses, and jsonb containment', async () => {
    // given: JSON texts with and without escapes jsonb refuses, and values to compare
    const texts = [
      ...NOTES.map((n) => JSON.stringify({ n })),
      String.raw`"\\u0000"`, // an escaped backslash, then the text u0000
      String.raw`"\\\u0000"`, // an escaped backslash, then NUL
      String.raw`"\\\\u0000"`,
      String.raw`"\\\\\u0000"`,
      String.raw`"\u0000"`,
      String.raw`"\uD83D\uDE00"`, // a pair: jsonb takes it, the client checks it all the same
      String.raw`"\uDBFF"`,
      String.raw`"\udfff x"`,
      String.raw`"\ud7ff"`,
      String.raw`{"\u0000": 1}`,
    ]
    const values: unknown[] = [
      { a: 1 },
      { a: 1.0, b: [1, 2, [3]] },
      { a: { b: 'x' } },
      { a: [1] },
      { a: 1, b: 'x' },
      [1, 2, [3, 4], { a: 1 }],
      [[3]],
      [{}],
      [1],
      1,
      'x',
      null,
      { a: null },
      [],
      {},
      { b: [2] },
      { b: [[3]] },
      { b: [2, 2] },
      { a: { b: 'x', c: 1 } },
    ]

    // when / then: the regular expression in both engines says what the jsonb cast refuses
    for (const text of texts) {
      const { rows } = await sql<{ matched: boolean }>`select ${text} ~ ${JSONB_UNSAFE_ESCAPE} as matched`.execute(store.db)
      let refused = false
      try {
        await sql`select ${text}::json::jsonb`.execute(store.db)
      } catch {
        refused = true
      }
      expect([text, hasJsonbUnsafeEscape(text), rows[0]?.matched]).toEqual([
        text,
        refused || text.includes('uD83D'),
        refused || text.includes('uD83D'),
      ])
    }
    // and containment in the client is jsonb's
    for (const a of values)
      for (const b of values) {
        const { rows } = await sql<{ c: boolean }>`select ${JSON.stringify(a)}::jsonb @> ${JSON.stringify(b)}::jsonb as c`.execute(store.db)
        expect([a, b, jsonContains(a, b)]).toEqual([a, b, rows[0]?.c])
      }
  })
})
