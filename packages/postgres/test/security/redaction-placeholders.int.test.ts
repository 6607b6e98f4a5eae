/**
 * The redaction path cannot write content (security.md, "Redaction"): a tenant's writer calling
 * `turnlog.redact_message` with raw SQL, around the store, may pass only placeholders that are placeholders
 * (`is_redaction_placeholder`) AND follow the payload they replace (`placeholder_follows`: content removed,
 * nothing added). Regression for an adversarial tester's finding: shaped "placeholders" carrying content
 * (an object under a tool call's `id`, a key of a structural placeholder), a user message turned into
 * an assistant tool call, and a non-string function name (which the database took and core's
 * `verifyChain` then reported as `redaction_mismatch`) were all accepted and the chain verified. Each is
 * refused with 22023 and writes nothing; the store's own redaction of the same messages still works.
 */
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import {
  AI_SDK_MODEL_FORMAT,
  ANTHROPIC_FORMAT,
  OPENAI_RESPONSES_FORMAT,
  contentHash,
  createMessage,
  newEventId,
  redactedPayload,
  type ChatMessage,
  type Message,
  type SessionId,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { schemaFile } from '../../src/schema-sql.js'
import { useTestBed } from '../support/use-test-bed.js'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'

let db: TestDatabase
let role: LoginRole
let store: PostgresStore

useTestBed(async (bed) => {
  db = bed.db
  role = await bed.role('rph', { groups: ['turnlog_writer'], tenant: 'acme' })
  store = await bed.open(role.connectionString)
})

const CALL = 'select * from turnlog.redact_message($1, $2, $3, $4, $5, $6, $7, null)'

/** What the superuser sees of a session: every event's payload, digest and type, and the conflicts' payloads. */
async function rows(sid: SessionId): Promise<unknown[]> {
  return [
    ...(await runSql(
      db.connectionString,
      'select seq, type, payload::text, payload_digest from turnlog.events where session_id = $1 order by seq',
      [sid],
    )),
    ...(await runSql(
      db.connectionString,
      'select conflict_id, incoming_payload::text from turnlog.conflicts where session_id = $1 order by conflict_id',
      [sid],
    )),
  ]
}

/** A tenant session holding `payload` (of `format`) as its first message, and a second message. */
async function holding(payload: object, format?: string): Promise<{ sid: SessionId; message: Message<unknown> }> {
  const sid = await store.createSession({ tenantId: 'acme' })
  // a chat message as most are made: no format named (data.format absent)
  const message = format === undefined ? createMessage(payload as ChatMessage) : createMessage<object>(payload, { format })
  await store.append(sid, [message as Message, createMessage({ role: 'user', content: 'next question' })])
  return { sid, message }
}

/** The writer's own call of the function, replacing the message's one event (seq 1) by `placeholder`. */
async function forge(
  sid: SessionId,
  message: Message<unknown>,
  placeholder: unknown,
  evidence: { conflicts: unknown[]; placeholders: unknown[] } = { conflicts: [], placeholders: [] },
): Promise<string> {
  return sqlStateOf(role.connectionString, CALL, [
    sid,
    message.id,
    JSON.stringify([{ sessionId: sid, seq: 1 }]),
    JSON.stringify([placeholder]),
    JSON.stringify(evidence.conflicts),
    JSON.stringify(evidence.placeholders),
    JSON.stringify({ [sid]: newEventId() }),
  ])
}

const toolCall = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"iban":"DE89"}' } }

