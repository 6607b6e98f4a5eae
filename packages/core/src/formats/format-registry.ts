import { toFrozenPayload } from '../json-value.js'
import { guardInput } from '../parse-input.js'
import { TurnlogError } from '../turnlog-error.js'
import { anthropicFormat } from './anthropic-format.js'
import { aiSdkModelFormat } from './ai-sdk-model-format.js'
import { aiSdkUiFormat } from './ai-sdk-ui-format.js'
import { jsonFormat } from './json-format.js'
import type { MessageFormat } from './message-format.js'
import { openAIAgentsFormat } from './openai-agents-format.js'
import { OPENAI_CHAT_FORMAT, openAIChatFormat } from './openai-chat-format.js'
import { openAIResponsesFormat } from './openai-responses-format.js'

/** The format of a message that names none: OpenAI Chat Completions (every message stored before formats existed). */
export const DEFAULT_MESSAGE_FORMAT = OPENAI_CHAT_FORMAT

/** A format whose payload type is forgotten: the registry hands payloads it validated with the format's own schema. */
function erased<P>(format: MessageFormat<P>): MessageFormat<unknown> {
  return format as unknown as MessageFormat<unknown>
}

/** The formats every process knows. A new built-in format is one line here. */
const BUILT_IN: readonly MessageFormat<unknown>[] = [
  erased(openAIChatFormat),
  erased(jsonFormat),
  erased(openAIResponsesFormat),
  erased(openAIAgentsFormat),
  erased(anthropicFormat),
  erased(aiSdkUiFormat),
  erased(aiSdkModelFormat),
]

const formats = new Map<string, MessageFormat<unknown>>(BUILT_IN.map((f) => [f.name, f]))

const NAME_RE = /^[a-z][a-z0-9]*(?:[-.][a-z0-9]+)*$/

/**
 * Registers an application's own format, by name, for this process (built-ins are always
 * registered). A name is lower-case words joined by `-` or `.`; registering a taken name throws
 * `INVALID_INPUT` (a format is never replaced: stored messages depend on its reading). Register it
 * before creating, loading or auditing messages of that format.
 */
export function registerMessageFormat<P>(format: MessageFormat<P>): void {
  guardInput('registerMessageFormat', () => register(format))
}

function register<P>(format: MessageFormat<P>): void {
  if (typeof format !== 'object' || format === null || typeof format.name !== 'string' || !NAME_RE.test(format.name)) {
    throw new TurnlogError('INVALID_INPUT', 'registerMessageFormat needs a format with a lower-case name (words joined by - or .)', {
      details: { field: 'format.name' },
    })
  }
  for (const key of ['toolCalls', 'toolResults', 'interruptedResults', 'toWire', 'preview'] as const) {
    if (typeof format[key] !== 'function')
      throw new TurnlogError('INVALID_INPUT', `format ${format.name} needs a ${key} function`, { details: { field: `format.${key}` } })
  }
  for (const key of ['withoutResults', 'withoutCalls', 'answerInPlace', 'renameToolIds', 'wireRun'] as const) {
    if (format[key] !== undefined && typeof format[key] !== 'function') {
      throw new TurnlogError('INVALID_INPUT', `format ${format.name}: ${key} must be a function when given`, {
        details: { field: `format.${key}` },
      })
    }
  }
  if (typeof format.schema !== 'object' || format.schema === null || typeof format.schema.safeParse !== 'function') {
    throw new TurnlogError('INVALID_INPUT', `format ${format.name} needs a zod schema`, { details: { field: 'format.schema' } })
  }
  if (formats.has(format.name))
    throw new TurnlogError('INVALID_INPUT', `a message format named ${format.name} is already registered`, {
      details: { field: 'format.name', format: format.name },
    })
  formats.set(format.name, erased(format))
}

/** The names of the registered formats, built-ins first. */
export function messageFormatNames(): string[] {
  return [...formats.keys()]
}

/**
 * The registered format named `name` (absent: {@link DEFAULT_MESSAGE_FORMAT}). Throws
 * `INVALID_MESSAGE` for a name no format is registered under.
 */
export function messageFormat(name?: string): MessageFormat<unknown> {
  const format = formats.get(name ?? DEFAULT_MESSAGE_FORMAT)
  if (format !== undefined) return format
  const shown = typeof name === 'string' ? name.slice(0, 80) : typeof name
  throw new TurnlogError(
    'INVALID_MESSAGE',
    `unknown message format ${JSON.stringify(shown)} (registered: ${messageFormatNames().join(', ')})`,
    {
      details: { format: shown, issues: [{ code: 'unknown_format', path: ['format'], message: 'unknown message format' }] },
    },
  )
}

/**
 * The format to read a stored message with: its registered format, or, for a name this process has
 * not registered (written by a process that had it), an opaque reading like `json` under that name,
 * so loads, exports and audits of such sessions still work (no pairing is checked for it).
 */
export function readingFormat(name: string | undefined): MessageFormat<unknown> {
  const format = formats.get(name ?? DEFAULT_MESSAGE_FORMAT)
  if (format !== undefined) return format
  return { ...erased(jsonFormat), name: typeof name === 'string' ? name : 'unknown' }
}

/**
 * Validates `payload` with the schema of format `name` (absent: {@link DEFAULT_MESSAGE_FORMAT}) and
 * returns a deeply frozen copy, key order kept. Throws `INVALID_MESSAGE` with the zod issues in
 * `details.issues` (and `details.format`), and `INVALID_INPUT` with `details.field: 'payload'` for a
 * payload that cannot be read (a throwing getter, a revoked Proxy).
 */
export function parsePayload(payload: unknown, name?: string): unknown {
  const format = messageFormat(name)
  const frozen = toFrozenPayload(payload)
  const result = format.schema.safeParse(frozen)
  if (!result.success) {
    const issues = result.error.issues.map((i) => ({ code: i.code, path: i.path.map(String), message: i.message }))
    const first = issues[0]
    const what = format.name === OPENAI_CHAT_FORMAT ? 'chat message' : `${format.name} message`
    throw new TurnlogError(
      'INVALID_MESSAGE',
      `invalid ${what}${first ? ` at ${first.path.join('.') || '(root)'}: ${first.message}` : ''}`,
      { details: { issues, ...(format.name === OPENAI_CHAT_FORMAT ? {} : { format: format.name }) }, cause: result.error },
    )
  }
  return frozen
}
