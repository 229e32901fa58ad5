/** Deployments, StatefulSets, DaemonSets and Jobs through the simulated controllers. */
import test from 'ava';
import type * as k8s from '@kubernetes/client-node';
import { eventually, getJson, isReady, mergePatch, podNames, podTemplate, startSimCluster } from './helpers.js';

test('Deployment: ReplicaSet with pod-template-hash, ready pods, status and conditions; a rollout replaces the ReplicaSet', async (t) => {
  const { apps, core, log } = await startSimCluster(t);
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: { metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate({ app: 'web' }) } },
  });
  const done = await eventually(
    'rollout complete',
    async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
      const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
      return d.status?.availableReplicas === 2 && progressing?.reason === 'NewReplicaSetAvailable' ? d : undefined;
    },
    8000,
    log,
  );
  t.like(done.status, { replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1 });
  t.like(
    done.status?.conditions?.find((c) => c.type === 'Available'),
    { status: 'True', reason: 'MinimumReplicasAvailable' },
  );
  t.is(done.metadata?.annotations?.['deployment.kubernetes.io/revision'], '1');

  const sets = await apps.listNamespacedReplicaSet({ namespace: 'default' });
  t.is(sets.items.length, 1);
  const rs = sets.items[0]!;
  const hash = rs.metadata!.labels!['pod-template-hash']!;
  t.truthy(hash);
  t.is(rs.metadata!.name, `web-${hash}`);
  t.is(rs.spec!.selector.matchLabels!['pod-template-hash'], hash);
  t.like(rs.metadata!.ownerReferences![0], { kind: 'Deployment', name: 'web', controller: true, blockOwnerDeletion: true });
  t.like(rs.status, { replicas: 2, readyReplicas: 2, availableReplicas: 2 });
  const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
  t.is(pods.items.length, 2);
  for (const p of pods.items) {
    t.true(p.metadata!.name!.startsWith(`web-${hash}-`), p.metadata!.name);
    t.true(isReady(p));
    t.is(p.metadata!.ownerReferences![0]!.name, rs.metadata!.name!);
  }

  // A template change rolls out a new ReplicaSet and scales the old one to zero.
  await apps.patchNamespacedDeployment(
    { name: 'web', namespace: 'default', body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.28' }] } } } } },
    mergePatch,
  );
  const rolled = await eventually(
    'second rollout complete',
    async () => {
      const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
      const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
      return d.status?.observedGeneration === 2 &&
        d.status.updatedReplicas === 2 &&
        d.status.replicas === 2 &&
        d.status.availableReplicas === 2 &&
        progressing?.reason === 'NewReplicaSetAvailable'
        ? d
        : undefined;
    },
    8000,
    log,
  );
  t.is(rolled.metadata?.annotations?.['deployment.kubernetes.io/revision'], '2');
  const after = await apps.listNamespacedReplicaSet({ namespace: 'default' });
  t.is(after.items.length, 2);
  const old = after.items.find((r) => r.metadata!.name === rs.metadata!.name)!;
  t.is(old.spec!.replicas, 0);
  const current = after.items.find((r) => r.metadata!.name !== rs.metadata!.name)!;
  t.is(current.metadata!.annotations!['deployment.kubernetes.io/revision'], '2');
  await eventually('old pods gone', async () => (await podNames(core, 'default', 'app=web')).every((n) => n.startsWith(current.metadata!.name!)), 5000, log);

  // Scaling.
  await apps.patchNamespacedDeploymentScale({ name: 'web', namespace: 'default', body: { spec: { replicas: 3 } } }, mergePatch);
  await eventually(
    'scaled to 3',
    async () => (await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' })).status?.readyReplicas === 3,
    5000,
    log,
  );
  t.pass();
});

function statefulSet(name: string, replicas: number, extra: Partial<k8s.V1StatefulSetSpec> = {}): k8s.V1StatefulSet {
  return {
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: podTemplate({ app: name }),
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      ...extra,
    },
  };
}

