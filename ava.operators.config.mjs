// The real-operator tier (`npm run test:operators`): test/operators/*.operators.ts, which `npm test`'s
// glob (dist/test/**/*.test.js) never matches. Reproductions run one at a time: each learns its
// operator's reference runs and runs its plan on a fresh embedded cluster.
export default {
  files: ['dist/test/operators/**/*.operators.js'],
  // AVA's timeout is the longest stretch without a finished test: a reproduction that runs every
  // matching plan (rabbitmq-operator#653 ran 15 of 36 before one showed the race) takes minutes.
  timeout: '1800s',
  concurrency: 1,
  workerThreads: false,
};
