import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.js', '**/*.cjs', '**/*.mjs', 'test-output/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // core is pure: no Node built-ins, no I/O.
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*', 'fs', 'path', 'crypto', 'pg', 'kysely', '@electric-sql/*'], message: '@turnlog/core is pure: no Node built-ins, drivers or I/O.' }] }],
    },
  },
  {
    // only the CLI reads argv/env or writes to stdout.
    files: ['packages/{core,postgres,audit,hermes}/src/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error',
        { object: 'process', property: 'argv', message: 'Only the CLI reads argv.' },
        { object: 'process', property: 'env', message: 'Libraries take typed config; only the CLI reads env.' },
      ],
      'no-console': 'error',
    },
  },
)
