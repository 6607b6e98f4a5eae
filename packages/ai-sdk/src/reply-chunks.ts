import type { InferUIMessageChunk, UIMessage, UIMessageChunk } from 'ai'

/** A tool part of either kind (`tool-<name>` or `dynamic-tool`), read field by field. */
interface ToolPart {
  readonly type: string
  readonly toolName?: string
  readonly toolCallId: string
  readonly state: string
  readonly input?: unknown
  readonly rawInput?: unknown
  readonly inputEncoding?: 'json' | 'text'
  readonly output?: unknown
  readonly errorText?: string
  readonly providerExecuted?: boolean
  readonly preliminary?: boolean
  readonly title?: string
  readonly toolMetadata?: Extract<UIMessageChunk, { type: 'tool-input-available' }>['toolMetadata']
  readonly callProviderMetadata?: Extract<UIMessageChunk, { type: 'tool-input-available' }>['providerMetadata']
  readonly resultProviderMetadata?: Extract<UIMessageChunk, { type: 'tool-input-available' }>['providerMetadata']
  readonly approval?: {
    readonly id: string
    readonly descriptor?: unknown
    readonly signature?: string
    readonly inputSchemaInput?: unknown
  }
}

/** `fields` without the keys whose value is `undefined`: a chunk's optional fields, only those set. */
function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}

function toolChunks(part: ToolPart): UIMessageChunk[] {
  const dynamic = part.type === 'dynamic-tool'
  const toolName = dynamic ? (part.toolName ?? '') : part.type.slice('tool-'.length)
  const call = {
    toolCallId: part.toolCallId,
    toolName,
    ...defined({
      providerExecuted: part.providerExecuted,
      toolMetadata: part.toolMetadata,
      dynamic: dynamic ? true : undefined,
      title: part.title,
    }),
  }
  if (part.state === 'input-streaming') {
    // the call's input as far as it was streamed: the raw text again, parsed by the client as it was
    const raw = typeof part.rawInput === 'string' ? part.rawInput : ''
    return [
      { type: 'tool-input-start', ...call, ...defined({ inputEncoding: part.inputEncoding, providerMetadata: part.callProviderMetadata }) },
      ...(raw === '' ? [] : [{ type: 'tool-input-delta' as const, toolCallId: part.toolCallId, inputTextDelta: raw }]),
    ]
  }
  if (part.state === 'output-error' && !dynamic && part.input === undefined) {
    // an input the tool refused (the stream's tool-input-error: the text in rawInput, no input)
    return [
      {
        type: 'tool-input-error',
        ...call,
        input: part.rawInput,
        errorText: part.errorText ?? '',
        ...defined({ providerMetadata: part.callProviderMetadata }),
      },
    ]
  }
  const chunks: UIMessageChunk[] = [
    { type: 'tool-input-available', ...call, input: part.input, ...defined({ providerMetadata: part.callProviderMetadata }) },
  ]
  if (part.approval !== undefined) {
    const approval = part.approval
    chunks.push({
      type: 'tool-approval-request',
      approvalId: approval.id,
      toolCallId: part.toolCallId,
      ...defined({ approvalDescriptor: approval.descriptor, signature: approval.signature }),
      ...(Object.prototype.hasOwnProperty.call(approval, 'inputSchemaInput') ? { inputSchemaInput: approval.inputSchemaInput } : {}),
    })
  }
  const result = {
    toolCallId: part.toolCallId,
    ...defined({
      providerExecuted: part.providerExecuted,
      providerMetadata: part.resultProviderMetadata,
      dynamic: dynamic ? true : undefined,
    }),
  }
  if (part.state === 'output-available') {
    chunks.push({ type: 'tool-output-available', ...result, output: part.output, ...defined({ preliminary: part.preliminary }) })
  } else if (part.state === 'output-error') {
    chunks.push({ type: 'tool-output-error', ...result, errorText: part.errorText ?? '' })
  } else if (part.state === 'output-denied') {
    chunks.push({ type: 'tool-output-denied', toolCallId: part.toolCallId })
  }
  // 'input-available' and 'approval-requested' end here; 'approval-responded' too: the user's decision
  // is the client's edit of the reply, and no stream chunk carries it (the part comes back 'approval-requested')
  return chunks
}

