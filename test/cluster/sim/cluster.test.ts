/** Volumes, endpoints, namespace deletion, defaults and deterministic runs. */
import test from 'ava';
import { EmbeddedCluster } from '../../../src/cluster/index.js';
import { container, eventually, getJson, isReady, mergePatch, podTemplate, startSimCluster } from './helpers.js';
import { clusterAuth } from '../helpers.js';

test('a PVC is bound to a dynamically provisioned PV; deleting the PVC releases and deletes the PV', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  const pvc = await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } },
  });
  const bound = await eventually(
    'PVC bound',
    async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    },
    5000,
    log,
  );
  t.is(bound.spec?.volumeName, `pvc-${pvc.metadata!.uid}`);
  t.like(bound.status, { accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } });
  t.is(bound.metadata?.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
  const pv = await core.readPersistentVolume({ name: bound.spec!.volumeName! });
  t.is(pv.status?.phase, 'Bound');
  t.like(pv.spec?.claimRef, { namespace: 'default', name: 'data', uid: pvc.metadata!.uid });
  t.is(pv.spec?.persistentVolumeReclaimPolicy, 'Delete');

  await core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
  await eventually('PV deleted with its claim', async () => !(await getJson(cluster, `/api/v1/persistentvolumes/${pv.metadata!.name}`)), 5000, log);
});

test('a PVC with storageClassName "" binds to a matching pre-created PV only', async (t) => {
  const { core, log } = await startSimCluster(t);
  await core.createPersistentVolume({
    body: {
      metadata: { name: 'small' },
      spec: { storageClassName: '', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/small' } },
    },
  });
  await core.createPersistentVolume({
    body: {
      metadata: { name: 'big' },
      spec: {
        storageClassName: '',
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        hostPath: { path: '/tmp/big' },
      },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: { metadata: { name: 'static' }, spec: { storageClassName: '', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } } },
  });
  const bound = await eventually(
    'bound to the big PV',
    async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'static', namespace: 'default' });
      return c.status?.phase === 'Bound' ? c : undefined;
    },
    5000,
    log,
  );
  t.is(bound.spec?.volumeName, 'big');
  await core.deleteNamespacedPersistentVolumeClaim({ name: 'static', namespace: 'default' });
  const released = await eventually(
    'Retain: the PV is Released and kept',
    async () => {
      const pv = await core.readPersistentVolume({ name: 'big' });
      return pv.status?.phase === 'Released' ? pv : undefined;
    },
    5000,
    log,
  );
  t.truthy(released);
});

test("bindVolumes: false only provisions a PV pre-bound to the claim (binding is kube-controller-manager's)", async (t) => {
  const { core, log } = await startSimCluster(t, { bindVolumes: false });
  const pvc = await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  const pv = await eventually('PV provisioned', async () => (await core.listPersistentVolume()).items[0], 5000, log);
  t.like(pv.spec?.claimRef, { name: 'data', uid: pvc.metadata!.uid });
  await new Promise((r) => setTimeout(r, 100));
  const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
  t.falsy(claim.spec?.volumeName, 'the claim is left for the real PV controller to bind');
});

test('Endpoints list the ready pods selected by a Service', async (t) => {
  const { core, log } = await startSimCluster(t, { podStartDelayMs: 50 });
  await core.createNamespacedService({
    namespace: 'default',
    body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
  });
  for (const name of ['w1', 'w2'])
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name, labels: { app: 'web' } }, spec: podTemplate({}).spec! } });
  const ep = await eventually(
    'two ready addresses',
    async () => {
      const e = await core.readNamespacedEndpoints({ name: 'web', namespace: 'default' });
      return e.subsets?.[0]?.addresses?.length === 2 ? e : undefined;
    },
    5000,
    log,
  );
  const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
  t.deepEqual(ep.subsets![0]!.addresses!.map((a) => a.ip).sort(), pods.items.map((p) => p.status!.podIP).sort());
  t.deepEqual(
    ep.subsets![0]!.ports!.map((p) => ({ ...p })),
    [{ name: 'http', port: 8080, protocol: 'TCP' }],
    'named target ports resolve to the container port',
  );
  await core.deleteNamespacedPod({ name: 'w1', namespace: 'default' });
  await eventually(
    'one address left',
    async () => (await core.readNamespacedEndpoints({ name: 'web', namespace: 'default' })).subsets?.[0]?.addresses?.length === 1,
    5000,
    log,
  );
  t.pass();
});

