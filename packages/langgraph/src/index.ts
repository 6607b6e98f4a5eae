/**
 * `@turnlog/langgraph`: a LangGraph.js checkpoint saver whose `messages` channel lives in turnlog (one
 * event per message change, LangChain ids kept), with the other channels, checkpoints and pending
 * writes in the `turnlog_langgraph` schema of the same database.
 * @packageDocumentation
 */
export { TurnlogCheckpointSaver, type TurnlogCheckpointSaverConfig, type DeleteThreadMode } from './turnlog-checkpoint-saver.js'
export { migrateLangGraph, LANGGRAPH_SCHEMA, type MigrateLangGraphResult } from './migrate-langgraph.js'
export { REMOVE_ALL_REASON, messageScope } from './mirror-messages.js'
export type { MessagesRef } from './thread-sessions.js'
export { TurnlogChatMessageHistory, type TurnlogChatMessageHistoryConfig } from './turnlog-chat-message-history.js'
export {
  LANGCHAIN_MESSAGE_FORMAT,
  REDACTED_ROLE,
  decodeLangChainMessage,
  encodeLangChainMessage,
  isMirrorableMessageList,
  turnlogMessageFor,
} from './langchain-message-codec.js'
