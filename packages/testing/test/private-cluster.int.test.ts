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
