/**
 * turnlog: an event-sourced Postgres persistence engine for AI-agent conversations.
 *
 * This umbrella package is what applications import. It re-exports the public API of
 * `@turnlog/core` (messages, ids, hashes, events, the fold, `toWire`, errors, the store port),
 * `@turnlog/postgres` (`openStore`, `PostgresStore`, `withRetry`, migrations) and `@turnlog/audit`
 * (`audit`, `verifyChain`, export/import, transcript import). It has no native dependency: the hermes-agent
 * `state.db` importer (`importHermes`, which needs the native `better-sqlite3`) is the opt-in package
 * `@turnlog/hermes`, installed and imported on its own.
 * @packageDocumentation
 */
export * from '@turnlog/core'
export * from '@turnlog/postgres'
export * from '@turnlog/audit'
