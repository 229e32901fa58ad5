/** Finalizers, deletionTimestamp and namespace deletion. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { WIDGET_CRD, clientWatch, configMap, mergePatch, raw, startCluster, statusOf } from './helpers.js';

test('DELETE with finalizers marks the object; removing the last finalizer deletes it', async (t) => {
  const { core, kc, cluster } = await startCluster(t);
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'app', finalizers: ['example.com/a', 'example.com/b'] } } });
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
    core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } } }, mergePatch),
  );
  t.like(statusOf(addFinalizer), { reason: 'Invalid', code: 422 });

  const one = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: ['example.com/b'] } } }, mergePatch);
  t.deepEqual(one.metadata?.finalizers, ['example.com/b']);
  t.is(one.metadata?.deletionTimestamp?.toISOString().replace('.000', ''), marked.metadata.deletionTimestamp, 'deletionTimestamp is kept');
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  const err = await t.throwsAsync(core.readNamespacedConfigMap({ name: 'app', namespace: 'default' }));
  t.is((err as k8s.ApiException<unknown>).code, 404);

  const events = await w.waitFor(3);
  t.deepEqual(events.map((e) => e.type), ['MODIFIED', 'MODIFIED', 'DELETED']);
  t.truthy(events[0]!.object.metadata.deletionTimestamp);
  t.deepEqual(events[2]!.object.metadata.finalizers, ['example.com/b'], 'DELETED carries the last stored state');
});

test('deleting a custom resource with finalizers bumps generation and keeps it until finalized', async (t) => {
  const { ext, custom } = await startCluster(t);
  await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };
  await custom.createNamespacedCustomObject({ ...W, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', finalizers: ['example.com/x'] } } });
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
  t.deepEqual(left.items.map((i) => i.metadata?.name), ['held']);
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