test('StatefulSet OrderedReady: pods one at a time after their PVCs; scale-down from the highest ordinal keeps the PVCs (Retain)', async (t) => {
  const { apps, core, kc, log } = await startSimCluster(t);
  const seen: string[] = [];
  const k8sWatch = new (await import('@kubernetes/client-node')).Watch(kc);
  const req = await k8sWatch.watch(
    '/api/v1/namespaces/default/pods',
    {},
    (type, obj: k8s.V1Pod) => {
      if (type === 'ADDED') seen.push(`${obj.metadata!.name} created`);
      if (type === 'MODIFIED' && isReady(obj) && !seen.includes(`${obj.metadata!.name} ready`)) seen.push(`${obj.metadata!.name} ready`);
      if (type === 'DELETED') seen.push(`${obj.metadata!.name} deleted`);
    },
    () => undefined,
  );
  t.teardown(() => req.abort());

  await apps.createNamespacedStatefulSet({ namespace: 'default', body: statefulSet('db', 3) });
  const ready = await eventually(
    '3 ready replicas',
    async () => {
      const s = await apps.readNamespacedStatefulSet({ name: 'db', namespace: 'default' });
      return s.status?.readyReplicas === 3 && s.status.availableReplicas === 3 ? s : undefined;
    },
    8000,
    log,
  );
  // A read can show the set ready before the watch has delivered the last pod's change: wait for the watch.
  await eventually('the watch to show db-2 ready', async () => seen.includes('db-2 ready'), 8000, log);
  t.deepEqual(
    seen.slice(0, 6),
    ['db-0 created', 'db-0 ready', 'db-1 created', 'db-1 ready', 'db-2 created', 'db-2 ready'],
    'each pod waits for the previous one to be Running and Ready',
  );
  t.like(ready.status, { replicas: 3, currentReplicas: 3, updatedReplicas: 3, observedGeneration: 1 });
  t.is(ready.status!.currentRevision, ready.status!.updateRevision);

  const pod0 = await core.readNamespacedPod({ name: 'db-0', namespace: 'default' });
  t.is(pod0.spec!.hostname, 'db-0');
  t.is(pod0.spec!.subdomain, 'db');
  t.is(pod0.metadata!.labels!['statefulset.kubernetes.io/pod-name'], 'db-0');
  t.is(pod0.metadata!.labels!['apps.kubernetes.io/pod-index'], '0');
  t.is(pod0.metadata!.labels!['controller-revision-hash'], ready.status!.updateRevision!);
  t.is(pod0.spec!.volumes!.find((v) => v.name === 'data')!.persistentVolumeClaim?.claimName, 'data-db-0');

  const claims = await core.listNamespacedPersistentVolumeClaim({ namespace: 'default' });
  t.deepEqual(claims.items.map((c) => c.metadata!.name).sort(), ['data-db-0', 'data-db-1', 'data-db-2']);
  for (const c of claims.items) {
    t.is(c.metadata!.labels!.app, 'db', 'PVCs carry the selector labels');
    t.falsy(c.metadata!.ownerReferences, 'Retain: PVCs are not owned');
  }
  await eventually(
    'PVCs bound',
    async () => (await core.listNamespacedPersistentVolumeClaim({ namespace: 'default' })).items.every((c) => c.status?.phase === 'Bound'),
    5000,
    log,
  );

  seen.length = 0;
  await apps.patchNamespacedStatefulSet({ name: 'db', namespace: 'default', body: { spec: { replicas: 1 } } }, mergePatch);
  await eventually('scaled down to 1', async () => (await podNames(core, 'default', 'app=db')).join() === 'db-0', 5000, log);
  await eventually('the watch to show both deletions', async () => seen.filter((s) => s.endsWith('deleted')).length >= 2, 5000, log);
  t.deepEqual(
    seen.filter((s) => s.endsWith('deleted')),
    ['db-2 deleted', 'db-1 deleted'],
    'the highest ordinal goes first',
  );
  const kept = await core.listNamespacedPersistentVolumeClaim({ namespace: 'default' });
  t.is(kept.items.length, 3, 'PVCs are kept on scale-down');
  await eventually(
    'status after scale-down',
    async () => (await apps.readNamespacedStatefulSet({ name: 'db', namespace: 'default' })).status?.replicas === 1,
    5000,
    log,
  );
});

