/**
 * Every export of `@turnlog/core`, called with garbage (issue 13, item 11): each function either
 * returns or throws a `TurnlogError` with a registry code, never a raw TypeError/RangeError (or an error
 * thrown by a hostile getter or Proxy it was handed). The tables below list every runtime export of the
 * package and of its `./internal` subpath; the test fails when either exports something its table does
 * not name.
 */
import { describe, expect, it } from '@jest/globals'
import * as core from '@turnlog/core'
import * as coreInternal from '@turnlog/core/internal'
import { VALUE_EXPORT as value, expectEveryExportRejectsGarbage, functionExport as fn, type ExportSpec } from '@turnlog/testing'

/** Every runtime export of `@turnlog/core` and how to call it. */
export const CORE_EXPORTS = {
  ChatMessageSchema: value,
  ContentPartSchema: value,
  ContentSchema: value,
  DEFAULT_JSON_LIMITS: value,
  DEFAULT_MESSAGE_FORMAT: value,
  ERROR_CODES: value,
  EVENT_TYPES: value,
  EXTERNAL_ID_NAMESPACE: value,
  EXTERNAL_SCOPE_NAMESPACE: value,
  EXTERNAL_SESSION_NAMESPACE: value,
  GENESIS_HASH: value,
  INTERRUPTED_TOOL_RESULT: value,
  JSON_FORMAT: value,
  ANTHROPIC_FORMAT: value,
  AnthropicMessageParamSchema: value,
  AI_SDK_UI_FORMAT: value,
  AiSdkUiMessageSchema: value,
  aiSdkUiFormat: value,
  AI_SDK_MODEL_FORMAT: value,
  AiSdkModelMessageSchema: value,
  aiSdkModelFormat: value,
  MAX_JSON_DEPTH: value,
  MESSAGE_CONFLICT_REASONS: value,
  OPENAI_AGENTS_FORMAT: value,
  OPENAI_CHAT_FORMAT: value,
  OPENAI_RESPONSES_FORMAT: value,
  REDACTED_CONTENT: value,
  ToolCallSchema: value,
  TurnlogError: { kind: 'class', arity: 3 },
  applyCompact: fn(2),
  applyRevision: fn(2),
  applyRewind: fn(2),
  canonicalJson: fn(1),
  chainHash: fn(2),
  checkJsonDepth: fn(4),
  cloneJson: fn(1),
  contentHash: fn(1),
  createMessage: fn(2),
  eventChainHash: fn(2),
  foldSession: fn(2),
  isMessage: fn(1),
  isRedactedPayload: fn(2),
  isTurnlogError: fn(2),
  jsonDepth: fn(2),
  jsonFormat: value,
  anthropicFormat: value,
  liveMessages: fn(1),
  messageFormat: fn(1),
  messageFormatNames: fn(0),
  messageIdFromExternal: fn(2),
  newEventId: fn(0),
  newMessageId: fn(0),
  newSessionId: fn(0),
  openAIAgentsFormat: value,
  openAIChatFormat: value,
  openAIResponsesFormat: value,
  parseChatMessage: fn(1),
  parseEventId: fn(1),
  parseFormatPayload: fn(2),
  parseMessage: fn(1),
  parseMessageId: fn(1),
  parseSessionId: fn(1),
  placeholderDigest: fn(1),
  primeContentHash: fn(2),
  projectStructure: fn(1),
  readingFormat: fn(1),
  redactedPayload: fn(1),
  structuralPlaceholder: fn(1),
  PLACEHOLDER_KEPT_KEYS: value,
  registerMessageFormat: fn(1),
  restoreMessage: fn(1),
  serializeMessage: fn(1),
  sessionIdFromExternal: fn(1),
  sha256Hex: fn(1),
  splitByBatchBytes: fn(2),
  toFrozenJson: fn(2),
  toMessage: fn(1),
  toWire: fn(2),
  toolCallIds: fn(1),
  toolPairing: fn(1),
  toolResultId: fn(1),
  transcriptOf: fn(1),
  withStatus: fn(2),
} as const satisfies Record<keyof typeof core, ExportSpec>

/** Every runtime export of `@turnlog/core/internal` (the building blocks the other packages share). */
export const CORE_INTERNAL_EXPORTS = {
  StructureBuilder: { kind: 'class', arity: 0 },
  applyEvent: fn(2),
  checkCompactionPairing: fn(3),
  checkKnownKeys: fn(4),
  compactionPairingSplits: fn(2),
  checkOptions: fn(3),
  guardInput: fn(2),
  isIsoTimestamp: fn(1),
  messageEnvelope: fn(2),
  newStructure: fn(0),
  optionKeys: fn(1),
  parseInput: fn(3),
  parseMessageIdArgument: fn(2),
  parseSessionIdArgument: fn(2),
  payloadContentHash: fn(2),
  projectionRows: fn(1),
  toFrozenJsonField: fn(2),
  toolPairingOfDistinct: fn(1),
  withApplyTo: fn(2),
  withField: fn(2),
} as const satisfies Record<keyof typeof coreInternal, ExportSpec>

describe('@turnlog/core: every export refuses garbage with a TurnlogError (properties)', () => {
  it('regression (issue 13.11): createMessage(p, null), toWire(null), contentHash(null) and canonicalJson(1n) are INVALID_INPUT, not TypeErrors', () => {
    const calls: [string, () => unknown][] = [
      ['createMessage', () => core.createMessage({ role: 'user', content: 'hi' }, null as never)],
      ['toWire', () => core.toWire(null as never)],
      ['contentHash', () => core.contentHash(null as never)],
      ['canonicalJson', () => core.canonicalJson(1n)],
      ['toolPairing', () => core.toolPairing([null] as never)],
    ]
    const codes = calls.map(([name, call]) => {
      try {
        call()
        return [name, 'returned']
      } catch (error) {
        return [name, core.isTurnlogError(error) ? error.code : String(error)]
      }
    })
    expect(codes).toEqual(calls.map(([name]) => [name, 'INVALID_INPUT']))
  })

  it('each function returns or throws a TurnlogError with a registry code; the table covers every export', async () => {
    await expectEveryExportRejectsGarbage(core, CORE_EXPORTS, { numRuns: 150 })
  }, 120_000)

  it('so does each function of @turnlog/core/internal; its table covers every export', async () => {
    await expectEveryExportRejectsGarbage(coreInternal, CORE_INTERNAL_EXPORTS, { numRuns: 150 })
  }, 120_000)
})