test('deleting a namespace deletes its pods first, then the rest, reports conditions, then finalizes', async (t) => {
  const { core, apps, cluster, log } = await startSimCluster(t);
  await core.createNamespace({ body: { metadata: { name: 'team' } } });
  await apps.createNamespacedDeployment({
    namespace: 'team',
    body: { metadata: { name: 'api' }, spec: { replicas: 1, selector: { matchLabels: { app: 'api' } }, template: podTemplate({ app: 'api' }) } },
  });
  await core.createNamespacedConfigMap({ namespace: 'team', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
  await eventually('the deployment pod running', async () => (await core.listNamespacedPod({ namespace: 'team' })).items.some(isReady), 5000, log);
  t.truthy(await getJson(cluster, '/api/v1/namespaces/team/serviceaccounts/default'), 'every namespace gets a default ServiceAccount');

  await core.deleteNamespace({ name: 'team' });
  const waiting = await eventually(
    'content gone except the held ConfigMap',
    async () => {
      const ns = await getJson(cluster, '/api/v1/namespaces/team');
      const remaining = ns?.status?.conditions?.find((c: { type: string }) => c.type === 'NamespaceFinalizersRemaining');
      return remaining?.status === 'True' ? ns : undefined;
    },
    5000,
    log,
  );
  t.is(waiting.status.phase, 'Terminating');
  t.regex(
    waiting.status.conditions.find((c: { type: string }) => c.type === 'NamespaceFinalizersRemaining').message,
    /example\.com\/hold in 1 resource instances/,
  );
  t.deepEqual((await core.listNamespacedPod({ namespace: 'team' })).items, []);
  t.deepEqual((await apps.listNamespacedDeployment({ namespace: 'team' })).items, []);

  await fetch(`${cluster.url}/api/v1/namespaces/team/configmaps/held`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/merge-patch+json', ...clusterAuth(cluster) },
    body: '{"metadata":{"finalizers":null}}',
  });
  await eventually('namespace gone', async () => !(await getJson(cluster, '/api/v1/namespaces/team')), 5000, log);
  t.pass();
});

test('the simulation is on by default and off with simulation: false', async (t) => {
  const on = await EmbeddedCluster.start();
  t.teardown(() => on.stop());
  const off = await EmbeddedCluster.start({ simulation: false });
  t.teardown(() => off.stop());
  t.deepEqual(
    (await getJson(on, '/api/v1/nodes')).items.map((n: { metadata: { name: string } }) => n.metadata.name),
    ['node-1'],
  );
  t.deepEqual((await getJson(off, '/api/v1/nodes')).items, []);
});

test('deterministic runs reproduce pod names, pod IPs and provisioned volume names', async (t) => {
  const run = async () => {
    const { apps, core, log } = await startSimCluster(t, { deterministic: true });
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: podTemplate({ app: 'web' }) } },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    await eventually(
      '3 ready',
      async () => (await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' })).status?.availableReplicas === 3,
      8000,
      log,
    );
    const pv = await eventually(
      'PVC bound',
      async () => (await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' })).spec?.volumeName,
      5000,
      log,
    );
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    return [...pods.items.map((p) => `${p.metadata!.name} ${p.status!.podIP}`).sort(), pv];
  };
  const first = await run();
  const second = await run();
  t.is(first.length, 4);
  t.regex(first[3]!, /^pvc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.deepEqual(first, second);
});

test("a pod whose claim is being deleted or missing is not scheduled and does not hold the claim, as kube-scheduler's VolumeBinding and pvc-protection", async (t) => {
  const { core, log } = await startSimCluster(t);
  const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { ...claim, metadata: { name: 'data', finalizers: ['example.com/hold'] } } });
  // No node has the label yet, so the pod is pending when its claim goes.
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'p' },
      spec: { containers: [container()], nodeSelector: { disk: 'ssd' }, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
    },
  });
  const unschedulable = async (why: string) => {
    const p = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
    const c = p.status?.conditions?.find((x) => x.type === 'PodScheduled');
    return c?.status === 'False' && c.reason === 'Unschedulable' && c.message?.includes(why) ? p : undefined;
  };
  await eventually('the pod unschedulable: no node matches', () => unschedulable("didn't match Pod's node affinity/selector"), 5000, log);
  await core.deleteNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
  await eventually('the pod unschedulable: its claim is being deleted', () => unschedulable('persistentvolumeclaim "data" is being deleted'), 5000, log);
  // pvc-protection counts scheduled pods only: the pending pod does not keep the claim.
  await eventually(
    'the claim left with only its own finalizer',
    async () => {
      const c = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
      return c.metadata?.finalizers?.join() === 'example.com/hold';
    },
    5000,
    log,
  );
  await core.patchNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  await eventually('the pod unschedulable: its claim is gone', () => unschedulable('persistentvolumeclaim "data" not found'), 5000, log);
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim });
  await core.patchNode({ name: 'node-1', body: { metadata: { labels: { disk: 'ssd' } } } }, mergePatch);
  const running = await eventually(
    'the pod running once the claim exists again and a node matches',
    async () => {
      const p = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
      return isReady(p) ? p : undefined;
    },
    5000,
    log,
  );
  t.is(running.spec?.nodeName, 'node-1');
});
