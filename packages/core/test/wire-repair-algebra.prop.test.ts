/**
 * Attacks the wire view's pairing repair as an algebra, for every built-in format that pairs calls,
 * over lists drawn from a pool of three call ids (so calls are answered, left open, answered twice,
 * answered before they are made, opened twice and reused), with identical copies of messages mixed in:
 *
 * - every repaired payload is a valid payload of its format (the provider gets what the format's
 *   schema accepts: `createMessage(p, { format })` takes it back);
 * - the repaired list pairs (`toolPairing(…).ok`);
 * - the repair is idempotent: repairing the repaired list sends the same thing;
 * - identical copies (the same object twice, a JSON round trip of a message) change nothing: the
 *   list with copies repairs to what the list without them repairs to (docs/guarantees.md,
 *   "Identical copies in one call"), also when the list holds an id under two contents (an edit in
 *   place next to its old copy, which the repair treats as two messages);
 * - no message id reaches the wire, and the input messages are untouched.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, parseMessage, serializeMessage, toolPairing, toWire, type Message, type MessageId } from '@turnlog/core'

const RUNS = { numRuns: 150 }
const POOL = ['call_a', 'call_b', 'call_c'] as const
const idArb = fc.constantFrom(...POOL)
const idsArb = (max: number) => fc.uniqueArray(idArb, { minLength: 1, maxLength: max })
const text = fc.constantFrom('hi', 'ok', '')

/** One format: how to make a message that calls, one that answers, one that does neither. */
interface FormatSpec {
  readonly format: string
  readonly calling: fc.Arbitrary<object>
  readonly answering: fc.Arbitrary<object>
  readonly plain: fc.Arbitrary<object>
}