test('StatefulSet with persistentVolumeClaimRetentionPolicy Delete: PVCs owned by the set, scaled-down ones deleted', async (t) => {
  const { apps, core, cluster, log } = await startSimCluster(t);
  const created = await apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: statefulSet('cache', 2, { podManagementPolicy: 'Parallel', persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' } }),
  });
  await eventually(
    '2 ready',
    async () => (await apps.readNamespacedStatefulSet({ name: 'cache', namespace: 'default' })).status?.readyReplicas === 2,
    8000,
    log,
  );
  const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data-cache-1', namespace: 'default' });
  t.like(claim.metadata!.ownerReferences![0], { kind: 'StatefulSet', name: 'cache', uid: created.metadata!.uid, controller: true });

  await apps.patchNamespacedStatefulSet({ name: 'cache', namespace: 'default', body: { spec: { replicas: 1 } } }, mergePatch);
  await eventually(
    'the PVC of the removed ordinal deleted',
    async () => !(await getJson(cluster, '/api/v1/namespaces/default/persistentvolumeclaims/data-cache-1')),
    5000,
    log,
  );
  t.truthy(await getJson(cluster, '/api/v1/namespaces/default/persistentvolumeclaims/data-cache-0'));

  await apps.deleteNamespacedStatefulSet({ name: 'cache', namespace: 'default' });
  await eventually(
    'pods and PVCs collected with the set',
    async () => {
      const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=cache' });
      const pvcs = await core.listNamespacedPersistentVolumeClaim({ namespace: 'default' });
      return pods.items.length === 0 && pvcs.items.length === 0;
    },
    5000,
    log,
  );
  t.pass();
});

test('StatefulSet Parallel: all pods are created without waiting', async (t) => {
  const { apps, core, log } = await startSimCluster(t, { podStartDelayMs: 1500 });
  await apps.createNamespacedStatefulSet({ namespace: 'default', body: statefulSet('par', 3, { podManagementPolicy: 'Parallel', volumeClaimTemplates: [] }) });
  const names = await eventually(
    '3 pods before any is ready',
    async () => {
      const n = await podNames(core, 'default', 'app=par');
      return n.length === 3 ? n : undefined;
    },
    1200,
    log,
  );
  t.deepEqual(names, ['par-0', 'par-1', 'par-2']);
});

test('DaemonSet: one pod per simulated node, pinned by node affinity', async (t) => {
  const { apps, core, log } = await startSimCluster(t, { nodes: ['n1', 'n2', 'n3'] });
  await apps.createNamespacedDaemonSet({
    namespace: 'default',
    body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: podTemplate({ app: 'agent' }) } },
  });
  const ds = await eventually(
    '3 ready daemon pods',
    async () => {
      const d = await apps.readNamespacedDaemonSet({ name: 'agent', namespace: 'default' });
      return d.status?.numberReady === 3 ? d : undefined;
    },
    5000,
    log,
  );
  t.like(ds.status, { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberMisscheduled: 0, updatedNumberScheduled: 3, numberAvailable: 3 });
  const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=agent' });
  t.deepEqual(pods.items.map((p) => p.spec!.nodeName).sort(), ['n1', 'n2', 'n3']);
  t.truthy(pods.items[0]!.spec!.tolerations!.some((x) => x.key === 'node.kubernetes.io/unreachable'));
});

test('Job: pods run to completion, status succeeded, Complete condition, tracking finalizers removed', async (t) => {
  const { batch, core, log } = await startSimCluster(t, { podRunToCompletionMs: 60 });
  await batch.createNamespacedJob({
    namespace: 'default',
    body: {
      metadata: { name: 'migrate' },
      spec: { completions: 2, parallelism: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'busybox:1.36' }] } } },
    },
  });
  const job = await eventually(
    'job complete',
    async () => {
      const j = await batch.readNamespacedJob({ name: 'migrate', namespace: 'default' });
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    },
    8000,
    log,
  );
  t.is(job.status?.succeeded, 2);
  t.truthy(job.status?.startTime);
  t.truthy(job.status?.completionTime);
  t.like(
    job.status?.conditions?.find((c) => c.type === 'SuccessCriteriaMet'),
    { status: 'True', reason: 'CompletionsReached' },
  );
  const pods = (await core.listNamespacedPod({ namespace: 'default' })).items.filter((p) => p.metadata?.ownerReferences?.[0]?.name === 'migrate');
  t.is(pods.length, 2);
  for (const p of pods) {
    t.is(p.status?.phase, 'Succeeded');
    t.falsy(p.metadata?.finalizers?.includes('batch.kubernetes.io/job-tracking'), 'the tracking finalizer is removed once counted');
  }
});

