// One jest run for the whole workspace, in three projects, one per test tier (the tier is in the file
// name): `unit` (*.test.ts: pure, no server), `int` (*.int.test.ts: real Postgres) and `prop`
// (*.prop.test.ts: fast-check). `pnpm jest` runs all three; `pnpm jest --selectProjects unit` (or
// `pnpm test:unit`) runs one. Tests import workspace packages by name; the mapper points those names at
// the TypeScript sources so tests never depend on a stale dist/.
const packages = ['core', 'postgres', 'audit', 'hermes', 'openai-agents', 'ai-sdk', 'langgraph', 'cli', 'testing', 'bench']

/** What every tier shares. */
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  rootDir: import.meta.dirname,
  roots: ['<rootDir>/packages'],
  moduleNameMapper: {
    ...Object.fromEntries(packages.map((p) => [`^@turnlog/${p}$`, `<rootDir>/packages/${p}/src/index.ts`])),
    // the `./internal` subpath: building blocks the workspace packages share, outside the public API
    '^@turnlog/(core|postgres|audit)/internal$': '<rootDir>/packages/$1/src/internal.ts',
    '^turnlog$': '<rootDir>/packages/turnlog/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json', diagnostics: false }],
  },
}

/**
 * The tiers that talk to a database server resolve it once per run (Jest runs a global setup only when
 * a project that names it has tests in the run, and one module path only once).
 */
const withServer = {
  globalSetup: '<rootDir>/packages/testing/src/jest-global-setup.ts',
  globalTeardown: '<rootDir>/packages/testing/src/jest-global-teardown.ts',
}

/** @type {import('jest').Config} */
export default {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['**/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.(int|prop)\\.test\\.ts$'],
    },
    { ...shared, ...withServer, displayName: 'int', testMatch: ['**/test/**/*.int.test.ts'] },
    { ...shared, ...withServer, displayName: 'prop', testMatch: ['**/test/**/*.prop.test.ts'] },
  ],
  testTimeout: 60_000,
  // longest files first (recorded durations): a fresh clone has no timing cache for Jest's own order
  testSequencer: '<rootDir>/scripts/jest-sequencer.mjs',
  // three workers on the two-core machines: a test file waits on Postgres or a child process part of
  // its time, which a third file fills (shard 1/2 on 2026-12-07: 504 s with three in the checkout
  // against 578 s with two in a fresh clone the same hour; docs/packaging.md has the whole command's time)
  maxWorkers: 3,
  // a worker whose heap holds more than this after a file is replaced by a fresh one: each test file's
  // ESM module graph (the AI SDK, LangChain, PGlite's loader) stays in the worker until a full GC, and a
  // full run's workers grew to ≈ 4 GB and ran their last files 2-4× slower than alone (2026-12-07)
  workerIdleMemoryLimit: '1GB',
  // how long a worker may take to exit once told to (Jest's default 500 ms; then it is killed and the run
  // prints "A worker process has failed to exit gracefully … tests leaking due to improper teardown"). A
  // worker holding no handle at all still needs its heap torn down after its 'exit' event: 110-170 ms
  // for three workers of 150-300 MB heap each, over 500 ms at the end of a 30-file batch on the two cores
  // (2026-12-07: all three had emitted 'exit' within 1 ms of the request, and were killed 500 ms later), so
  // every run printed the warning with nothing leaking. A real leak keeps a worker alive for good: it is
  // still killed and reported, 5 s later.
  workerGracefulExitTimeout: 5_000,
}