const SPECS: readonly FormatSpec[] = [
  {
    format: 'openai-chat',
    calling: fc.tuple(fc.array(idArb, { minLength: 1, maxLength: 3 }), fc.constantFrom(null, 'thinking')).map(([ids, content]) => ({
      role: 'assistant',
      content,
      tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
    })),
    answering: fc.tuple(idArb, text).map(([id, t]) => ({ role: 'tool', tool_call_id: id, content: `r ${id} ${t}` })),
    plain: fc.tuple(fc.constantFrom('user', 'assistant'), text).map(([role, content]) => ({ role, content: content || 'x' })),
  },
  {
    format: 'anthropic',
    calling: fc.tuple(idsArb(3), fc.boolean()).map(([ids, withText]) => ({
      role: 'assistant',
      content: [
        ...(withText ? [{ type: 'text', text: 'calling' }] : []),
        ...ids.map((id) => ({ type: 'tool_use', id, name: 'f', input: {} })),
      ],
    })),
    answering: fc.tuple(idsArb(2), fc.boolean()).map(([ids, withText]) => ({
      role: 'user',
      content: [
        ...ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: `r ${id}` })),
        ...(withText ? [{ type: 'text', text: 'and more' }] : []),
      ],
    })),
    plain: fc.constantFrom('user', 'assistant').map((role) => ({ role, content: 'x' })),
  },
  {
    format: 'ai-sdk-model',
    calling: fc.tuple(idsArb(3), fc.boolean()).map(([ids, withText]) => ({
      role: 'assistant',
      content: [
        ...(withText ? [{ type: 'text', text: 'calling' }] : []),
        ...ids.map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'f', input: {} })),
      ],
    })),
    answering: idsArb(2).map((ids) => ({
      role: 'tool',
      content: ids.map((id) => ({ type: 'tool-result', toolCallId: id, toolName: 'f', output: { type: 'text', value: `r ${id}` } })),
    })),
    plain: fc.constantFrom('user', 'assistant').map((role) => ({ role, content: 'x' })),
  },
  {
    format: 'ai-sdk-ui',
    calling: fc
      .tuple(fc.array(fc.tuple(idArb, fc.nat(6), fc.boolean()), { minLength: 1, maxLength: 3 }), fc.nat(1000))
      .map(([parts, n]) => ({
        id: `ui-${n}`,
        role: 'assistant',
        // every state: open (streaming, available, approval asked or answered) and answered (output, error, denied)
        parts: parts.map(([id, state, dynamic]) => {
          const head = dynamic ? { type: 'dynamic-tool', toolName: 'f', toolCallId: id } : { type: 'tool-f', toolCallId: id }
          return [
            { ...head, state: 'input-streaming', input: {} },
            { ...head, state: 'input-available', input: {} },
            { ...head, state: 'approval-requested', input: {}, approval: { id: `ap-${id}` } },
            { ...head, state: 'approval-responded', input: {}, approval: { id: `ap-${id}`, approved: dynamic } },
            { ...head, state: 'output-available', input: {}, output: `r ${id}` },
            { ...head, state: 'output-error', input: {}, errorText: 'boom' },
            { ...head, state: 'output-denied', input: {}, approval: { id: `ap-${id}`, approved: false } },
          ][state] as object
        }),
      })),
    // a UI message answers in place: a later message carrying an answered part is its "answer"
    answering: fc.tuple(idArb, fc.nat(1000)).map(([id, n]) => ({
      id: `ui-a-${n}`,
      role: 'assistant',
      parts: [{ type: 'tool-f', toolCallId: id, state: 'output-available', input: {}, output: `r ${id}` }],
    })),
    plain: fc.nat(1000).map((n) => ({ id: `ui-p-${n}`, role: 'user', parts: [{ type: 'text', text: 'x' }] })),
  },
  {
    format: 'openai-responses',
    // every kind of call and of answer: calls and answers pair by id, whatever their kinds
    calling: fc.tuple(idArb, fc.nat(7)).map(
      ([id, kind]) =>
        [
          { type: 'function_call', call_id: id, name: 'f', arguments: '{}' },
          { type: 'custom_tool_call', call_id: id, name: 'f', input: 'x' },
          {
            type: 'computer_call',
            id: `cu_${id}`,
            call_id: id,
            status: 'completed',
            pending_safety_checks: [],
            action: { type: 'screenshot' },
          },
          {
            type: 'local_shell_call',
            id: `lsh_${id}`,
            call_id: id,
            status: 'completed',
            action: { type: 'exec', command: ['ls'], env: {} },
          },
          { type: 'shell_call', call_id: id, action: { commands: ['echo hi'] } },
          { type: 'apply_patch_call', call_id: id, status: 'completed', operation: { type: 'update_file', path: 'a.ts', diff: '' } },
          { type: 'mcp_approval_request', id, name: 'f', arguments: '{}', server_label: 'gh' },
          { type: 'tool_search_call', call_id: id, execution: 'client', arguments: {} },
        ][kind] as object,
    ),
    answering: fc.tuple(idArb, fc.nat(8)).map(
      ([id, kind]) =>
        [
          { type: 'function_call_output', call_id: id, output: `r ${id}` },
          { type: 'custom_tool_call_output', call_id: id, output: `r ${id}` },
          { type: 'computer_call_output', call_id: id, output: { type: 'computer_screenshot', image_url: 'data:,' } },
          { type: 'local_shell_call_output', id, output: 'ok' },
          { type: 'local_shell_call_output', id: `lso_${id}`, call_id: id, output: 'ok' },
          { type: 'shell_call_output', call_id: id, output: [{ stdout: 'hi', stderr: '' }] },
          { type: 'apply_patch_call_output', call_id: id, status: 'completed', output: 'patched' },
          { type: 'mcp_approval_response', approval_request_id: id, approve: true },
          { type: 'tool_search_output', call_id: id, execution: 'client', tools: [] },
        ][kind] as object,
    ),
    plain: fc.constantFrom('user', 'assistant').map((role) => ({ role, content: 'x' })),
  },
  {
    format: 'openai-agents',
    calling: fc.tuple(idArb, fc.nat(4)).map(
      ([id, kind]) =>
        [
          { type: 'function_call', callId: id, name: 'f', arguments: '{}' },
          { type: 'computer_call', callId: id, status: 'completed', action: { type: 'screenshot' } },
          { type: 'shell_call', callId: id, status: 'completed', action: { commands: ['echo hi'] } },
          { type: 'apply_patch_call', callId: id, status: 'completed', operation: { type: 'update_file', path: 'a.ts', diff: '' } },
          { type: 'tool_search_call', callId: id, execution: 'client', arguments: {} },
        ][kind] as object,
    ),
    answering: fc.tuple(idArb, fc.nat(4)).map(
      ([id, kind]) =>
        [
          { type: 'function_call_result', callId: id, name: 'f', status: 'completed', output: `r ${id}` },
          { type: 'computer_call_result', callId: id, output: { type: 'computer_screenshot', data: 'data:,' } },
          { type: 'shell_call_output', callId: id, output: [{ stdout: 'hi', stderr: '', outcome: { type: 'exit', exitCode: 0 } }] },
          { type: 'apply_patch_call_output', callId: id, status: 'completed', output: 'patched' },
          { type: 'tool_search_output', callId: id, execution: 'client', tools: [] },
        ][kind] as object,
    ),
    plain: fc.constant({ role: 'user', content: 'x' }),
  },
]

