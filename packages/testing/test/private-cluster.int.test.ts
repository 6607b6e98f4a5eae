import { describe, expect, it } from '@jest/globals'
import { existsSync } from 'node:fs'
import pg from 'pg'
import { findPostgresBinDir, resolveTestServer, startPrivateCluster } from '@turnlog/testing'

// Forces the last-resort fallback, whatever server the rest of the run uses.
const describeIfBinaries = findPostgresBinDir() === undefined ? describe.skip : describe

describeIfBinaries('private cluster fallback', () => {
  it('starts a working cluster, and stop() shuts it down and deletes its directory', async () => {
    // given
    const cluster = await startPrivateCluster()
    try {
      expect(existsSync(cluster.dir)).toBe(true)
      const client = new pg.Client({ connectionString: cluster.adminUrl })
      await client.connect()
      try {
        // when
        await client.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)')
        await client.query("INSERT INTO notes VALUES (1, 'héllo'), (2, 'wörld')")
        const { rows } = await client.query('SELECT id, body FROM notes ORDER BY id')
        // then
        expect(rows).toEqual([
          { id: 1, body: 'héllo' },
          { id: 2, body: 'wörld' },
        ])
        const settings = await client.query("SELECT current_setting('fsync') AS fsync, current_setting('server_encoding') AS enc")
        expect(settings.rows[0]).toEqual({ fsync: 'off', enc: 'UTF8' })
      } finally {
        await client.end()
      }
    } finally {
      await cluster.stop()
    }

    expect(existsSync(cluster.dir)).toBe(false)
    const after = new pg.Client({ connectionString: cluster.adminUrl, connectionTimeoutMillis: 2_000 })
    await expect(after.connect()).rejects.toThrow()
    await expect(cluster.stop()).resolves.toBeUndefined() // idempotent
  })

  it('starts with the settings asked for, and refuses a value the shell would see before the server', async () => {
    // given / when
    const cluster = await startPrivateCluster({ settings: { max_prepared_transactions: 4, application_name: 'turnlog-settings' } })
    try {
      const client = new pg.Client({ connectionString: cluster.adminUrl })
      await client.connect()
      try {
        // then
        const { rows } = await client.query("SELECT current_setting('max_prepared_transactions') AS mpt, current_setting('fsync') AS fsync")
        expect(rows[0]).toEqual({ mpt: '4', fsync: 'off' })
      } finally {
        await client.end()
      }
    } finally {
      await cluster.stop()
    }
    await expect(startPrivateCluster({ settings: { work_mem: "64MB'; touch /tmp/x; '" } })).rejects.toThrow(/not a plain name and value/)
    await expect(startPrivateCluster({ settings: { 'fsync=on -c x': 'on' } })).rejects.toThrow(/not a plain name and value/)
  })

  it('is what resolveTestServer falls back to when forced', async () => {
    // given / when
    const server = await resolveTestServer({ env: {}, forcePrivateCluster: true })
    try {
      // then
      expect(server.source).toBe('private-cluster')
      const client = new pg.Client({ connectionString: server.adminUrl })
      await client.connect()
      await client.end()
    } finally {
      await server.stop()
    }
  })
})
