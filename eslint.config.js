// Lint (npm run lint): ESLint's and typescript-eslint's recommended rules, and the layers of the
// design (ARCHITECTURE.md) as import rules, so that an import pointing the wrong way fails CI:
//   core:    src/model, planner/, oracles/  (pure: no sockets, processes or clock; planner and
//            oracles import only the model)
//   runtime: src/io, src/wire, src/cluster, src/kube, proxy/, src/recorder, src/workload, ...
//   app:     src/campaign, src/report, src/cli
// The compiler enforces the layers too (tsconfig.*.json, one project per layer): these rules give
// the friendlier message, and catch what stays inside one layer, such as the proxy importing the
// embedded cluster.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Import patterns a layer may not use (relative paths are matched as written, from any depth). */
const APP = ['**/campaign/*', '**/cli/*', '**/report/*'];
const RUNTIME = [
  '**/io/*',
  '**/wire/*',
  '**/cluster/*',
  '**/kube/*',
  '**/proxy/*',
  '**/recorder/*',
  '**/workload/*',
  '**/coordinator/*',
  '**/realcluster/*',
  '**/process/*',
  '**/stubs/*',
  '**/streaming/*',
  '**/config/*',
];
const layer = (patterns, message) => ({ 'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }] });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'fixtures/operators/**', 'fixtures/controllers/go/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // `let x; const stop = () => x?.abort(); x = await ...`: a closure reads it before its one assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  // Tests poke at JSON documents and escape sequences: any and control characters are their trade.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' } },
  // The run and the campaign's stages are parts and collaborators, not long functions (a run is
  // ./src/coordinator/run-parts.ts started by run-manager.ts; the test stage is test-stage.ts).
  {
    files: ['src/coordinator/**/*.ts', 'src/campaign/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  // Core: planner and oracles are pure functions of traces and configuration.
  {
    files: ['planner/**/*.ts', 'oracles/**/*.ts'],
    rules: layer(
      [...APP, ...RUNTIME, 'node:net', 'node:http', 'node:http2', 'node:child_process', 'node:fs', 'node:fs/*'],
      'planner/ and oracles/ are pure (traces in, plans or verdicts out): import only src/model',
    ),
  },
  {
    files: ['src/model/**/*.ts'],
    rules: layer([...APP, ...RUNTIME, '**/planner/*', '**/oracles/*'], 'src/model is the core every layer imports: it imports nothing above it'),
  },
  // Runtime: nothing of the app layer.
  {
    files: [
      'proxy/**/*.ts',
      'src/io/**/*.ts',
      'src/wire/**/*.ts',
      'vendor/**/*.ts',
      'src/cluster/**/*.ts',
      'src/kube/**/*.ts',
      'src/recorder/**/*.ts',
      'src/workload/**/*.ts',
      'src/coordinator/**/*.ts',
      'src/realcluster/**/*.ts',
      'src/process/**/*.ts',
      'src/stubs/**/*.ts',
      'src/streaming/**/*.ts',
      'src/config/**/*.ts',
    ],
    rules: layer(APP, 'the runtime layer does not import the app layer (campaign, report, cli)'),
  },
  // The proxy sees bytes and fault primitives; the embedded cluster is one of its upstreams, not a library.
  {
    files: ['proxy/**/*.ts'],
    rules: layer(
      [...APP, '**/cluster/*', '**/coordinator/*', '**/planner/*', '**/oracles/*'],
      'proxy/ knows the wire and its fault primitives: not the embedded cluster, the coordinator, the planner or the oracles',
    ),
  },
);
