import { describe, expect, it } from '@jest/globals'
import { describeError } from '../src/cli-error.js'

describe('describeError', () => {
  it('maps usage-like library codes to exit 2 and the rest to exit 3, with a hint for a refused connection', () => {
    // given
    const refused = Object.assign(new Error('connection failure: connect ECONNREFUSED 127.0.0.1:1'), {
      name: 'TurnlogError',
      code: 'DB_TRANSIENT',
      details: { nodeCode: 'ECONNREFUSED' },
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    })
    const missing = Object.assign(new Error('session x not found'), { name: 'TurnlogError', code: 'SESSION_NOT_FOUND', details: {} })
    // when
    const a = describeError(refused, { kind: 'postgres', where: 'postgresql://u:***@127.0.0.1:1/db' })
    const b = describeError(missing)
    const c = describeError(new TypeError('boom'))
    // then
    expect(a).toMatchObject({ code: 'DB_TRANSIENT', exitCode: 3 })
    expect(a.hint).toMatch(/Nothing accepts connections at postgresql:\/\/u:\*\*\*@127\.0\.0\.1:1\/db\. Start the server/)
    expect(b).toMatchObject({ code: 'SESSION_NOT_FOUND', exitCode: 2 })
    expect(c).toMatchObject({ code: 'INTERNAL', exitCode: 3 })
  })
})
