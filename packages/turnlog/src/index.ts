/**
 * turnlog: an event-sourced Postgres persistence engine for AI-agent conversations.
 *
 * This umbrella package is what applications import. It re-exports the public API of `@turnlog/core`
 * (messages, ids, hashes, events, the fold, `toWire`, errors, the store port), `@turnlog/postgres`
 * (`openStore`, `PostgresStore`, `withRetry`, migrations, subscriptions) and `@turnlog/audit` (`audit`,
 * `verifyChain`, export/import): each package's entry point lists its public names one by one, and
 * internals live behind their `./internal` subpaths, which this file does not touch. `api-report.api.md`
 * (per package, this one included) records every name with its signature, and a test fails when the
 * surface changes unreviewed.
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
export * from '@turnlog/core'
// @turnlog/postgres: `openStore`, `PostgresStore`, migrations and roles, retries, batch limits, subscriptions
export * from '@turnlog/postgres'
// @turnlog/audit: `audit`, chain verification, export and import of event files, transcript import, reports
export * from '@turnlog/audit'
