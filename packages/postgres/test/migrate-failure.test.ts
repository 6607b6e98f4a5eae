/**
 * The report of a failed migration run. kysely runs every pending migration in one transaction and
 * marks the ones that ran before the failing one `Success`; they were rolled back with it. With one
 * baseline migration no run can show that today, so the report is pinned here on kysely's result shape.
 */
import { describe, expect, it } from '@jest/globals'
import { isTurnlogError } from '@turnlog/core'
import { migrationFailed } from '../src/migrate-to-latest.js'

describe('migrationFailed', () => {
  it('reports the migrations that ran before the failing one as RolledBack, never as applied', () => {
    // given kysely's results of a run whose third migration failed
    const cause = Object.assign(new Error('boom'), { code: 'P0001' })
    const results = [
      { migrationName: '0001_a', direction: 'Up' as const, status: 'Success' as const },
      { migrationName: '0002_b', direction: 'Up' as const, status: 'Success' as const },
      { migrationName: '0003_c', direction: 'Up' as const, status: 'Error' as const },
      { migrationName: '0004_d', direction: 'Up' as const, status: 'NotExecuted' as const },
    ]

    // when
    const error = migrationFailed(cause, results)

    // then
    expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
    expect(error.details).toMatchObject({ failed: '0003_c', step: '0003_c', sqlState: 'P0001' })
    expect((error.details?.['results'] as { status: string }[]).map((r) => r.status)).toEqual([
      'RolledBack',
      'RolledBack',
      'Error',
      'NotExecuted',
    ])
    expect(error.message).toMatch(/rolled back with it: 0001_a, 0002_b/)
    expect(error.message).not.toMatch(/Success/)
  })
})
