import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint'
import type { BaseMessage } from '@langchain/core/messages'
import pg from 'pg'
import { langGraphText, stepMessage, type LangGraphTextKind } from './langgraph-text.js'
import { prng } from './workload.js'

/** Raw bytes over stored bytes (1 when nothing was compressed). */
export type CompressionRatios = Readonly<Record<LangGraphTextKind, number>>

/**
 * How well the server's TOAST compression (`default_toast_compression`, pglz unless set otherwise)
 * compresses each kind of the workload's text, on what the stock saver stores at each step: the
 * serialized message list of a thread (JsonPlusSerializer, as its `checkpoint_blobs` hold it), here
 * `threads` threads of `steps` steps, stored in a temporary `bytea` column. Returns the ratio per kind
 * and the compression method.
 */
export async function listCompression(
  connectionString: string,
  threads: number,
  steps: number,
): Promise<{ ratios: CompressionRatios; method: string }> {
  const serde = new JsonPlusSerializer()
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const method = (await client.query<{ m: string }>("select current_setting('default_toast_compression') as m")).rows[0]?.m ?? '?'
    await client.query('create temp table lists (b bytea)')
    const ratios: Partial<Record<LangGraphTextKind, number>> = {}
    for (const kind of ['prose', 'vocabulary'] as const) {
      const text = langGraphText(kind)
      await client.query('truncate lists')
      for (let thread = 0; thread < threads; thread++) {
        const rand = prng(thread)
        const list: BaseMessage[] = []
        for (let step = 0; step < steps; step++) list.push(stepMessage(text, rand, thread, step))
        const [, bytes] = await serde.dumpsTyped(list)
        await client.query('insert into lists values ($1)', [Buffer.from(bytes)])
      }
      const { rows } = await client.query<{ ratio: number }>(
        'select sum(octet_length(b))::float8 / sum(pg_column_size(b)) as ratio from lists',
      )
      ratios[kind] = rows[0]?.ratio ?? 1
    }
    return { ratios: ratios as CompressionRatios, method }
  } finally {
    await client.end()
  }
}

/**
 * The compression ratio of what each saver's database holds after the runs: the stock saver's
 * `checkpoint_blobs` (its message lists) and turnlog's event payloads (`turnlog.events.payload`).
 */
export async function storedCompression(turnlogUrl: string, stockUrl: string): Promise<{ turnlog: number; stock: number }> {
  const ratio = async (url: string, query: string): Promise<number> => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query<{ ratio: number | null }>(query)).rows[0]?.ratio ?? 1
    } finally {
      await client.end()
    }
  }
  return {
    turnlog: await ratio(
      turnlogUrl,
      'select sum(octet_length(payload::text))::float8 / sum(pg_column_size(payload)) as ratio from turnlog.events where payload is not null',
    ),
    stock: await ratio(
      stockUrl,
      'select sum(octet_length(blob))::float8 / sum(pg_column_size(blob)) as ratio from checkpoint_blobs where blob is not null',
    ),
  }
}
