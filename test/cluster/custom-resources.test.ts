/** CustomResourceDefinitions and their custom resources through CustomObjectsApi. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { WIDGET_CRD, mergePatch, raw, startCluster, statusOf, strategicPatch } from './helpers.js';

const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

test('creating a CRD serves its kind, reports Established and shows in discovery', async (t) => {
  const { ext, custom, cluster } = await startCluster(t);
  const before = await raw(cluster, 'GET', '/apis/example.com/v1/namespaces/default/widgets');
  t.is(before.status, 404);
  const crd = await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  t.is(crd.metadata?.generation, 1);
  const read = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
  const conditions = Object.fromEntries((read.status?.conditions ?? []).map((c) => [c.type, c.status]));
  t.deepEqual(conditions, { NamesAccepted: 'True', Established: 'True' });
  t.like(read.status?.acceptedNames, { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' });

  const apis = await raw(cluster, 'GET', '/apis');
  t.truthy(apis.json.groups.find((g: any) => g.name === 'example.com'));
  const resources = await raw(cluster, 'GET', '/apis/example.com/v1');
  t.like(
    resources.json.resources.find((r: any) => r.name === 'widgets'),
    { kind: 'Widget', namespaced: true, singularName: 'widget', shortNames: ['wd'] },
  );
  t.truthy(resources.json.resources.find((r: any) => r.name === 'widgets/status'));

  const w = (await custom.createNamespacedCustomObject({
    ...W,
    body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
  })) as any;
  t.is(w.metadata.generation, 1);
  t.is(w.kind, 'Widget');
  const list = await raw(cluster, 'GET', '/apis/example.com/v1/widgets');
  t.is(list.json.kind, 'WidgetList');
  t.is(list.json.items[0].kind, 'Widget', 'custom resource list items carry kind (unstructured), as a real apiserver');
  t.is(list.json.items[0].apiVersion, 'example.com/v1');
});

test('status subresource: main writes ignore status, status writes ignore the rest, generation follows spec', async (t) => {
  const { ext, custom } = await startCluster(t);
  await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  const created = (await custom.createNamespacedCustomObject({
    ...W,
    body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 }, status: { ready: true } },
  })) as any;
  t.is(created.status, undefined, 'status is dropped on create');

  const withStatus = (await custom.replaceNamespacedCustomObjectStatus({
    ...W,
    name: 'w1',
    body: { ...created, spec: { size: 99 }, metadata: { ...created.metadata, labels: { a: 'b' } }, status: { ready: true } },
  })) as any;
  t.deepEqual(withStatus.status, { ready: true });
  t.deepEqual(withStatus.spec, { size: 1 }, 'a status write does not change spec');
  t.is(withStatus.metadata.labels, undefined);
  t.is(withStatus.metadata.generation, 1, 'a status write does not bump generation');

  const main = (await custom.replaceNamespacedCustomObject({ ...W, name: 'w1', body: { ...withStatus, spec: { size: 2 }, status: { ready: false } } })) as any;
  t.deepEqual(main.status, { ready: true }, 'a main write keeps the stored status');
  t.is(main.metadata.generation, 2);

  const labelled = (await custom.patchNamespacedCustomObject({ ...W, name: 'w1', body: { metadata: { labels: { x: 'y' } } } }, mergePatch)) as any;
  t.is(labelled.metadata.generation, 2, 'metadata changes do not bump generation');
  t.true(Number(labelled.metadata.resourceVersion) > Number(main.metadata.resourceVersion));

  const statusPatched = (await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'w1', body: { status: { phase: 'Ok' } } }, mergePatch)) as any;
  t.deepEqual(statusPatched.status, { ready: true, phase: 'Ok' });

  const noop = (await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'w1', body: { status: { phase: 'Ok' } } }, mergePatch)) as any;
  t.is(noop.metadata.resourceVersion, statusPatched.metadata.resourceVersion, 'a no-op status patch keeps the resourceVersion');

  const smp = await t.throwsAsync(custom.patchNamespacedCustomObject({ ...W, name: 'w1', body: { spec: { size: 3 } } }, strategicPatch));
  t.like(statusOf(smp), { reason: 'UnsupportedMediaType', code: 415 });
});

test('a CRD without a status subresource: /status is 404 and status is an ordinary field', async (t) => {
  const { ext, custom, cluster } = await startCluster(t);
  const crd = structuredClone(WIDGET_CRD) as any;
  delete crd.spec.versions[0].subresources;
  crd.spec.scope = 'Cluster';
  await ext.createCustomResourceDefinition({ body: crd });
  const w = (await custom.createClusterCustomObject({
    group: 'example.com',
    version: 'v1',
    plural: 'widgets',
    body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, status: { s: 1 } },
  })) as any;
  t.deepEqual(w.status, { s: 1 });
  t.is(w.metadata.namespace, undefined);
  const updated = (await custom.patchClusterCustomObject(
    { group: 'example.com', version: 'v1', plural: 'widgets', name: 'w1', body: { status: { s: 2 } } },
    mergePatch,
  )) as any;
  t.is(updated.metadata.generation, 2, 'without a status subresource, status changes bump generation');
  const status = await raw(cluster, 'GET', '/apis/example.com/v1/widgets/w1/status');
  t.is(status.status, 404);
  const namespaced = await raw(cluster, 'GET', '/apis/example.com/v1/namespaces/default/widgets');
  t.is(namespaced.status, 404);
});

test('deleting a CRD deletes its objects and stops serving the kind', async (t) => {
  const { ext, custom, cluster } = await startCluster(t);
  await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  await custom.createNamespacedCustomObject({ ...W, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } } });
  await ext.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
  const gone = await raw(cluster, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
  t.is(gone.status, 404);
  const list = await raw(cluster, 'GET', '/apis/example.com/v1/widgets');
  t.is(list.status, 404);
  const apis = await raw(cluster, 'GET', '/apis');
  t.is(
    apis.json.groups.find((g: any) => g.name === 'example.com'),
    undefined,
  );
  // Recreating it starts empty.
  await ext.createCustomResourceDefinition({ body: WIDGET_CRD as k8s.V1CustomResourceDefinition });
  const again = await raw(cluster, 'GET', '/apis/example.com/v1/widgets');
  t.deepEqual(again.json.items, []);
});

test('an invalid CRD is rejected with 422', async (t) => {
  const { ext } = await startCluster(t);
  const crd = structuredClone(WIDGET_CRD) as any;
  crd.metadata.name = 'wrong.example.com';
  delete crd.spec.versions[0].schema;
  const err = await t.throwsAsync(ext.createCustomResourceDefinition({ body: crd }));
  const status = statusOf(err);
  t.like(status, { reason: 'Invalid', code: 422, details: { kind: 'CustomResourceDefinition', group: 'apiextensions.k8s.io' } });
  t.deepEqual(status.details?.causes?.map((c) => c.field).sort(), ['metadata.name', 'spec.versions[0].schema.openAPIV3Schema']);
});

test('a CRD serving several versions, cluster scoped: any served version reads and writes the same objects', async (t) => {
  const { ext, custom, cluster } = await startCluster(t);
  const schema = { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } };
  await ext.createCustomResourceDefinition({
    body: {
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { plural: 'gadgets', kind: 'Gadget' },
        versions: [
          { name: 'v1beta1', served: true, storage: false, schema },
          { name: 'v1', served: true, storage: true, schema, subresources: { status: {} } },
          { name: 'v1alpha1', served: false, storage: false, schema },
        ],
      },
    } as k8s.V1CustomResourceDefinition,
  });
  const G = { group: 'example.com', plural: 'gadgets' };
  const created = (await custom.createClusterCustomObject({
    ...G,
    version: 'v1beta1',
    body: { apiVersion: 'example.com/v1beta1', kind: 'Gadget', metadata: { name: 'g' }, spec: { a: 1 } },
  })) as any;
  t.is(created.apiVersion, 'example.com/v1beta1');
  t.is(created.metadata.namespace, undefined);
  const asV1 = (await custom.getClusterCustomObject({ ...G, version: 'v1', name: 'g' })) as any;
  t.like(asV1, { apiVersion: 'example.com/v1', kind: 'Gadget', spec: { a: 1 } });
  const unserved = await raw(cluster, 'GET', '/apis/example.com/v1alpha1/gadgets');
  t.is(unserved.status, 404);
  const group = await raw(cluster, 'GET', '/apis/example.com');
  t.deepEqual(
    group.json.versions.map((v: any) => v.version),
    ['v1', 'v1beta1'],
    'preferred version first',
  );
  const namespacedPath = await raw(cluster, 'GET', '/apis/example.com/v1/namespaces/default/gadgets');
  t.is(namespacedPath.status, 404);
});