test('StatefulSet RollingUpdate: a template change replaces pods from the highest ordinal, then currentRevision moves', async (t) => {
  const { apps, core, log } = await startSimCluster(t);
  await apps.createNamespacedStatefulSet({ namespace: 'default', body: statefulSet('kv', 2, { volumeClaimTemplates: [] }) });
  const before = await eventually(
    '2 ready',
    async () => {
      const s = await apps.readNamespacedStatefulSet({ name: 'kv', namespace: 'default' });
      return s.status?.readyReplicas === 2 ? s : undefined;
    },
    8000,
    log,
  );
  const uids = new Map(
    (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=kv' })).items.map((p) => [p.metadata!.name!, p.metadata!.uid!]),
  );
  await apps.patchNamespacedStatefulSet(
    { name: 'kv', namespace: 'default', body: { spec: { template: { metadata: { annotations: { rev: '2' } } } } } },
    mergePatch,
  );
  const after = await eventually(
    'rolled',
    async () => {
      const s = await apps.readNamespacedStatefulSet({ name: 'kv', namespace: 'default' });
      return s.status?.observedGeneration === 2 &&
        s.status.updatedReplicas === 2 &&
        s.status.readyReplicas === 2 &&
        s.status.currentRevision === s.status.updateRevision
        ? s
        : undefined;
    },
    8000,
    log,
  );
  t.not(after.status!.updateRevision, before.status!.updateRevision);
  const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=kv' });
  for (const p of pods.items) {
    t.not(p.metadata!.uid, uids.get(p.metadata!.name!), `${p.metadata!.name} was replaced`);
    t.is(p.metadata!.labels!['controller-revision-hash'], after.status!.updateRevision!);
  }
});

test('Deployment Recreate: the old pods are gone before the new ReplicaSet scales up', async (t) => {
  const { apps, core, log } = await startSimCluster(t);
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name: 'rec' },
      spec: { replicas: 2, strategy: { type: 'Recreate' }, selector: { matchLabels: { app: 'rec' } }, template: podTemplate({ app: 'rec' }) },
    },
  });
  await eventually(
    '2 available',
    async () => (await apps.readNamespacedDeployment({ name: 'rec', namespace: 'default' })).status?.availableReplicas === 2,
    8000,
    log,
  );
  const oldNames = await podNames(core, 'default', 'app=rec');
  await apps.patchNamespacedDeployment(
    { name: 'rec', namespace: 'default', body: { spec: { template: { metadata: { annotations: { v: '2' } } } } } },
    mergePatch,
  );
  let overlap = false;
  await eventually(
    'recreated',
    async () => {
      const names = await podNames(core, 'default', 'app=rec');
      if (names.some((n) => oldNames.includes(n)) && names.some((n) => !oldNames.includes(n))) overlap = true;
      const d = await apps.readNamespacedDeployment({ name: 'rec', namespace: 'default' });
      return (
        d.status?.observedGeneration === 2 && d.status.updatedReplicas === 2 && d.status.availableReplicas === 2 && names.every((n) => !oldNames.includes(n))
      );
    },
    8000,
    log,
  );
  t.false(overlap, 'old and new pods never run together');
});

test('Job Indexed with ttlSecondsAfterFinished: one pod per index, then the Job and its pods are deleted', async (t) => {
  const { batch, core, cluster, log } = await startSimCluster(t, { podRunToCompletionMs: 40 });
  await batch.createNamespacedJob({
    namespace: 'default',
    body: {
      metadata: { name: 'idx' },
      spec: {
        completions: 3,
        parallelism: 3,
        completionMode: 'Indexed',
        ttlSecondsAfterFinished: 0,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'w', image: 'busybox:1.36' }] } },
      },
    },
  });
  const seen = await eventually(
    'three indexed pods',
    async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'default' })).items.filter((p) => p.metadata?.ownerReferences?.[0]?.name === 'idx');
      return pods.length === 3 ? pods : undefined;
    },
    5000,
    log,
  );
  t.deepEqual(seen.map((p) => p.metadata!.annotations!['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1', '2']);
  await eventually(
    'the finished Job deleted by its TTL, with its pods',
    async () => {
      const job = await getJson(cluster, '/apis/batch/v1/namespaces/default/jobs/idx');
      const pods = (await core.listNamespacedPod({ namespace: 'default' })).items.filter((p) => p.metadata?.ownerReferences?.[0]?.name === 'idx');
      return !job && pods.length === 0;
    },
    8000,
    log,
  );
  t.pass();
});
