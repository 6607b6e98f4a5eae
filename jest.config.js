// One jest run for the whole workspace. Tests import workspace packages by name; the mapper points
// those names at the TypeScript sources so tests never depend on a stale dist/.
/** @type {import('jest').Config} */
const packages = ['core', 'postgres', 'audit', 'hermes', 'cli', 'testing', 'bench']

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/packages'],
  testMatch: ['**/test/**/*.test.ts'],
  moduleNameMapper: {
    ...Object.fromEntries(packages.map((p) => [`^@turnlog/${p}$`, `<rootDir>/packages/${p}/src/index.ts`])),
    // the `./internal` subpath: building blocks the workspace packages share, outside the public API
    '^@turnlog/(postgres|audit)/internal$': '<rootDir>/packages/$1/src/internal.ts',
    '^turnlog$': '<rootDir>/packages/turnlog/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json', diagnostics: false }],
  },
  globalSetup: '<rootDir>/packages/testing/src/jest-global-setup.ts',
  globalTeardown: '<rootDir>/packages/testing/src/jest-global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
}
