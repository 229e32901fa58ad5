/**
 * How long a fresh real control plane takes to start and stop: the per-plan cost of isolating plans
 * by a fresh etcd data directory (a new control plane per plan). Prints numbers, asserts nothing.
 * The embedded cluster's start in the same run is the baseline.
 *
 *   npm run build && node dist/test/bench/real-start.bench.js [rounds=5]
 */
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { RealCluster, startRealControlPlane } from '../../src/realcluster/index.js';

const rounds = Number(process.argv[2] ?? 5);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const value = await fn();
  return [value, Date.now() - started];
}

const rows: Record<string, number[]> = {};
const add = (name: string, ms: number) => (rows[name] ??= []).push(ms);

for (let i = 0; i < rounds; i++) {
  const [embedded, embeddedStart] = await timed(() => EmbeddedCluster.start());
  const [, embeddedStop] = await timed(() => embedded.stop());
  add('embedded cluster (with simulation): start', embeddedStart);
  add('embedded cluster: stop', embeddedStop);

  const [cp, cpStart] = await timed(() => startRealControlPlane());
  add('real control plane: start (total)', cpStart);
  add('  etcd ready', cp.startTimes.etcd);
  add('  kube-apiserver /readyz', cp.startTimes.apiserver);
  add('  kube-controller-manager (default SA exists)', cp.startTimes.controllerManager);
  const [, cpStop] = await timed(() => cp.stop());
  add('real control plane: stop (incl. deleting the data dir)', cpStop);

  const [cluster, clusterStart] = await timed(() => RealCluster.start());
  add('real cluster (control plane + simulated nodes/kubelets): start', clusterStart);
  const [, clusterStop] = await timed(() => cluster.stop());
  add('real cluster: stop', clusterStop);
  process.stderr.write(`round ${i + 1}/${rounds} done\n`);
}

const width = Math.max(...Object.keys(rows).map((k) => k.length));
const embeddedMedian = median(rows['embedded cluster (with simulation): start']!);
process.stdout.write(`${'phase'.padEnd(width)}  median ms  min..max ms  (${rounds} rounds)\n`);
for (const [name, values] of Object.entries(rows)) {
  process.stdout.write(`${name.padEnd(width)}  ${String(median(values)).padStart(9)}  ${Math.min(...values)}..${Math.max(...values)}\n`);
}
const realMedian = median(rows['real cluster (control plane + simulated nodes/kubelets): start']!) + median(rows['real cluster: stop']!);
process.stdout.write(
  `\nper-plan isolation cost (real start + stop): ${realMedian} ms = ${(realMedian / Math.max(1, embeddedMedian)).toFixed(0)}x the embedded cluster's start\n`,
);
