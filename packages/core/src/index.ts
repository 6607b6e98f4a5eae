/**
 * `@turnlog/core`: the message model, ids, content hash, schemas, events, the pure projection fold,
 * the wire view, errors and the store port. No I/O.
 * @packageDocumentation
 */
export { ERROR_CODES, MESSAGE_CONFLICT_REASONS, type ConflictReason, type ErrorCode, type MessageConflictReason } from './error-codes.js'
export { TurnlogError, isTurnlogError, type ErrorDetails, type TurnlogErrorOptions } from './turnlog-error.js'
export * from './ids.js'
export { DEFAULT_JSON_LIMITS, cloneJson, toFrozenJson, type JsonLimits, type JsonValue } from './json-value.js'
export { MAX_JSON_DEPTH, checkJsonDepth, jsonDepth } from './json-depth.js'
export {
  ChatMessageSchema,
  ContentPartSchema,
  ContentSchema,
  ToolCallSchema,
  type ChatMessage,
  type ChatRole,
  type ToolCall,
} from './chat-message.js'
export type { BuiltInFormatName, FormatInputs, FormatPayloads } from './formats/format-payloads.js'
export {
  DEFAULT_MESSAGE_FORMAT,
  messageFormat,
  messageFormatNames,
  readingFormat,
  registerMessageFormat,
} from './formats/format-registry.js'
export type { MessageFormat, MessagePreview } from './formats/message-format.js'
export {
  OPENAI_CHAT_FORMAT,
  openAIChatFormat,
  type OpenAIChatInput,
  type OpenAIChatWireMessage,
  type OpenAIChatWireRefusalPart,
  type OpenAIChatWireTextPart,
  type OpenAIChatWireToolCall,
  type OpenAIChatWireUserPart,
} from './formats/openai-chat-format.js'
export { JSON_FORMAT, jsonFormat, type JsonPayload } from './formats/json-format.js'
export { OPENAI_RESPONSES_FORMAT, openAIResponsesFormat, type OpenAIResponsesItem } from './formats/openai-responses-format.js'
export { OPENAI_AGENTS_FORMAT, openAIAgentsFormat, type OpenAIAgentsItem } from './formats/openai-agents-format.js'
export {
  ANTHROPIC_FORMAT,
  anthropicFormat,
  AnthropicMessageParamSchema,
  type AnthropicContentBlock,
  type AnthropicFormat,
  type AnthropicInterruptedResult,
  type AnthropicInterruptedToolResult,
  type AnthropicMessageParam,
} from './formats/anthropic-format.js'
export {
  AI_SDK_UI_FORMAT,
  AiSdkUiMessageSchema,
  aiSdkUiFormat,
  type AiSdkUiMessage,
  type AiSdkUiPart,
  type AiSdkUiToolState,
} from './formats/ai-sdk-ui-format.js'
export {
  AI_SDK_MODEL_FORMAT,
  AiSdkModelMessageSchema,
  aiSdkModelFormat,
  type AiSdkModelMessage,
  type AiSdkModelPart,
} from './formats/ai-sdk-model-format.js'
export {
  createMessage,
  isMessage,
  parseChatMessage,
  parseFormatPayload,
  parseMessage,
  restoreMessage,
  serializeMessage,
  toMessage,
  withStatus,
  type CreateFormatMessageOptions,
  type CreateMessageOptions,
  type MessageEnvelopeOptions,
  type Message,
  type MessageMeta,
  type MessageStatus,
} from './message.js'
export { canonicalJson, contentHash, primeContentHash, sha256Hex, type ContentHash } from './content-hash.js'
export {
  toolCallIds,
  toolPairing,
  toolResultId,
  type DuplicateToolCalls,
  type DuplicateToolResults,
  type OrphanToolResult,
  type PairingInput,
  type ReusedToolCalls,
  type ToolPairing,
  type UnansweredToolCall,
} from './tool-pairing.js'
export { INTERRUPTED_TOOL_RESULT, toWire, type ToWireOptions, type WireMessage } from './to-wire.js'
export {
  EVENT_TYPES,
  type EventBase,
  type EventType,
  type MessageAppendedEvent,
  type MessageEventData,
  type MessageFinalizedEvent,
  type MessageRedactedEvent,
  type MessageRevisedEvent,
  type MessagesCompactedEvent,
  type MessagesRetractedEvent,
  type RewindTarget,
  type SessionForkedEvent,
  type StoredEvent,
} from './events.js'
export { applyCompact, applyRevision, applyRewind, type ApplyTo } from './apply-to-live.js'
export {
  GENESIS_HASH,
  chainHash,
  eventChainHash,
  placeholderDigest,
  type ChainInput,
  type ChainedEvent,
  type ChainedFields,
} from './chain-hash.js'
export { PLACEHOLDER_KEPT_KEYS, REDACTED_CONTENT, isRedactedPayload, redactedPayload, structuralPlaceholder } from './redacted-payload.js'
export {
  foldSession,
  liveMessages,
  transcriptOf,
  type FoldAnomaly,
  type FoldOptions,
  type MessageRecord,
  type MessageRevision,
  type MessageState,
  type SessionState,
  type TranscriptEntry,
  type TranscriptStatus,
} from './fold-session.js'
export {
  projectStructure,
  type ProjectionRow,
  type StructuralEvent,
  type StructuralRecord,
  type StructureState,
} from './project-structure.js'
export { splitByBatchBytes } from './split-by-batch-bytes.js'
export type {
  ImportSessionsOptions,
  ImportSessionsResult,
  ImportedEvent,
  ImportedSession,
  ImportedSessionOutcome,
} from './imported-session.js'
export type * from './session-store.js'
