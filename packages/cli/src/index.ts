/**
 * `@turnlog/cli`: the `turnlog` command (`bin.ts`). The command line can also run in-process with
 * {@link runCli}; the inspect page and the demo are exported for the umbrella package.
 * @packageDocumentation
 */
export { runCli } from './run-cli.js'
export { processIo, type CliIo, type InterruptReason } from './cli-io.js'
export { EXIT_CODES, type ExitCode } from './exit-codes.js'
export { CLI_ERROR_CODES, CliError, describeError, type CliErrorCode, type DatabaseContext, type ErrorReport } from './cli-error.js'
export {
  DATABASE_URL_ENV,
  DEFAULT_DATA_DIR,
  redactUrl,
  resolveDatabase,
  type DatabaseOptions,
  type DatabaseTarget,
} from './resolve-database.js'
export {
  buildInspectModel,
  type InspectEventItem,
  type InspectMessageItem,
  type InspectModel,
  type InspectSpan,
} from './inspect/build-inspect-model.js'
export { renderInspectHtml } from './inspect/render-inspect-html.js'
export type { DemoStep, DemoSummary, TurnlogScore } from './demo/demo-summary.js'
export { CursorPersister, scoreRows, type CursorRow } from './demo/cursor-persister.js'
export type { PersistenceScore } from './demo/score-persistence.js'
