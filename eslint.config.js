// Lint rules double as the architecture fence: imports flow one way (see ../docs/architecture.md).
const tseslint = require('typescript-eslint');
const js = require('@eslint/js');
const importX = require('eslint-plugin-import-x');

const nodeBuiltins = require('node:module').builtinModules.flatMap((m) => [m, `node:${m}`]);

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.local/**', 'coverage/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']",
          message: 'Only a main.ts may exit the process.',
        },
      ],
    },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
  },
  {
    files: ['**/main.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The public API depends on nothing of ours.
    files: ['crds/**/*.ts'],
    ignores: ['crds/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../crds/*'],
              message: 'crds/ is the public API and imports nothing else of the project.',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no clients, activities by type only.
    files: ['workflows/**/*.ts'],
    // Test code runs workers and servers outside the sandbox; the dev server helper is test code.
    ignores: [
      'workflows/**/*.test.ts',
      'workflows/test-support/dev-server.ts',
      'workflows/test-support/time-skipping-server.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({
              name,
              message: 'Workflow code is sandbox-pure: no Node built-ins.',
            })),
            { name: '@kubernetes/client-node', message: 'Workflow code does no I/O; use an activity.' },
            { name: 'etcd3', message: 'Workflow code does no I/O; use an activity.' },
            { name: '@aws-sdk/client-s3', message: 'Workflow code does no I/O; use an activity.' },
            { name: '@temporalio/client', message: 'Workflow code uses @temporalio/workflow only.' },
            { name: '@temporalio/worker', message: 'Workflow code uses @temporalio/workflow only.' },
          ],
          patterns: [
            {
              group: ['../activities/*', '../activities'],
              allowTypeImports: true,
              message: 'Workflows see activities only through `import type`.',
            },
            {
              group: ['../watcher/*', '../worker/*', '../localcluster/*', '../agent/*'],
              message: 'Workflows import crds/ and their own folder only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['activities/**/*.ts'],
    ignores: ['activities/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../watcher/*', '../worker/*', '../localcluster/*', '../workflows/*'],
              message: 'Activities import crds/ only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['watcher/**/*.ts'],
    ignores: ['watcher/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../activities/*', '../worker/*', '../localcluster/*', '../agent/*'],
              message: 'The watcher imports crds/ and workflow message definitions only.',
            },
            {
              group: ['../workflows/*', '!../workflows/messages'],
              message: 'The watcher imports only workflows/messages.',
            },
          ],
        },
      ],
    },
  },
);
