import pg from 'pg'

/** Bytes on disk of each table of `schemas` (`schema.table` → `pg_total_relation_size`: heap, TOAST, indexes). */
export async function tableBytes(connectionString: string, schemas: readonly string[]): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string; bytes: string }>(
      `select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind = 'r' and n.nspname = any($1)`,
      [schemas],
    )
    return new Map(rows.map((r) => [r.name, Number(r.bytes)]))
  } finally {
    await client.end()
  }
}

/** `VACUUM FULL` of every table of `schemas`: the tables rewritten with their live rows only. */
export async function compact(connectionString: string, schemas: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ name: string }>(
      `select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind = 'r' and n.nspname = any($1)`,
      [schemas],
    )
    for (const { name } of rows) await client.query(`vacuum full ${name}`)
  } finally {
    await client.end()
  }
}

/** Growth of each table from `before` to `after`, largest first, as `table N B/message` (tables that grew by ≥ 1%). */
export function breakdown(before: Map<string, number>, after: Map<string, number>, messages: number): string {
  const grown = [...after].map(([name, bytes]) => [name, bytes - (before.get(name) ?? 0)] as const).sort((a, b) => b[1] - a[1])
  const total = grown.reduce((sum, [, b]) => sum + b, 0)
  return grown
    .filter(([, b]) => b > 0 && b >= total / 100)
    .map(
      ([name, b]) => `${name.replace(/^(public|turnlog_langgraph)\./, (m) => (m === 'public.' ? '' : 'lg.'))} ${(b / messages).toFixed(0)}`,
    )
    .join(', ')
}
