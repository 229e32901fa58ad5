/** Finalizers, deletionTimestamp and namespace deletion. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { WIDGET_CRD, clientWatch, configMap, mergePatch, raw, startCluster, statusOf } from './helpers.js';

test('DELETE with finalizers marks the object; removing the last finalizer deletes it', async (t) => {
  const { core, kc, cluster } = await startCluster(t);
  const created = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'app', finalizers: ['example.com/a', 'example.com/b'] } },
  });
  const w = await clientWatch(t, kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: created.metadata!.resourceVersion! });

  // client-node decodes a delete answer as a V1Status, so read the raw answer.
  const { status, json: marked } = await raw(cluster, 'DELETE', '/api/v1/namespaces/default/configmaps/app');
  t.is(status, 200);
  t.is(marked.kind, 'ConfigMap', 'the delete answers with the object, now marked');
  t.truthy(marked.metadata.deletionTimestamp);
  t.is(marked.metadata.deletionGracePeriodSeconds, 0);
  await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default' });
  const again = await core.readNamespacedConfigMap({ name: 'app', namespace: 'default' });
  t.is(again.metadata?.resourceVersion, marked.metadata.resourceVersion, 'a second delete changes nothing');

  const addFinalizer = await t.throwsAsync(
    core.patchNamespacedConfigMap(
      { name: 'app', namespace: 'default', body: { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } } },
      mergePatch,
    ),
  );
  t.like(statusOf(addFinalizer), { reason: 'Invalid', code: 422 });

  const one = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: ['example.com/b'] } } }, mergePatch);
  t.deepEqual(one.metadata?.finalizers, ['example.com/b']);
  t.is(one.metadata?.deletionTimestamp?.toISOString().replace('.000', ''), marked.metadata.deletionTimestamp, 'deletionTimestamp is kept');
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  const err = await t.throwsAsync(core.readNamespacedConfigMap({ name: 'app', namespace: 'default' }));
  t.is((err as k8s.ApiException<unknown>).code, 404);

  const events = await w.waitFor(3);
  t.deepEqual(
    events.map((e) => e.type),
    ['MODIFIED', 'MODIFIED', 'DELETED'],
  );
  t.truthy(events[0]!.object.metadata.deletionTimestamp);
  t.deepEqual(events[2]!.object.metadata.finalizers, ['example.com/b'], 'DELETED carries the last stored state');
});

test('deleting a custom resource with finalizers bumps generation and keeps it until finalized', async (t) => {
  const { ext, custom } = await startCluster(t);
  await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
  await custom.createNamespacedCustomObject({
    ...W,
    body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', finalizers: ['example.com/x'] } },
  });
  const marked = (await custom.deleteNamespacedCustomObject({ ...W, name: 'w' })) as any;
  t.is(marked.metadata.generation, 2);
  t.truthy(marked.metadata.deletionTimestamp);
  const res = (await custom.patchNamespacedCustomObject({ ...W, name: 'w', body: { metadata: { finalizers: [] } } }, mergePatch)) as any;
  t.is(res.metadata.name, 'w');
  await t.throwsAsync(custom.getNamespacedCustomObject({ ...W, name: 'w' }));
});

test('deleting a namespace deletes its content, honouring finalizers, then the namespace', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
  await core.createNamespacedConfigMap({ namespace: 'doomed', body: configMap('plain') });
  await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
  await core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 's' } } });
  const ns = await core.deleteNamespace({ name: 'doomed' });
  t.like(ns as unknown as k8s.V1Namespace, { status: { phase: 'Terminating' } });

  const forbidden = await t.throwsAsync(core.createNamespacedConfigMap({ namespace: 'doomed', body: configMap('late') }));
  t.like(statusOf(forbidden), { reason: 'Forbidden', code: 403 });
  const left = await core.listNamespacedConfigMap({ namespace: 'doomed' });
  t.deepEqual(
    left.items.map((i) => i.metadata?.name),
    ['held'],
  );
  t.truthy(left.items[0]!.metadata?.deletionTimestamp);
  t.deepEqual((await core.listNamespacedSecret({ namespace: 'doomed' })).items, []);
  t.like(await core.readNamespace({ name: 'doomed' }), { status: { phase: 'Terminating' } });

  await core.patchNamespacedConfigMap({ name: 'held', namespace: 'doomed', body: { metadata: { finalizers: null } } }, mergePatch);
  const gone = await raw(cluster, 'GET', '/api/v1/namespaces/doomed');
  t.is(gone.status, 404);
});

test('delete preconditions are enforced', async (t) => {
  const { core } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app') });
  const err = await t.throwsAsync(core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default', body: { preconditions: { resourceVersion: '1' } } }));
  t.like(statusOf(err), { reason: 'Conflict', code: 409 });
  await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default' });
});

const appLabels = { app: 'web' };
const deploymentBody = (name: string): k8s.V1Deployment => ({
  metadata: { name },
  spec: { selector: { matchLabels: appLabels }, template: { metadata: { labels: appLabels }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } } },
});

test('propagationPolicy: Foreground adds foregroundDeletion, Orphan adds orphan, Background deletes now', async (t) => {
  const { apps, kc } = await startCluster(t);
  for (const name of ['fg', 'orphan', 'bg']) await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentBody(name) });
  const w = await clientWatch(t, kc, '/apis/apps/v1/namespaces/default/deployments', {
    resourceVersion: (await apps.readNamespacedDeployment({ name: 'bg', namespace: 'default' })).metadata!.resourceVersion!,
  });

  await apps.deleteNamespacedDeployment({ name: 'fg', namespace: 'default', propagationPolicy: 'Foreground' });
  const fg = await apps.readNamespacedDeployment({ name: 'fg', namespace: 'default' });
  t.deepEqual(fg.metadata?.finalizers, ['foregroundDeletion']);
  t.truthy(fg.metadata?.deletionTimestamp);
  t.is(fg.metadata?.deletionGracePeriodSeconds, 0);
  t.is(fg.metadata?.generation, 2, 'marking for deletion bumps generation');

  await apps.deleteNamespacedDeployment({ name: 'orphan', namespace: 'default', body: { propagationPolicy: 'Orphan' } });
  const orphan = await apps.readNamespacedDeployment({ name: 'orphan', namespace: 'default' });
  t.deepEqual(orphan.metadata?.finalizers, ['orphan']);

  await apps.deleteNamespacedDeployment({ name: 'bg', namespace: 'default', propagationPolicy: 'Background' });
  const events = await w.waitFor(3);
  t.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['MODIFIED fg', 'MODIFIED orphan', 'DELETED bg'],
  );

  // The garbage collector (simulated elsewhere) finishes by removing its finalizer: then the object goes.
  await apps.patchNamespacedDeployment({ name: 'fg', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  const gone = await t.throwsAsync(apps.readNamespacedDeployment({ name: 'fg', namespace: 'default' }));
  t.is((gone as k8s.ApiException<unknown>).code, 404);
  const bad = await t.throwsAsync(apps.deleteNamespacedDeployment({ name: 'orphan', namespace: 'default', propagationPolicy: 'Sometimes' }));
  t.like(statusOf(bad), { code: 422, reason: 'Invalid' });
});

test('pods are deleted gracefully once scheduled: deletionTimestamp in the future, then gone on a zero-grace delete', async (t) => {
  const { core, cluster } = await startCluster(t);
  const spec = { containers: [{ name: 'c', image: 'nginx' }] };
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'unscheduled' }, spec } });
  const immediate = await raw(cluster, 'DELETE', '/api/v1/namespaces/default/pods/unscheduled');
  t.is(immediate.json.kind, 'Pod', 'pods answer a delete with the object');
  t.is((await raw(cluster, 'GET', '/api/v1/namespaces/default/pods/unscheduled')).status, 404, 'an unscheduled pod goes at once');

  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'running' }, spec: { ...spec, nodeName: 'node-1', terminationGracePeriodSeconds: 20 } },
  });
  const started = Date.now();
  await core.deleteNamespacedPod({ name: 'running', namespace: 'default' });
  const terminating = await core.readNamespacedPod({ name: 'running', namespace: 'default' });
  t.is(terminating.metadata?.deletionGracePeriodSeconds, 20);
  const due = terminating.metadata!.deletionTimestamp!.getTime() - started;
  t.true(due > 17_000 && due < 23_000, `deletionTimestamp ${due} ms ahead`);
  await core.deleteNamespacedPod({ name: 'running', namespace: 'default', gracePeriodSeconds: 5 });
  const shortened = await core.readNamespacedPod({ name: 'running', namespace: 'default' });
  t.is(shortened.metadata?.deletionGracePeriodSeconds, 5, 'a later delete may only shorten the grace period');
  await core.deleteNamespacedPod({ name: 'running', namespace: 'default', gracePeriodSeconds: 30 });
  t.is((await core.readNamespacedPod({ name: 'running', namespace: 'default' })).metadata?.deletionGracePeriodSeconds, 5);
  // What a kubelet does once the containers stopped.
  await core.deleteNamespacedPod({
    name: 'running',
    namespace: 'default',
    gracePeriodSeconds: 0,
    body: { preconditions: { uid: terminating.metadata!.uid! } },
  });
  t.is((await raw(cluster, 'GET', '/api/v1/namespaces/default/pods/running')).status, 404);
});

test('deleteCollection honours label selectors and options', async (t) => {
  const { core, apps } = await startCluster(t);
  for (const [name, tier] of [
    ['a', 'web'],
    ['b', 'web'],
    ['c', 'db'],
  ] as const) {
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap(name, {}, { tier }) });
  }
  await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', labelSelector: 'tier=web' });
  t.deepEqual(
    (await core.listNamespacedConfigMap({ namespace: 'default' })).items.map((i) => i.metadata?.name),
    ['c'],
  );
  for (const name of ['x', 'y']) await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentBody(name) });
  await apps.deleteCollectionNamespacedDeployment({ namespace: 'default', propagationPolicy: 'Foreground' });
  const left = await apps.listNamespacedDeployment({ namespace: 'default' });
  t.deepEqual(
    left.items.map((d) => d.metadata?.finalizers),
    [['foregroundDeletion'], ['foregroundDeletion']],
  );
});
