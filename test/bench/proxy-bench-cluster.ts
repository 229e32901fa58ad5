/** proxy.bench.ts: the embedded cluster in a process of its own (as `kperturb cluster` runs it). */
import { EmbeddedCluster } from '../../src/cluster/index.js';

// The bench's raw baselines (direct, pipe, relay) send no token.
const cluster = await EmbeddedCluster.start({ bookmarkIntervalMs: 0, insecureNoAuth: true });
process.send!({ port: cluster.port });
const stop = () => void cluster.stop().then(() => process.exit(0));
process.on('message', (m: string) => {
  if (m === 'stop') stop();
});
process.on('disconnect', stop);
