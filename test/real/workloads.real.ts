/**
 * Workloads on the real control plane: the real kube-controller-manager creates the pods, and the
 * simulated nodes, scheduler and kubelets (src/cluster/sim, as API clients) bind them, run them and
 * honour their deletion, so that StatefulSets become Ready as on a cluster with kubelets.
 */
import test from 'ava';
import { KubeClient } from '../../src/kube/client.js';
import { RealCluster } from '../../src/realcluster/index.js';
import { eventually } from './_helpers.js';

interface Pod {
  metadata: { name: string; deletionTimestamp?: string; ownerReferences?: Array<{ kind: string; name: string }> };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: Array<{ type: string; status: string }>; podIP?: string };
}

const isReady = (pod: Pod) => pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

let cluster: RealCluster;
let client: KubeClient;

test.before(async (t) => {
  cluster = await RealCluster.start({ simulation: { nodes: ['node-1', 'node-2'] } });
  client = new KubeClient(cluster.url, cluster.clientOptions());
  t.log(`real cluster started in ${cluster.startTimes.total + cluster.startTimes.simulation} ms (simulation ${cluster.startTimes.simulation} ms)`);
});

test.after.always(async () => {
  client?.close();
  await cluster?.stop();
});

async function listPods(selector: string): Promise<Pod[]> {
  return ((await client.request('GET', '/api/v1/namespaces/default/pods', { query: { labelSelector: selector } })).body as { items: Pod[] }).items;
}

test('a StatefulSet becomes Ready: pods bound to a simulated node, Running and Ready; scale-down and deletion remove them', async (t) => {
  const nodes = (await client.request('GET', '/api/v1/nodes')).body as { items: Array<{ metadata: { name: string } }> };
  t.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), ['node-1', 'node-2']);

  const labels = { app: 'web' };
  const created = await client.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
    body: {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        serviceName: 'web',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
      },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));

  const status = await eventually('the StatefulSet reports 2 ready replicas', 90_000, async () => {
    const sts = (await client.request('GET', '/apis/apps/v1/namespaces/default/statefulsets/web')).body as {
      status?: { readyReplicas?: number; availableReplicas?: number };
    };
    return sts.status?.readyReplicas === 2 ? sts.status : undefined;
  });
  t.is(status.availableReplicas, 2);

  const pods = await listPods('app=web');
  t.deepEqual(pods.map((p) => p.metadata.name).sort(), ['web-0', 'web-1'], 'the real statefulset controller names its pods');
  for (const pod of pods) {
    t.regex(pod.spec.nodeName ?? '', /^node-[12]$/, `${pod.metadata.name} is bound to a simulated node`);
    t.is(pod.status.phase, 'Running');
    t.true(isReady(pod), `${pod.metadata.name} is Ready`);
    t.like(pod.metadata.ownerReferences?.[0], { kind: 'StatefulSet', name: 'web' });
  }

  // Scale down: the real controller deletes web-1 (graceful deletion), the simulated kubelet finishes it.
  const scaled = await client.request('PATCH', '/apis/apps/v1/namespaces/default/statefulsets/web/scale', {
    body: { spec: { replicas: 1 } },
    contentType: 'application/merge-patch+json',
  });
  t.is(scaled.status, 200, JSON.stringify(scaled.body));
  await eventually('web-1 is gone after scaling down', 60_000, async () =>
    (await client.request('GET', '/api/v1/namespaces/default/pods/web-1')).status === 404 ? true : undefined,
  );

  // Deleting the StatefulSet: the real garbage collector deletes web-0, the kubelet lets it go.
  t.is((await client.request('DELETE', '/apis/apps/v1/namespaces/default/statefulsets/web')).status, 200);
  await eventually('web-0 is garbage-collected', 60_000, async () =>
    (await client.request('GET', '/api/v1/namespaces/default/pods/web-0')).status === 404 ? true : undefined,
  );
  t.pass();
});

test('a StatefulSet with volumeClaimTemplates: the claims are provisioned and bound, the pods become Ready', async (t) => {
  const labels = { app: 'db' };
  const created = await client.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
    body: {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'db', image: 'postgres:16' }] } },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  await eventually('the StatefulSet db reports 2 ready replicas', 90_000, async () => {
    const sts = (await client.request('GET', '/apis/apps/v1/namespaces/default/statefulsets/db')).body as { status?: { readyReplicas?: number } };
    return sts.status?.readyReplicas === 2 ? true : undefined;
  });
  const claims = (
    (await client.request('GET', '/api/v1/namespaces/default/persistentvolumeclaims')).body as {
      items: Array<{ metadata: { name: string }; spec: { volumeName?: string }; status: { phase?: string } }>;
    }
  ).items;
  const dbClaims = claims.filter((c) => c.metadata.name.startsWith('data-db-'));
  t.deepEqual(dbClaims.map((c) => [c.metadata.name, c.status.phase]).sort(), [
    ['data-db-0', 'Bound'],
    ['data-db-1', 'Bound'],
  ]);
  for (const claim of dbClaims) {
    const pv = await client.request('GET', `/api/v1/persistentvolumes/${claim.spec.volumeName}`);
    t.like(pv.body, { status: { phase: 'Bound' } }, `the volume of ${claim.metadata.name}`);
  }
  for (const pod of await listPods('app=db')) t.true(isReady(pod), `${pod.metadata.name} is Ready`);
});

test('a Deployment rolls out: the real deployment and replicaset controllers, simulated kubelets', async (t) => {
  const labels = { app: 'api' };
  const template = (image: string) => ({ metadata: { labels }, spec: { containers: [{ name: 'api', image }] } });
  const created = await client.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    body: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'api' },
      spec: { replicas: 2, selector: { matchLabels: labels }, template: template('api:1') },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const available = (generation: number) => async () => {
    const d = (await client.request('GET', '/apis/apps/v1/namespaces/default/deployments/api')).body as {
      status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number; replicas?: number };
    };
    const s = d.status ?? {};
    return s.observedGeneration === generation && s.updatedReplicas === 2 && s.availableReplicas === 2 && s.replicas === 2 ? true : undefined;
  };
  await eventually('the Deployment has 2 available replicas', 90_000, available(1));

  const patched = await client.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/api', {
    body: { spec: { template: template('api:2') } },
    contentType: 'application/merge-patch+json',
  });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  await eventually('the rollout of api:2 completes', 90_000, available(2));
  const sets = (
    (await client.request('GET', '/apis/apps/v1/namespaces/default/replicasets', { query: { labelSelector: 'app=api' } })).body as {
      items: Array<{ spec: { replicas: number; template: { spec: { containers: Array<{ image: string }> } } } }>;
    }
  ).items;
  t.deepEqual(sets.map((rs) => [rs.spec.template.spec.containers[0]!.image, rs.spec.replicas]).sort(), [
    ['api:1', 0],
    ['api:2', 2],
  ]);
  await eventually('only the api:2 pods are left', 60_000, async () => {
    const pods = await listPods('app=api');
    return pods.length === 2 && pods.every((p) => isReady(p) && !p.metadata.deletionTimestamp) ? true : undefined;
  });
  t.pass();
});
