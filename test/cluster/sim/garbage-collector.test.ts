/** Garbage collection through ownerReferences: background, foreground (blockOwnerDeletion), orphan. */
import test from 'ava';
import type * as k8s from '@kubernetes/client-node';
import { eventually, getJson, mergePatch, send, startSimCluster } from './helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

function ownedBy(owner: k8s.V1ConfigMap, block?: boolean): k8s.V1OwnerReference[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: owner.metadata!.name!,
      uid: owner.metadata!.uid!,
      ...(block === undefined ? {} : { blockOwnerDeletion: block }),
    },
  ];
}

test('background: the owner goes at once, then the garbage collector deletes its dependents', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner' } } });
  for (const name of ['dep-a', 'dep-b'])
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, ownerReferences: ownedBy(owner) } } });
  const other = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'other' } } });
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'two-owners', ownerReferences: [...ownedBy(owner), ...ownedBy(other)] } },
  });

  const res = await send(cluster, 'DELETE', `${CM}/owner`, { propagationPolicy: 'Background' });
  t.is(res.status, 200);
  t.is(await getJson(cluster, `${CM}/owner`), undefined, 'background deletion removes the owner immediately');
  await eventually('dependents deleted', async () => !(await getJson(cluster, `${CM}/dep-a`)) && !(await getJson(cluster, `${CM}/dep-b`)), 5000, log);
  const survivor = await eventually('the dangling reference removed', async () => {
    const cm = await getJson(cluster, `${CM}/two-owners`);
    return cm?.metadata.ownerReferences?.length === 1 ? cm : undefined;
  });
  t.is(survivor.metadata.ownerReferences[0].name, 'other', 'a dependent with a live owner stays; only the dangling reference goes');
});

test('a dependent whose owner never existed (unknown uid) is collected', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'ghost-owner' } } });
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: {
      metadata: {
        name: 'orphaned',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost-owner', uid: '00000000-0000-0000-0000-000000000000' }],
      },
    },
  });
  await eventually('the dependent with a uid mismatch deleted', async () => !(await getJson(cluster, `${CM}/orphaned`)), 5000, log);
  t.truthy(await getJson(cluster, `${CM}/ghost-owner`), 'the object of the same name but another uid is not an owner and stays');
});

test('foreground: the owner keeps foregroundDeletion until its blocking dependents are gone', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner' } } });
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'blocking', finalizers: ['example.com/hold'], ownerReferences: ownedBy(owner, true) } },
  });
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'non-blocking', ownerReferences: ownedBy(owner, false) } } });

  const res = await send(cluster, 'DELETE', `${CM}/owner`, { propagationPolicy: 'Foreground' });
  t.is(res.status, 200);
  t.truthy(res.json.metadata.deletionTimestamp);
  t.true(res.json.metadata.finalizers.includes('foregroundDeletion'));

  await eventually('non-blocking dependent deleted', async () => !(await getJson(cluster, `${CM}/non-blocking`)), 5000, log);
  const blocking = await eventually('blocking dependent marked for deletion', async () => {
    const cm = await getJson(cluster, `${CM}/blocking`);
    return cm?.metadata.deletionTimestamp ? cm : undefined;
  });
  t.deepEqual(blocking.metadata.finalizers, ['example.com/hold']);
  await new Promise((r) => setTimeout(r, 150));
  const waiting = await getJson(cluster, `${CM}/owner`);
  t.truthy(waiting, 'the owner waits for its blocking dependent');
  t.deepEqual(waiting.metadata.finalizers, ['foregroundDeletion']);

  await core.patchNamespacedConfigMap({ name: 'blocking', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  await eventually('owner deleted once the blocking dependent is gone', async () => !(await getJson(cluster, `${CM}/owner`)), 5000, log);
});

test('orphan: dependents lose their ownerReference and stay; then the owner goes', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  const owner = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owner' } } });
  const keep = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'keep' } } });
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'dep', ownerReferences: [...ownedBy(owner, true), ...ownedBy(keep)] } },
  });

  const res = await send(cluster, 'DELETE', `${CM}/owner`, { propagationPolicy: 'Orphan' });
  t.is(res.status, 200);
  t.true(res.json.metadata?.finalizers?.includes('orphan'), 'the API server marks the owner with the orphan finalizer');
  await eventually('owner deleted after orphaning', async () => !(await getJson(cluster, `${CM}/owner`)), 5000, log);
  const dep = await getJson(cluster, `${CM}/dep`);
  t.truthy(dep, 'the dependent stays');
  t.deepEqual(
    dep.metadata.ownerReferences.map((r: k8s.V1OwnerReference) => r.name),
    ['keep'],
    'only the reference to the deleted owner is removed',
  );
});

test('a custom resource owner: deleting it collects the ConfigMap it owns', async (t) => {
  const { ext, custom, core, cluster, log } = await startSimCluster(t);
  await ext.createCustomResourceDefinition({
    body: {
      metadata: { name: 'databases.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'databases', singular: 'database', kind: 'Database' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }],
      },
    },
  });
  const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'databases' };
  const db = (await eventually('the CRD served', () =>
    custom.createNamespacedCustomObject({ ...W, body: { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db1' } } }),
  )) as k8s.KubernetesObject;
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: {
      metadata: {
        name: 'db1-config',
        ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Database', name: 'db1', uid: db.metadata!.uid!, controller: true, blockOwnerDeletion: true }],
      },
    },
  });
  await custom.deleteNamespacedCustomObject({ ...W, name: 'db1' });
  await eventually('the owned ConfigMap collected', async () => !(await getJson(cluster, `${CM}/db1-config`)), 5000, log);
  t.pass();
});
