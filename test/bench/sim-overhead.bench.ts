/**
 * What the simulation costs a campaign run: embedded cluster start + stop with and without it,
 * measured alternately in one process (so both see the same machine load), plus a small workload
 * (a ConfigMap and a Secret written and read back, as the secret-marker example does).
 *
 *   node dist/test/bench/sim-overhead.bench.js [rounds]
 */
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';

async function once(simulation: boolean): Promise<{ startMs: number; workMs: number; stopMs: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const cluster = await EmbeddedCluster.start(simulation ? {} : { simulation: false });
  const t1 = performance.now();
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'default' }, data: { a: '1' } });
  await client.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec', namespace: 'default' }, stringData: { b: '2' } });
  await client.get('Secret/default/sec');
  client.close();
  const t2 = performance.now();
  await cluster.stop();
  const t3 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  return { startMs: t1 - t0, workMs: t2 - t1, stopMs: t3 - t2, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const rounds = Number(process.argv[2] ?? 10);
await once(true); // warm up the JIT and the HTTP stack
await once(false);
const results: Record<'bare' | 'simulated', Array<Awaited<ReturnType<typeof once>>>> = { bare: [], simulated: [] };
for (let i = 0; i < rounds; i++) {
  results.bare.push(await once(false));
  results.simulated.push(await once(true));
}
for (const field of ['startMs', 'workMs', 'stopMs', 'cpuMs'] as const) {
  const bare = median(results.bare.map((r) => r[field]));
  const sim = median(results.simulated.map((r) => r[field]));
  console.log(`${field.padEnd(8)} bare ${bare.toFixed(1).padStart(7)}  simulated ${sim.toFixed(1).padStart(7)}  extra ${(sim - bare).toFixed(1).padStart(7)}`);
}
const total = (r: Awaited<ReturnType<typeof once>>) => r.startMs + r.workMs + r.stopMs;
console.log(
  `per run (median of ${rounds}): bare ${median(results.bare.map(total)).toFixed(1)} ms, simulated ${median(results.simulated.map(total)).toFixed(1)} ms`,
);
