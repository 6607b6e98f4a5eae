/**
 * Dependency rules: no cycles, and packages depend inward only: cli → audit → core (the audit reads and
 * imports through the store port, never the Postgres store itself), cli → postgres → core, and
 * cli → hermes → postgres → core. The hermes importer (native better-sqlite3) is opt-in: nothing but the
 * CLI (which loads it on demand) depends on it, and the umbrella never does. The umbrella's library entry
 * does not load the CLI either: only its `turnlog` executable (packages/turnlog/src/bin.ts) does.
 */
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
    layer('core', ['postgres', 'audit', 'hermes', 'langgraph', 'cli', 'bench', 'testing', 'turnlog']),
    layer('postgres', ['audit', 'hermes', 'langgraph', 'cli', 'bench', 'testing', 'turnlog']),
    layer('audit', ['postgres', 'hermes', 'langgraph', 'cli', 'bench', 'testing', 'turnlog']),
    layer('hermes', ['audit', 'langgraph', 'cli', 'bench', 'testing', 'turnlog']),
    layer('langgraph', ['hermes', 'cli', 'bench', 'testing', 'turnlog']),
    layer('turnlog', ['hermes', 'langgraph', 'bench', 'testing']),
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