/** [what, original payload, its format (absent: openai-chat), the forged placeholder]. */
const FORGERIES: readonly (readonly [string, object, string | undefined, unknown])[] = [
  [
    'A: an object of content under a tool call id and type',
    { role: 'user', content: 'my secret text' },
    undefined,
    {
      role: 'user',
      content: '[redacted]',
      tool_calls: [{ id: { injected: 'ARBITRARY TEXT', more: [1, 2, { x: 'y' }] }, type: { also: 'content' } }],
    },
  ],
  [
    'A on a real call: an object under its id',
    { role: 'assistant', content: null, tool_calls: [toolCall] },
    undefined,
    { role: 'assistant', content: '[redacted]', tool_calls: [{ id: { injected: 'ARBITRARY TEXT' }, type: 'function' }] },
  ],
  [
    'B: a function name that is an object',
    { role: 'assistant', content: null, tool_calls: [toolCall] },
    undefined,
    {
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: { free: 'text' }, arguments: '{}' } }],
    },
  ],
  [
    'C: a user message turned into an assistant tool call',
    { role: 'user', content: 'my secret text' },
    undefined,
    {
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'transfer_funds', arguments: '{}' } }],
    },
  ],
  [
    'D: content in a key of a structural placeholder (anthropic)',
    { role: 'user', content: [{ type: 'text', text: 'the password is hunter2' }] },
    ANTHROPIC_FORMAT,
    { role: 'user', content: [{ type: 'text', text: '[redacted]', 'ARBITRARY CONTENT IN A KEY: the password is hunter2': null }] },
  ],
  [
    'a key the original lacks, with a placeholder value',
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ANTHROPIC_FORMAT,
    { role: 'user', content: [{ type: 'text', text: '[redacted]', cache_control: { type: 'ephemeral' } }] },
  ],
  [
    'a chat role changed (user to system)',
    { role: 'user', content: 'my secret text' },
    undefined,
    { role: 'system', content: '[redacted]' },
  ],
  [
    'a chat tool_call_id changed',
    { role: 'tool', tool_call_id: 'call_1', content: 'balance 12' },
    undefined,
    { role: 'tool', content: '[redacted]', tool_call_id: 'call_2' },
  ],
  [
    'a chat tool_call_id the original lacks',
    { role: 'user', content: 'my secret text' },
    undefined,
    { role: 'user', content: '[redacted]', tool_call_id: 'call_1' },
  ],
  [
    'a tool name changed',
    { role: 'assistant', content: null, tool_calls: [toolCall] },
    undefined,
    {
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'transfer_funds', arguments: '{}' } }],
    },
  ],
  [
    'a toolCallId changed (ai-sdk-model)',
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', output: { type: 'text', value: 'balance 12' } }],
    },
    AI_SDK_MODEL_FORMAT,
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_9', toolName: 'lookup', output: { type: 'text', value: '[redacted]' } }],
    },
  ],
  [
    'a type changed (openai-responses message to function_call)',
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi', annotations: [] }] },
    OPENAI_RESPONSES_FORMAT,
    { type: 'function_call', role: 'assistant', content: [{ type: 'output_text', text: '[redacted]', annotations: [] }] },
  ],
  [
    'an array longer than the original (a forged second call)',
    { role: 'assistant', content: null, tool_calls: [toolCall] },
    undefined,
    {
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
      ],
    },
  ],
  [
    'an array longer than the original (a structural part added)',
    { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ANTHROPIC_FORMAT,
    {
      role: 'user',
      content: [
        { type: 'text', text: '[redacted]' },
        { type: 'text', text: '[redacted]' },
      ],
    },
  ],
  [
    'a boolean flipped',
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}', strict: true },
    OPENAI_RESPONSES_FORMAT,
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '[redacted]', strict: false },
  ],
]

