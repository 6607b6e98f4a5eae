/**
 * `@turnlog/openai-agents`: a durable `Session` for the OpenAI Agents SDK (`@openai/agents-core`),
 * stored in turnlog's event log on Postgres or embedded PGlite.
 * @packageDocumentation
 */
export { TurnlogSession, TURNLOG_SESSION_REASONS, type TurnlogSessionConfig } from './turnlog-session.js'
export { HistoryLedger, type LedgerRecord } from './history-ledger.js'
export { planCompaction, type CompactionPlan, type LiveItem } from './plan-compaction.js'
export { agentItemMessage, agentItemOf, type AgentItemMessage } from './agent-item-message.js'
