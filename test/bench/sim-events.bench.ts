/**
 * How many API writes the simulated Events add to a typical example run: the decommission example's
 * shape (a StatefulSet of 2 with a volume claim template, scaled down to 1) and a Deployment of 2,
 * with Events on and off. Every write moves the cluster's resourceVersion by one, so the difference
 * of the final resourceVersions is the Events' writes.
 *
 *   node dist/test/bench/sim-events.bench.js [rounds]
 */
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/model/object-key.js';

const labels = { app: 'db' };

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function once(events: boolean): Promise<{ writes: number; eventObjects: number; ms: number }> {
  const t0 = performance.now();
  const cluster = await EmbeddedCluster.start({ simulation: { events } });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  const start = cluster.resourceVersion;
  await client.apply({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'standard' },
    provisioner: 'rancher.io/local-path',
  } as KubeObject);
  await client.apply({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'default' },
    spec: {
      replicas: 2,
      serviceName: 'db',
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'db', image: 'cassandra:4.1' }] } },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { storageClassName: 'standard', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
    },
  } as KubeObject);
  await client.apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    },
  } as KubeObject);
  const readyReplicas = async (path: string) =>
    ((await client.request('GET', path)).body as { status?: { readyReplicas?: number } }).status?.readyReplicas ?? 0;
  await until('db ready', async () => (await readyReplicas('/apis/apps/v1/namespaces/default/statefulsets/db')) === 2);
  await until('web ready', async () => (await readyReplicas('/apis/apps/v1/namespaces/default/deployments/web')) === 2);
  await client.request('PATCH', '/apis/apps/v1/namespaces/default/statefulsets/db', {
    body: { spec: { replicas: 1 } },
    contentType: 'application/merge-patch+json',
  });
  await until('db-1 gone', async () => (await client.request('GET', '/api/v1/namespaces/default/pods/db-1')).status === 404);
  // Let the last writes (statuses, Events) land.
  let last = -1;
  while (last !== cluster.resourceVersion) {
    last = cluster.resourceVersion;
    await new Promise((r) => setTimeout(r, 300));
  }
  const eventObjects = ((await client.request('GET', '/api/v1/events')).body as { items: unknown[] }).items.length;
  const writes = cluster.resourceVersion - start;
  client.close();
  await cluster.stop();
  return { writes, eventObjects, ms: performance.now() - t0 };
}

const rounds = Number(process.argv[2] ?? 3);
for (let i = 0; i < rounds; i++) {
  const off = await once(false);
  const on = await once(true);
  console.log(
    `writes without Events ${off.writes}, with ${on.writes} (+${on.writes - off.writes}, x${(on.writes / off.writes).toFixed(2)}); Event objects ${on.eventObjects}; run ${off.ms.toFixed(0)} ms vs ${on.ms.toFixed(0)} ms`,
  );
}
