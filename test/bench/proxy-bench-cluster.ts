/** proxy.bench.ts: the embedded cluster in a worker thread of its own (as `kperturb cluster` runs it). */
import { parentPort } from 'node:worker_threads';
import { EmbeddedCluster } from '../../src/cluster/index.js';

const cluster = await EmbeddedCluster.start({ bookmarkIntervalMs: 0 });
parentPort!.postMessage({ port: cluster.port });
parentPort!.on('message', (m: string) => {
  if (m === 'stop') void cluster.stop().then(() => process.exit(0));
});