describe('turnlog.redact_message called by a tenant writer with a forged placeholder', () => {
  it.each(FORGERIES)(
    'refuses %s with 22023 and writes nothing; the store’s redaction of it works',
    async (_what, payload, format, forged) => {
      // given a tenant session holding the payload, as the superuser sees it
      const { sid, message } = await holding(payload, format)
      const before = await rows(sid)

      // when the writer passes the forged placeholder
      const state = await forge(sid, message, forged)

      // then the database refuses it and nothing changed
      expect(state).toBe('22023')
      expect(await rows(sid)).toEqual(before)

      // and the store's own redaction of the same message still scrubs it and verifies
      await store.redact(sid, message.id)
      expect((await store.load(sid)).messages[0]?.payload).toEqual(redactedPayload(payload, format))
      const verified = await verifyChain(store, sid)
      expect(verified.breaks).toEqual([])
      expect(verified.ok).toBe(true)
    },
  )

  it('accepts the true placeholder passed the same way (the test is not vacuous)', async () => {
    // given
    const { sid, message } = await holding({ role: 'assistant', content: null, tool_calls: [toolCall] })
    // when the writer passes what redactedPayload makes
    const state = await forge(sid, message, redactedPayload(message.payload))
    // then it is stored and verifies
    expect(state).toBe('ok')
    expect((await store.load(sid)).messages[0]?.payload).toEqual({
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
    })
    expect((await verifyChain(store, sid)).ok).toBe(true)
  })

  it('checks conflict evidence against the conflict’s incoming payload: a forged evidence placeholder is refused, nothing written', async () => {
    // given a message with a recorded conflicting write (its incoming payload is the evidence)
    const { sid, message } = await holding({ role: 'user', content: 'my secret text' })
    const clash = createMessage({ role: 'user', content: 'conflicting secret' }, { id: message.id })
    await expect(store.append(sid, [clash])).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })
    const [conflict] = await runSql<{ conflict_id: string }>(
      db.connectionString,
      'select conflict_id::text from turnlog.conflicts where session_id = $1',
      [sid],
    )
    const conflicts = [{ sessionId: sid, conflictId: conflict?.conflict_id }]
    const before = await rows(sid)

    // when the writer scrubs the event honestly but forges the evidence's placeholder: another role, a
    // forged call, a key the incoming payload lacks
    const states = []
    for (const evidence of [
      { role: 'assistant', content: '[redacted]' },
      {
        role: 'user',
        content: '[redacted]',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'transfer_funds', arguments: '{}' } }],
      },
      { role: 'user', content: '[redacted]', tool_call_id: 'hunter2' },
    ]) {
      states.push(await forge(sid, message, redactedPayload(message.payload), { conflicts, placeholders: [evidence] }))
    }

    // then each is refused and nothing changed
    expect(states).toEqual(['22023', '22023', '22023'])
    expect(await rows(sid)).toEqual(before)

    // and the honest evidence placeholder is accepted
    expect(
      await forge(sid, message, redactedPayload(message.payload), { conflicts, placeholders: [{ role: 'user', content: '[redacted]' }] }),
    ).toBe('ok')
    expect((await store.conflicts(sid)).map((c) => c.incomingPayload)).toEqual([{ role: 'user', content: '[redacted]' }])
    expect((await verifyChain(store, sid)).ok).toBe(true)
  })

  it('a forged chat placeholder stored before 0008 (an object under a call id, a non-string name) is reported by verifyChain', async () => {
    // given the checks as they were before 0008 (here: both answering true, set by the superuser), and
    // the writer's forgeries A and B going through them
    const superuser = (text: string) => runSql(db.connectionString, text)
    const forgeries = [
      { role: 'user', content: '[redacted]', tool_calls: [{ id: { injected: 'ARBITRARY TEXT' }, type: { also: 'content' } }] },
      {
        role: 'user',
        content: '[redacted]',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: { free: 'text' }, arguments: '{}' } }],
      },
    ]
    const sessions: SessionId[] = []
    await superuser(`create or replace function turnlog.is_redaction_placeholder(p json, p_format text) returns boolean language sql immutable as 'select true';
                     create or replace function turnlog.placeholder_follows(p json, orig json, p_format text) returns boolean language sql immutable as 'select true'`)
    try {
      for (const forged of forgeries) {
        const { sid, message } = await holding({ role: 'user', content: 'my secret text' })
        expect(await forge(sid, message, forged)).toBe('ok')
        sessions.push(sid)
      }
    } finally {
      await superuser(
        ['functions/is_redaction_placeholder.sql', 'functions/placeholder_follows.sql']
          .map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function '))
          .join('\n'),
      )
    }

    // when the chains are verified
    const verified = await Promise.all(sessions.map((sid) => verifyChain(store, sid)))

    // then each forged scrub is a redaction_mismatch at its seq (core's isRedactedPayload, as the database now, refuses the shape)
    expect(verified.map((v) => [v.ok, v.breaks.map((b) => [b.kind, b.seq])])).toEqual(
      sessions.map(() => [false, [['redaction_mismatch', 1]]]),
    )
  })

  it('redacts a message whose stored text escapes a kept id as a surrogate pair (another language writing around the store)', async () => {
    // given: a tool result appended by raw SQL with its text as Python's json.dumps writes it, the
    // emoji of its call id as the escapes \ud83d\ude00 (the store would write the character)
    const superuser = (text: string, values: unknown[]) => runSql(db.connectionString, text, values)
    const sid = await store.createSession({ tenantId: 'acme' })
    const honest = createMessage({ role: 'user', content: 'hello' })
    await store.append(sid, [honest])
    const [first] = (await superuser('select data::text as data from turnlog.events where session_id = $1 and seq = 1', [sid])) as {
      data: string
    }[]
    const payload = { role: 'tool', tool_call_id: 'call_\u{1F600}', content: 'secret: 4111-1111' } as const
    const text = '{"role": "tool", "tool_call_id": "call_\\ud83d\\ude00", "content": "secret: 4111-1111"}'
    const escaped = createMessage(payload)
    await superuser('select * from turnlog.append_messages($1::uuid, 1, $2::json, $3::json, $4::json, $5::json, $6::json)', [
      sid,
      JSON.stringify([escaped.id]),
      JSON.stringify([contentHash(escaped)]),
      JSON.stringify([newEventId()]),
      `[${text}]`,
      `[${first?.data ?? ''}]`,
    ])

    // when: the store redacts it (before the fix: 22023, json_operable made ?d83d?de00 of the stored pair only)
    const result = await store.redact(sid, escaped.id, { reason: 'GDPR' })

    // then
    expect(result.sessions.map((x) => x.scrubbed)).toEqual([1])
    expect((await store.load(sid)).messages.at(-1)?.payload).toEqual({
      role: 'tool',
      tool_call_id: 'call_\u{1F600}',
      content: '[redacted]',
    })
    expect((await verifyChain(store, sid)).ok).toBe(true)
  })
})
