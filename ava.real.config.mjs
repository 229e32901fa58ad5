// The real-control-plane tier (`npm run test:real`): test/real/*.real.ts, which `npm test`'s glob
// (dist/test/**/*.test.js) never matches. Each file starts its own control plane (three processes),
// so files run one at a time on a small machine.
export default {
  files: ['dist/test/real/**/*.real.js'],
  timeout: '300s',
  concurrency: 1,
  workerThreads: false,
};