/**
 * The UI message stream chunks that rebuild a stored reply on the client: `start` (its id and
 * metadata), its parts in order, `finish`. Write them with `createUIMessageStream`'s
 * `writer.write(chunk)`: the client (`useChat`, `readUIMessageStream`) builds the same message, same id,
 * same parts. The route answers a retried request the chat already answered (`ChatTurn.answered`) with
 * them, and runs no model.
 *
 * Each part is sent as the AI SDK's stream sent it: a step's `start-step` / `finish-step`, a text or
 * reasoning part as start, one delta and end (left open when the part was still `streaming`: a reply
 * the stream did not finish), a tool call as its `tool-input-available` (so `useChat`'s `onToolCall`
 * sees it, as it saw the original) then its approval request and result, sources, files and data parts
 * as themselves. What no chunk can carry comes back without it: a tool approval's answer (`approved`,
 * `reason`: the client's edit of the reply, so an `approval-responded` part comes back
 * `approval-requested`), a file part's `filename`, a `dynamic-tool` part's `dynamic: false` mark, a text or
 * reasoning part's missing `state` (comes back `'done'`). Replies the AI SDK streamed have none of these but the approval's answer.
 *
 * @param reply - the stored reply (an assistant `UIMessage`, e.g. `turn.answered`).
 * @returns the chunks, typed for the application's `UIMessage` (`InferUIMessageChunk`).
 */
export function replyChunks<UI extends UIMessage>(reply: UI): InferUIMessageChunk<UI>[] {
  const chunks: UIMessageChunk[] = [{ type: 'start', messageId: reply.id, ...defined({ messageMetadata: reply.metadata }) }]
  let inStep = false
  ;(reply.parts as UIMessage['parts']).forEach((part, index) => {
    const id = `${reply.id}-${index}`
    if (part.type === 'step-start') {
      if (inStep) chunks.push({ type: 'finish-step' })
      chunks.push({ type: 'start-step' })
      inStep = true
    } else if (part.type === 'text' || part.type === 'reasoning') {
      const kind = part.type
      const partId = part.type === 'reasoning' && part.id !== undefined ? part.id : id
      const metadata = defined({ providerMetadata: part.providerMetadata })
      chunks.push({ type: `${kind}-start`, id: partId, ...metadata })
      if (part.text !== '') chunks.push({ type: `${kind}-delta`, id: partId, delta: part.text })
      if (part.state !== 'streaming') chunks.push({ type: `${kind}-end`, id: partId, ...metadata })
    } else if (part.type === 'file') {
      chunks.push({ type: 'file', url: part.url, mediaType: part.mediaType, ...defined({ providerMetadata: part.providerMetadata }) })
    } else if (part.type === 'source-url') {
      chunks.push({
        type: 'source-url',
        sourceId: part.sourceId,
        url: part.url,
        ...defined({ title: part.title, providerMetadata: part.providerMetadata }),
      })
    } else if (part.type === 'source-document') {
      chunks.push({
        type: 'source-document',
        sourceId: part.sourceId,
        mediaType: part.mediaType,
        title: part.title,
        ...defined({ filename: part.filename, providerMetadata: part.providerMetadata }),
      })
    } else if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
      chunks.push(...toolChunks(part as unknown as ToolPart))
    } else if (part.type.startsWith('data-')) {
      const data = part as { type: `data-${string}`; id?: string; data: unknown }
      chunks.push({ type: data.type, ...defined({ id: data.id }), data: data.data } as UIMessageChunk)
    }
  })
  if (inStep) chunks.push({ type: 'finish-step' })
  chunks.push({ type: 'finish' })
  return chunks as InferUIMessageChunk<UI>[]
}
