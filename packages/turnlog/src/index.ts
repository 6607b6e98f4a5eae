/**
 * turnlog: an event-sourced Postgres persistence engine for AI-agent conversations.
 *
 * This umbrella package is what applications import. It lists, by name, the public API of
 * `@turnlog/core` (messages, ids, hashes, events, the fold, `toWire`, errors, the store port),
 * `@turnlog/postgres` (`openStore`, `PostgresStore`, `withRetry`, migrations, subscriptions) and
 * `@turnlog/audit` (`audit`, `verifyChain`, export/import). Internals stay out; `api-report.api.md` (per package)
 * records every name with its signature, and a test fails when the surface changes unreviewed.
 * It has no native dependency: the hermes-agent `state.db` importer (`importHermes`, which needs the
 * native `better-sqlite3`) is the opt-in package `@turnlog/hermes`, installed and imported on its own.
 * @example
 * ```ts
 * import { openStore, createMessage, toWire } from 'turnlog'
 * const store = await openStore({ embedded: true })
 * const session = await store.createSession()
 * await store.append(session, [createMessage({ role: 'user', content: 'hi' })])
 * const { messages } = await store.load(session)
 * console.log(toWire(messages))
 * ```
 * @packageDocumentation
 */
// @turnlog/core: the message model, ids, content hash, schemas, events, the fold, the wire view, errors, the store port
export {
  canonicalJson, chainHash, ChatMessageSchema, checkJsonDepth, cloneJson, contentHash, ContentPartSchema,
  ContentSchema, createMessage, DEFAULT_JSON_LIMITS, ERROR_CODES, EVENT_TYPES, eventChainHash,
  EXTERNAL_ID_NAMESPACE, EXTERNAL_SESSION_NAMESPACE, foldSession, GENESIS_HASH, INTERRUPTED_TOOL_RESULT,
  isMessage, isRedactedPayload, isTurnlogError, jsonDepth, liveMessages, MAX_JSON_DEPTH,
  MESSAGE_CONFLICT_REASONS, messageIdFromExternal, newEventId, newMessageId, newSessionId, parseChatMessage,
  parseEventId, parseMessage, parseMessageId, parseSessionId, placeholderDigest, primeContentHash,
  REDACTED_CONTENT, redactedPayload, restoreMessage, serializeMessage, sessionIdFromExternal, sha256Hex,
  toFrozenJson, toMessage, toolCallIds, ToolCallSchema, toolPairing, toolResultId, toWire, transcriptOf,
  TurnlogError, withStatus, EXTERNAL_SCOPE_NAMESPACE, applyCompact, applyRevision, applyRewind, projectStructure,
  DEFAULT_MESSAGE_FORMAT, JSON_FORMAT, jsonFormat, messageFormat, messageFormatNames,
  OPENAI_CHAT_FORMAT, openAIChatFormat, parseFormatPayload, readingFormat, registerMessageFormat,
  type ApplyTo, type BuiltInFormatName, type CreateFormatMessageOptions, type FormatPayloads, type MessageEnvelopeOptions, type RewindTargetInput, type JsonPayload, type MessageFormat, type MessageMeta, type MessagePreview,
  type OpenAIChatInput, type OpenAIChatWireMessage, type OpenAIChatWireRefusalPart, type OpenAIChatWireTextPart,
  type OpenAIChatWireToolCall, type OpenAIChatWireUserPart, type PairingInput,
  type AppendOptions, type AppendResult, type Brand, type ChainedEvent, type ChainedFields, type ChainInput, type ChatMessage,
  type ChatRole, type CompactInput, type CompactResult, type ConflictReason, type ConflictRecord,
  type ContentHash, type CreateMessageOptions, type CreateSessionOptions, type DuplicateToolResults,
  type ErrorCode, type ErrorDetails, type EventBase, type EventId, type EventsOptions, type EventType,
  type FoldAnomaly, type ProjectionRow, type StructuralEvent, type StructuralRecord, type StructureState, type FoldOptions, type ForkOptions, type JsonLimits, type JsonValue,
  type ListSessionsOptions, type LoadOptions, type LoadResult, type Message, type MessageAppendedEvent,
  type MessageConflictReason, type MessageEventData, type MessageFinalizedEvent, type MessageId,
  type MessageRecord, type MessageRedactedEvent, type MessageRevisedEvent, type MessageRevision,
  type MessagesCompactedEvent, type MessagesRetractedEvent, type MessageState, type MessageStatus,
  type OrphanToolResult, type ProjectionDrift, type RebuildOptions, type RebuildResult, type RedactOptions,
  type RedactResult, type ReviseOptions, type ReviseResult, type RewindOptions, type RewindResult,
  type RewindTarget, type SessionForkedEvent, type SessionId, type SessionInfo, type SessionPage,
  type SessionState, type SessionStore, type StoredEvent, type ToolCall, type ToolPairing, type ToWireOptions,
  type Transcript, type TranscriptEntry, type TranscriptStatus, type TurnlogErrorOptions,
  type UnansweredToolCall, type WireMessage, type WriteOptions, type ImportedEvent, type ImportedSession,
  type ImportedSessionOutcome, type ImportSessionsOptions, type ImportSessionsResult,
} from '@turnlog/core'
export { OPENAI_AGENTS_FORMAT, openAIAgentsFormat, OPENAI_RESPONSES_FORMAT, openAIResponsesFormat, type OpenAIAgentsItem, type OpenAIResponsesItem } from '@turnlog/core'
export { ANTHROPIC_FORMAT, anthropicFormat, AnthropicMessageParamSchema, type AnthropicContentBlock, type AnthropicFormat, type AnthropicInterruptedResult, type AnthropicInterruptedToolResult, type AnthropicMessageParam } from '@turnlog/core'
// the AI SDK message formats (`ai` v6): UIMessage and ModelMessage
export { AI_SDK_MODEL_FORMAT, AI_SDK_UI_FORMAT, aiSdkModelFormat, AiSdkModelMessageSchema, aiSdkUiFormat, AiSdkUiMessageSchema, type AiSdkModelMessage, type AiSdkModelPart, type AiSdkUiMessage, type AiSdkUiPart, type AiSdkUiToolState } from '@turnlog/core'

