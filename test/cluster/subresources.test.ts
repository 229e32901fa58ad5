/** The scale, binding and eviction subresources through client-node. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { WIDGET_CRD, mergePatch, raw, startCluster, statusOf } from './helpers.js';

const labels = { app: 'web' };
const template: k8s.V1PodTemplateSpec = { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } };

test('scale on Deployments and StatefulSets: read, replace with a resourceVersion, patch; generation follows', async (t) => {
  const { apps } = await startCluster(t);
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: { metadata: { name: 'd' }, spec: { replicas: 2, selector: { matchLabels: labels }, template } },
  });
  const scale = await apps.readNamespacedDeploymentScale({ name: 'd', namespace: 'default' });
  t.like(scale, {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: 'd', namespace: 'default' },
    spec: { replicas: 2 },
    status: { replicas: 0, selector: 'app=web' },
  });
  const replaced = await apps.replaceNamespacedDeploymentScale({ name: 'd', namespace: 'default', body: { ...scale, spec: { replicas: 4 } } });
  t.is(replaced.spec?.replicas, 4);
  const stale = await t.throwsAsync(apps.replaceNamespacedDeploymentScale({ name: 'd', namespace: 'default', body: { ...scale, spec: { replicas: 5 } } }));
  t.like(statusOf(stale), { code: 409, reason: 'Conflict' });
  const deploy = await apps.readNamespacedDeployment({ name: 'd', namespace: 'default' });
  t.is(deploy.spec?.replicas, 4);
  t.is(deploy.metadata?.generation, 2);
  t.like(
    deploy.metadata?.managedFields?.find((m) => m.subresource === 'scale'),
    { operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
  );

  await apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: { metadata: { name: 's' }, spec: { serviceName: 's', selector: { matchLabels: labels }, template } },
  });
  const patched = await apps.patchNamespacedStatefulSetScale({ name: 's', namespace: 'default', body: { spec: { replicas: 3 } } }, mergePatch);
  t.is(patched.spec?.replicas, 3);
  t.is((await apps.readNamespacedStatefulSet({ name: 's', namespace: 'default' })).spec?.replicas, 3);
  const negative = await t.throwsAsync(apps.patchNamespacedStatefulSetScale({ name: 's', namespace: 'default', body: { spec: { replicas: -1 } } }, mergePatch));
  t.like(statusOf(negative), { code: 422, reason: 'Invalid', details: { kind: 'Scale', group: 'autoscaling' } });
});

test('scale on a custom resource follows specReplicasPath, statusReplicasPath and labelSelectorPath', async (t) => {
  const { ext, custom } = await startCluster(t);
  const crd = structuredClone(WIDGET_CRD) as any;
  crd.spec.versions[0].subresources.scale = { specReplicasPath: '.spec.size', statusReplicasPath: '.status.ready', labelSelectorPath: '.status.selector' };
  await ext.createCustomResourceDefinition({ body: crd });
  const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
  await custom.createNamespacedCustomObject({ ...W, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } } });
  await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'w', body: { status: { ready: 1, selector: 'app=w' } } }, mergePatch);
  const scale = (await custom.getNamespacedCustomObjectScale({ ...W, name: 'w' })) as any;
  t.like(scale, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 1, selector: 'app=w' } });
  await custom.patchNamespacedCustomObjectScale({ ...W, name: 'w', body: { spec: { replicas: 5 } } }, mergePatch);
  const w = (await custom.getNamespacedCustomObject({ ...W, name: 'w' })) as any;
  t.is(w.spec.size, 5);
  t.is(w.metadata.generation, 2);
});

test('pods/binding assigns a node once; the PodScheduled condition is set', async (t) => {
  const { core } = await startCluster(t);
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: template.spec! } });
  await core.createNamespacedPodBinding({ name: 'p', namespace: 'default', body: { metadata: { name: 'p' }, target: { kind: 'Node', name: 'node-1' } } });
  const pod = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
  t.is(pod.spec?.nodeName, 'node-1');
  t.like(pod.status?.conditions?.[0], { type: 'PodScheduled', status: 'True' });
  const again = await t.throwsAsync(
    core.createNamespacedPodBinding({ name: 'p', namespace: 'default', body: { metadata: { name: 'p' }, target: { name: 'node-2' } } }),
  );
  t.like(statusOf(again), {
    code: 409,
    reason: 'Conflict',
    message: 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"',
  });
  const byNode = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=node-1' });
  t.deepEqual(
    byNode.items.map((p) => p.metadata?.name),
    ['p'],
  );
  const unscheduled = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.nodeName=' });
  t.deepEqual(unscheduled.items, []);
});

test('pods/eviction deletes the pod unless a PodDisruptionBudget allows no disruption (429)', async (t) => {
  const { core, kc, cluster } = await startCluster(t);
  const policy = kc.makeApiClient(k8s.PolicyV1Api);
  for (const name of ['a', 'b']) {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name, labels }, spec: { ...template.spec!, nodeName: 'node-1' } } });
    await core.patchNamespacedPodStatus({ name, namespace: 'default', body: { status: { phase: 'Running' } } }, mergePatch);
  }
  const pdb = await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: { metadata: { name: 'pdb' }, spec: { minAvailable: 2, selector: { matchLabels: labels } } },
  });
  t.like(pdb.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
  t.is(pdb.metadata?.generation, 1);
  // What the disruption controller would write.
  await policy.patchNamespacedPodDisruptionBudgetStatus(
    {
      name: 'pdb',
      namespace: 'default',
      body: { status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 } },
    },
    mergePatch,
  );
  const blocked = await t.throwsAsync(
    core.createNamespacedPodEviction({ name: 'a', namespace: 'default', body: { metadata: { name: 'a', namespace: 'default' } } }),
  );
  t.like(statusOf(blocked), { code: 429, reason: 'TooManyRequests', message: "Cannot evict pod as it would violate the pod's disruption budget." });
  t.is(statusOf(blocked).details?.causes?.[0]?.reason, 'DisruptionBudget');
  await policy.patchNamespacedPodDisruptionBudgetStatus({ name: 'pdb', namespace: 'default', body: { status: { disruptionsAllowed: 1 } } }, mergePatch);
  await core.createNamespacedPodEviction({
    name: 'a',
    namespace: 'default',
    body: { metadata: { name: 'a', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 0 } },
  });
  const gone = await raw(cluster, 'GET', '/api/v1/namespaces/default/pods/a');
  t.is(gone.status, 404);
  const after = await policy.readNamespacedPodDisruptionBudget({ name: 'pdb', namespace: 'default' });
  t.is(after.status?.disruptionsAllowed, 0);
  t.truthy(after.status?.disruptedPods?.a);
});
