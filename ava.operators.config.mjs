// The real-operator tier (`npm run test:operators`): test/operators/*.operators.ts, which `npm test`'s
// glob (dist/test/**/*.test.js) never matches. Reproductions run one at a time: each learns its
// operator's reference runs and runs its plan on a fresh embedded cluster.
export default {
  files: ['dist/test/operators/**/*.operators.js'],
  timeout: '600s',
  concurrency: 1,
  workerThreads: false,
};