// @turnlog/postgres: `openStore`, `PostgresStore`, migrations and roles, retries, batch limits, subscriptions
export {
  compareCheckpoints, dropSubscription, dedicatedConnectionFromConfig, dedicatedConnectionFromPool, DEFAULT_MAX_BATCH_BYTES,
  EVENTS_CHANNEL, LAG_COUNT_CAP, listSubscriptions, MAX_BATCH_BYTES_CEILING, migrateToLatest,
  oldestOpenTransaction, openStore, parseOpenStoreConfig, PostgresStore, readCommittedEvents, rebaseAfterRestore, REBASED_TX_ID,
  rebaseSubscription, rolesSql, splitByBatchBytes, START_CHECKPOINT, Subscription, TURNLOG_ROLES, withRetry,
  type BackoffOptions, type Checkpoint, type ConflictsTable, type DataDirLockHolder, type ConnectionStringConfig,
  type DedicatedConnection, type DedicatedConnectionFactory, type EmbeddedConfig, type EventsTable, type FindSessionIdsOptions,
  type GroupCommitSettings, type HandlerContext, type KyselyConfig, type LiveMessagesTable, type MigrateResult,
  type OldestOpenTransactionOptions, type OpenStoreCommonConfig, type OpenStoreConfig,
  type OpenTransactionInfo, type PoolConfigInput, type PostgresStoreInit, type PostgresStoreSettings,
  type ReadCommittedEventsOptions, type ReadCommittedEventsResult, type RebaseAfterRestoreOptions,
  type RebaseAfterRestoreResult, type RebaseResult, type RebaseTarget, type RetryOptions, type RolesSqlOptions,
  type SessionsTable, type SubscribedEvent, type SubscribeOptions, type SubscriptionAdminStore,
  type SubscriptionConfig, type SubscriptionFilter, type SubscriptionHandler, type SubscriptionInfo,
  type SubscriptionLag, type SubscriptionState, type TelemetryConfig, type TelemetryMeter, type TelemetryTracer,
  type TurnlogDatabase,
} from '@turnlog/postgres'

// @turnlog/audit: `audit`, chain verification, export and import of event files, transcript import, reports
export {
  audit, AUDIT_CHECKS, countFindings, exitCodeFor, EXPORT_FORMAT, EXPORT_VERSION, exportSessions,
  FINDING_KINDS, importEvents, importTranscript, renderFindingLine, renderReportText, SEVERITIES,
  severityAtLeast, transcriptMessageId, verifyChain, verifyExport,
  type AuditCheck, type AuditCounts, type AuditOptions, type AuditProgress, type AuditReport, type AuditTarget,
  type ChainBreak, type ChainBreakKind, type ChainVerification, type ExportEndRecord, type ExportEventRecord,
  type ExportHeader, type ExportSelection, type ExportSessionRecord, type ExportSessionsOptions, type Finding,
  type FindingKind, type FindingKindInfo, type ImportEventsOptions, type ImportProgress, type ImportResult,
  type ImportTranscriptOptions, type ImportTranscriptResult, type Severity,
} from '@turnlog/audit'
