/**
 * Dependency rules: no cycles, and packages depend inward only: cli → audit → core (the audit reads and
 * imports through the store port, never the Postgres store itself), cli → postgres → core, and
 * cli → hermes → postgres → core. The hermes importer (native better-sqlite3) is opt-in: nothing but the
 * CLI (which loads it on demand) depends on it, and the umbrella never does. The umbrella's library entry
 * does not load the CLI either: only its `turnlog` executable (packages/turnlog/src/bin.ts) does. The
 * framework adapters (ADAPTERS) are opt-in the same way, and depend on nothing outward of audit.
 */
/** The framework adapters: each may use core, postgres and audit; nothing in the workspace but the tests and the private bench uses them. */
const ADAPTERS = ['openai-agents', 'ai-sdk', 'langgraph']
const layer = (from, forbidden) => ({
  name: `${from}-inward-only`,
  severity: 'error',
  comment: `packages/${from} may not depend on ${forbidden.join(', ')}`,
  from: { path: `^packages/${from}/src` },
  to: { path: `^packages/(${forbidden.join('|')})/` },
})
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    layer('core', ['postgres', 'audit', 'hermes', ...ADAPTERS, 'cli', 'bench', 'testing', 'turnlog']),
    layer('postgres', ['audit', 'hermes', ...ADAPTERS, 'cli', 'bench', 'testing', 'turnlog']),
    layer('audit', ['postgres', 'hermes', ...ADAPTERS, 'cli', 'bench', 'testing', 'turnlog']),
    layer('hermes', ['audit', ...ADAPTERS, 'cli', 'bench', 'testing', 'turnlog']),
    layer('turnlog', ['hermes', ...ADAPTERS, 'bench', 'testing']),
    ...ADAPTERS.map((adapter) => layer(adapter, ['hermes', 'cli', 'bench', 'testing', 'turnlog'])),
    {
      name: 'turnlog-cli-only-in-bin',
      severity: 'error',
      comment: 'only the umbrella executable (packages/turnlog/src/bin.ts) may load @turnlog/cli',
      from: { path: '^packages/turnlog/src', pathNot: '^packages/turnlog/src/bin[.]ts$' },
      to: { path: '^packages/cli/' },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      from: { path: '^packages/[^/]+/src' },
      to: { path: '^packages/[^/]+/test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types'] },
    combinedDependencies: true,
  },
}
