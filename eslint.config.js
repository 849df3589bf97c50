// Lint rules double as the architecture fence: imports flow one way (see ../docs/architecture.md).
const tseslint = require('typescript-eslint');
const js = require('@eslint/js');
const importX = require('eslint-plugin-import-x');

// Folders shipped in the operator image or the agent, and the ones that only use them.
const product = ['crds', 'contracts', 'workflows', 'activities', 'watcher', 'worker', 'agent', 'plugin'];
const nonProduct = ['./localcluster', './bench', './test'];

const processExit = {
  selector: "CallExpression[callee.object.name='process'][callee.property.name='exit']",
  message: 'Only a main.ts may exit the process.',
};

const nodeBuiltins = require('node:module').builtinModules.flatMap((m) => [m, `node:${m}`]);

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.local/**', 'coverage/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    // Type information lets lint see promises and unions: a promise nobody awaits loses its error, a
    // switch that misses a new operation type or reason silently does nothing.
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      'import-x/no-cycle': 'error',
      // The image installs production dependencies only (npm ci --omit=dev): a test library or tool imported by
      // shipped code would fail at run time, not at build time.
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: ['**/*.test.ts', 'test/**'] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', processExit],
    },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
  },
  {
    files: ['**/main.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The direction of imports (docs/architecture.md): crds/, contracts/ <- workflows/, activities/ <- worker/;
    // the watcher and the agent use crds/ and contracts/ only; localcluster/, bench/ and test/ use the product,
    // never the reverse. Tests next to code may use test/support and the local stack's tool cache.
    files: ['**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: __dirname,
          zones: [
            {
              target: './crds',
              from: [...product.filter((f) => f !== 'crds').map((f) => `./${f}`), ...nonProduct],
              message: 'crds/ is the public API and imports nothing else of the project.',
            },
            {
              target: './contracts',
              from: [
                ...product.filter((f) => f !== 'crds' && f !== 'contracts').map((f) => `./${f}`),
                ...nonProduct,
              ],
              message: 'contracts/ sits below every layer: it may use crds/ only.',
            },
            {
              target: './workflows',
              from: ['./watcher', './worker', './agent', './plugin', ...nonProduct],
              message: 'Workflows import crds/, contracts/, their own folder, and activities by type.',
            },
            {
              target: './activities',
              from: ['./workflows', './watcher', './worker', './agent', './plugin', ...nonProduct],
              message:
                'Activities import crds/ and contracts/ only (what they share with workflows is a contract).',
            },
            {
              target: './watcher',
              from: ['./workflows', './activities', './worker', './agent', './plugin', ...nonProduct],
              message: 'The watcher imports crds/ and contracts/ only.',
            },
            {
              target: './agent',
              from: ['./workflows', './activities', './watcher', './worker', './plugin', ...nonProduct],
              message: 'The agent runs in member Pods: it imports crds/ and contracts/ only.',
            },
            {
              target: './plugin',
              from: ['./workflows', './activities', './watcher', './worker', './agent', ...nonProduct],
              message: 'kubectl etcd reads what the operator records: it imports crds/ and contracts/ only.',
            },
            {
              target: './worker',
              from: ['./agent', './plugin', ...nonProduct],
              message:
                'The operator process hosts the product; the local stack, benchmarks and tests use it, not the reverse.',
            },
            {
              target: ['./localcluster', './bench'],
              from: ['./test'],
              message: 'End-to-end tests use the local stack, never the reverse.',
            },
          ],
        },
      ],
    },
  },
  {
    // What crosses a boundary is plain data and names: packages only by type, so any side may import it.
    files: ['contracts/**/*.ts'],
    ignores: ['contracts/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^[^.]',
              allowTypeImports: true,
              message: 'contracts/ has no runtime dependencies: import packages with `import type` only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no clients, activities by type only.
    files: ['workflows/**/*.ts'],
    // Test code runs workers and servers outside the sandbox.
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        processExit,
        {
          // Options spelled out, spread over a kind, or passed through a variable: each call names its kind.
          selector:
            "CallExpression[callee.name='proxyActivities']:not([arguments.0.object.name='ActivityKinds'])",
          message: 'Name a kind from workflows/activity-kinds.ts instead of spelling activity options out.',
        },
      ],
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
          ],
        },
      ],
    },
  },
);
