import js from '@eslint/js'
import { builtinModules } from 'node:module'
import tseslint from 'typescript-eslint'

const PURE = '@turnlog/core is pure: no Node built-ins, drivers or I/O.'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.js', '**/*.cjs', '**/*.mjs', 'test-output/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules. One program over tsconfig.test.json (src and tests, workspace packages mapped to
    // their sources by `paths`) rather than projectService: the package tsconfigs leave out test/, and
    // resolving @turnlog/* through them would need a build before lint.
    files: ['packages/**/*.ts'],
    // (The inspect page's browser script is its own project, with the DOM lib.)
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './packages/cli/src/inspect/page/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // only the form that changes behaviour: `return promise` inside try/catch/finally skips the handler
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // the inspect page's browser scripts are classic scripts: an `import type` would make one a module, so
    // they name the model's types with `import()` types. They share one global scope (inlined together):
    // each lists the functions it declares for the others in an `/* exported … */` comment, which
    // no-unused-vars honours for scripts
    files: ['packages/cli/src/inspect/page/**/*.ts'],
    languageOptions: { sourceType: 'script' },
    rules: { '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }] },
  },
  {
    // core is pure: no Node built-ins (every one, bare or `node:`), no Node globals, no I/O.
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules.map((name) => ({ name, message: PURE })),
          patterns: [{ group: ['node:*', 'pg', 'kysely', '@electric-sql/*'], message: PURE }],
        },
      ],
      'no-restricted-globals': [
        'error',
        ...['process', 'Buffer', 'global', 'require', 'module', '__dirname', '__filename', 'setImmediate', 'clearImmediate'].map(
          (name) => ({ name, message: PURE }),
        ),
      ],
    },
  },
  {
    // only the CLI reads argv/env or writes to stdout (the umbrella's executable, bin.ts, hands it argv).
    files: ['packages/{core,postgres,audit,hermes,openai-agents,ai-sdk,langgraph}/src/**/*.ts', 'packages/turnlog/src/index.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'argv', message: 'Only the CLI reads argv.' },
        { object: 'process', property: 'env', message: 'Libraries take typed config; only the CLI reads env.' },
        { object: 'process', property: 'stdout', message: 'Only the CLI writes to stdout.' },
        {
          object: 'process',
          property: 'stderr',
          message: 'Only the CLI writes to stderr; a library reports through its results and errors.',
        },
      ],
      'no-console': 'error',
    },
  },
)
