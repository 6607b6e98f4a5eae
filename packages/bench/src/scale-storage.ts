import type pg from 'pg'

/** The tables the scale workload sizes: every turnlog table that grows with the messages. */
export const SCALE_TABLES = ['events', 'live_messages', 'message_ids', 'sessions'] as const

/** One table's size. */
export interface TableSize {
  readonly table: (typeof SCALE_TABLES)[number]
  readonly rows: number
  /** `pg_table_size`: heap, TOAST, free space and visibility maps (bytes). */
  readonly tableBytes: number
  /** `pg_indexes_size` (bytes). */
  readonly indexBytes: number
}

/** One B-tree index's size and shape. */
export interface IndexShape {
  readonly index: string
  readonly table: string
  readonly bytes: number
  /** Levels from the root to the leaves, the leaves included (`bt_metap.level + 1`); null without pageinspect. */
  readonly depth: number | null
  /** Entries of the root page and their average size (bytes), from `bt_page_stats`; null without pageinspect or when the root is a leaf. */
  readonly rootItems: number | null
  readonly rootAvgItemBytes: number | null
}

/** The sizes of the scale workload's database at one point. */
export interface ScaleStorage {
  /** Rows of `turnlog.events`: every one a stored message here. */
  readonly events: number
  readonly tables: readonly TableSize[]
  readonly indexes: readonly IndexShape[]
  /** Tables and indexes of {@link SCALE_TABLES}, in bytes. */
  readonly totalBytes: number
}

/**
 * Measures the turnlog tables of the database `client` is connected to: exact row counts, table and
 * index bytes, and each index's depth (pageinspect's `bt_metap`, when `pageinspect` is available or
 * can be created; otherwise depths are null).
 */
export async function scaleStorage(client: pg.ClientBase): Promise<ScaleStorage> {
  const inspect = await client
    .query('create extension if not exists pageinspect')
    .then(() => true)
    .catch(() => false)
  const tables: TableSize[] = []
  for (const table of SCALE_TABLES) {
    const { rows } = await client.query<{ rows: string; table_bytes: string; index_bytes: string }>(
      `select (select count(*) from turnlog.${table}) as rows, pg_table_size('turnlog.${table}') as table_bytes,
              pg_indexes_size('turnlog.${table}') as index_bytes`,
    )
    const r = rows[0]
    tables.push({ table, rows: Number(r?.rows), tableBytes: Number(r?.table_bytes), indexBytes: Number(r?.index_bytes) })
  }
  const { rows: names } = await client.query<{ index: string; table: string; bytes: string }>(
    `select i.relname as index, t.relname as table, pg_relation_size(i.oid) as bytes
       from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'turnlog' and t.relname = any($1) order by t.relname, i.relname`,
    [SCALE_TABLES],
  )
  const indexes: IndexShape[] = []
  for (const { index, table, bytes } of names) {
    let depth: number | null = null
    let rootItems: number | null = null
    let rootAvgItemBytes: number | null = null
    if (inspect) {
      const { rows: meta } = await client.query<{ root: number; level: number }>(
        `select root::int as root, level::int as level from bt_metap('turnlog.${index}')`,
      )
      const m = meta[0]
      if (m !== undefined) {
        depth = m.level + 1
        if (m.level > 0) {
          const { rows: stats } = await client.query<{ live_items: number; avg_item_size: number }>(
            `select live_items::int as live_items, avg_item_size::int as avg_item_size from bt_page_stats('turnlog.${index}', $1)`,
            [m.root],
          )
          rootItems = stats[0]?.live_items ?? null
          rootAvgItemBytes = stats[0]?.avg_item_size ?? null
        }
      }
    }
    indexes.push({ index, table, bytes: Number(bytes), depth, rootItems, rootAvgItemBytes })
  }
  const events = tables.find((t) => t.table === 'events')?.rows ?? 0
  const totalBytes = tables.reduce((n, t) => n + t.tableBytes + t.indexBytes, 0)
  return { events, tables, indexes, totalBytes }
}
