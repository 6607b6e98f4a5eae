import { describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'
import { useTestStoreOfKind } from '@turnlog/testing'

// PGlite decodes each result field with a TextDecoder that strips a leading U+FEFF (BOM) and has no
// hook before that: a text parameter starting with one is refused (typed), never silently shortened;
// inside JSON a BOM is kept exactly.

const BOM = '\uFEFF'

let store: PostgresStore

useTestStoreOfKind('pglite', (t) => ({ store } = t))

describe('a leading U+FEFF on PGlite', () => {
  it('is refused in a text parameter with a typed error, never dropped', async () => {
    // when / then
    await expect(sql`select ${`${BOM}j`}::text as t`.execute(store.db)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { reason: 'pglite-leading-bom' },
    })
    await expect(sql`select ${[`a`, `${BOM}j`]}::text[] as t`.execute(store.db)).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(store.createSession({ tenantId: `${BOM}tenant` })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    expect((await store.sessions()).sessions).toEqual([])
  })

  it('inside JSON (session metadata, payload strings, meta, externalId) comes back exactly', async () => {
    // given
    const metadata = { [`${BOM}k`]: `${BOM}v`, list: [`${BOM}`] }
    const session = await store.createSession({ tenantId: `t${BOM}`, metadata })
    const messages = [
      createMessage({ role: 'user', content: `${BOM}hello` }),
      createMessage(
        { role: 'user', content: `${BOM}x` },
        { externalId: `${BOM}ext`, scope: `${BOM}scope`, meta: { [`${BOM}m`]: `${BOM}n` } },
      ),
      createMessage({ [`${BOM}key`]: `${BOM}value` }, { format: 'json' }),
    ]

    // when
    await store.append(session, messages)
    const info = await store.getSession(session)
    const loaded = await store.load(session)

    // then
    expect(info.tenantId).toBe(`t${BOM}`)
    expect(info.metadata).toEqual(metadata)
    expect(loaded.messages.map((m) => m.payload)).toEqual(messages.map((m) => m.payload))
    expect(loaded.messages[1]).toMatchObject({ externalId: `${BOM}ext`, externalScope: `${BOM}scope`, meta: { [`${BOM}m`]: `${BOM}n` } })
  })
})