/** A list of messages of `spec`'s format, and the same list with identical copies inserted after their originals. */
function listsArb(spec: FormatSpec): fc.Arbitrary<{ readonly list: Message<unknown>[]; readonly withCopies: Message<unknown>[] }> {
  return fc
    .tuple(
      fc.array(fc.oneof(spec.calling, spec.answering, spec.plain), { maxLength: 9 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { maxLength: 4 }),
      fc.array(fc.tuple(fc.nat(), fc.oneof(spec.calling, spec.answering, spec.plain)), { maxLength: 2 }),
    )
    .map(([payloads, copies, revisions]) => {
      const list = payloads.map((p) => createMessage<object>(p, { format: spec.format }) as Message<unknown>)
      // an edit in place next to its old copy: the same id with other content, later in the list
      if (list.length > 0)
        for (const [at, payload] of revisions) {
          const original = list[at % list.length] as Message<unknown>
          list.push(createMessage<object>(payload, { format: spec.format, id: original.id }) as Message<unknown>)
        }
      const withCopies = [...list]
      if (list.length > 0)
        for (const [from, offset, roundTrip] of copies) {
          const i = from % list.length
          const original = list[i] as Message<unknown>
          const copy = roundTrip ? parseMessage<unknown>(serializeMessage(original)) : original
          const at = withCopies.indexOf(original) + 1 + (offset % (withCopies.length - withCopies.indexOf(original)))
          withCopies.splice(at, 0, copy)
        }
      return { list, withCopies }
    })
}

const rewrap = (format: string, wire: readonly unknown[]): Message<unknown>[] =>
  wire.map((p) => createMessage<object>(p as object, { format }) as Message<unknown>)

describe.each(SPECS)('toWire repairPairing as an algebra: $format', (spec) => {
  it('sends valid, paired payloads; repairing again changes nothing; identical copies change nothing; nothing leaks', () => {
    fc.assert(
      fc.property(listsArb(spec), ({ list, withCopies }) => {
        // given
        const before = withCopies.map((m) => serializeMessage(m))

        // when
        const wire = toWire(list, { repairPairing: true })
        const wireWithCopies = toWire(withCopies, { repairPairing: true })

        // then: each payload is one of the format's own; the list pairs
        const again = rewrap(spec.format, wire)
        expect(toolPairing(again)).toMatchObject({ ok: true })
        // then: a repaired list is its own repair
        expect(toWire(again, { repairPairing: true })).toEqual(wire)
        // then: copies are one message, in the wire view and in the pairing report
        expect(wireWithCopies).toEqual(wire)
        const named = (ms: readonly Message<unknown>[]) => ms.map((m) => ({ id: m.id as MessageId, payload: m.payload, format: m.format }))
        expect(toolPairing(named(withCopies))).toEqual(toolPairing(named(list)))
        // then: no id reaches the wire; the input is untouched
        const sent = JSON.stringify(wireWithCopies)
        for (const m of withCopies) expect(sent).not.toContain(m.id)
        expect(withCopies.map((m) => serializeMessage(m))).toEqual(before)
      }),
      RUNS,
    )
  })
})
