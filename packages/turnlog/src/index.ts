/**
 * turnlog: an event-sourced Postgres persistence engine for AI-agent conversations.
 * This umbrella package re-exports the public API of `@turnlog/core`, `@turnlog/postgres` and
 * `@turnlog/audit`.
 * @packageDocumentation
 */
export * from '@turnlog/core'
