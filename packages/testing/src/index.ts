/**
 * `@turnlog/testing`: test databases on a resolved Postgres server, and fast-check arbitraries.
 * Private; a dev dependency only.
 * @packageDocumentation
 */
export { PG_TEMPLATE_ENV, createTestDatabase, type CreateTestDatabaseOptions, type TestDatabase } from './create-test-database.js'
export {
  DEBIAN_POSTGRES_LIB_DIR,
  FORCE_PRIVATE_CLUSTER_ENV,
  TEST_ADMIN_URL_ENV,
  TEST_DATABASE_URL_ENV,
  findPostgresBinDir,
  resolveTestServer,
  startPrivateCluster,
  type PrivateCluster,
  type ResolveTestServerOptions,
  type StartPrivateClusterOptions,
  type TestServer,
  type TestServerSource,
} from './resolve-test-server.js'
export {
  EXOTIC_ANYTHING,
  buildKit,
  deepArb,
  describeThrown,
  garbageArb,
  invalidIdArb,
  isRecordingProgress,
  outcomeCode,
  preview,
  protoArb,
  recordingProgress,
  settle,
  sqlArb,
  storeSnapshot,
  type Build,
  type BuildKit,
} from './bad-input-kit.js'
export {
  chatPayloadArb,
  createdAtArb,
  formatPayloadArb,
  jsonPayloadArb,
  jsonValueArb,
  messageArb,
  metaArb,
  nonEmptyWeirdStringArb,
  safeTextArb,
  thrownValueArb,
  toolCallIdArb,
  weirdCharArb,
  weirdStringArb,
} from './arbitraries.js'
export { openAIResponsesCallArb, openAIResponsesItemArb } from './format-arbitraries/openai-responses-arbitrary.js'
export { openAIAgentsCallArb, openAIAgentsItemArb } from './format-arbitraries/openai-agents-arbitrary.js'
export {
  anthropicAnsweringArb,
  anthropicCallingArb,
  anthropicPayloadArb,
  anthropicToolResultBlockArb,
  anthropicToolUseBlockArb,
  anthropicToolUseIdArb,
} from './format-arbitraries/anthropic-arbitrary.js'
export { aiSdkUiPayloadArb, aiSdkUiPayloadArbWith } from './format-arbitraries/ai-sdk-ui-arbitrary.js'
export { aiSdkModelPayloadArb, aiSdkModelPayloadArbWith } from './format-arbitraries/ai-sdk-model-arbitrary.js'
export {
  describeStoreContract,
  type ContractContext,
  type OpenContractStore,
  type OpenedStore,
  type StoreContractOptions,
} from './store-contract.js'
export {
  startTcpProxy,
  type ProxyCloseMode,
  type ProxyFault,
  type ProxyFaultKind,
  type ProxyFaultReport,
  type TcpProxy,
  type TcpProxyConfig,
  type TcpProxyStats,
} from './tcp-proxy.js'
export { Ledger, type LedgerReport } from './ledger.js'
export { SessionModel, type ModelLoad, type ModelMessage, type ModelOutcome } from './session-model.js'
export {
  HostileCallbackError,
  VALUE_EXPORT,
  classExport,
  expectEveryExportRejectsGarbage,
  functionExport,
  hostileValueArb,
  type ExportSpec,
  type HostileRecipe,
} from './hostile-value.js'
export { useTestStore, type TestStore, type UseTestStoreOptions } from './use-test-store.js'
export {
  STORE_KINDS,
  makeMigratedDataDir,
  migratedPGliteDump,
  openMigratedPGlite,
  openTestStore,
  useTestStoreOfKind,
  type OpenedTestStore,
  type StoreKind,
} from './open-test-store.js'
export { useTwoTestStores, type TwoTestStores } from './use-two-test-stores.js'
export { useProxiedStores, type ProxiedStores } from './use-proxied-stores.js'
export { rollBackSession } from './roll-back-session.js'
export { HOSTILE_TEXT, sameRealmClone } from './same-realm-clone.js'
export { caught, nestedObject, refusal, refusalOf, rejection, turnlogRejection } from './caught.js'
export { migrateByOpening } from './migrate-by-opening.js'
export { writeOutcome, type WriteOutcome } from './write-outcome.js'
export { IMPORT_INPUT_CODES, OutcomeTally } from './outcome-tally.js'
