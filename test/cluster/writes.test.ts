/** Writes through client-node: strategic merge patch on built-ins, server-side apply and managed fields, dryRun, optimistic concurrency. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { WIDGET_CRD, configMap, jsonPatch, mergePatch, raw, startCluster, statusOf, strategicPatch } from './helpers.js';

const labels = { app: 'web' };

function deployment(name: string): k8s.V1Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'conf', configMap: { name: 'c' } },
          ],
          containers: [
            {
              name: 'web',
              image: 'nginx:1.25',
              ports: [
                { containerPort: 80, name: 'http' },
                { containerPort: 443, name: 'https' },
              ],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              volumeMounts: [
                { name: 'data', mountPath: '/data' },
                { name: 'conf', mountPath: '/etc/conf' },
              ],
            },
            { name: 'sidecar', image: 'busybox:1.36' },
          ],
          tolerations: [{ key: 'a', operator: 'Exists' }],
        },
      },
    },
  };
}

test('strategic merge patch on a Deployment merges containers, env, ports and volumeMounts by their keys', async (t) => {
  const { apps } = await startCluster(t);
  await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('d') });
  const patched = await apps.patchNamespacedDeployment(
    {
      name: 'd',
      namespace: 'default',
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'web',
                  image: 'nginx:1.26',
                  env: [
                    { name: 'B', value: 'two' },
                    { name: 'C', value: '3' },
                  ],
                  ports: [{ containerPort: 443, name: 'tls' }],
                  volumeMounts: [{ mountPath: '/data', name: 'data', readOnly: true }],
                },
              ],
              tolerations: [{ key: 'b', operator: 'Exists' }],
            },
          },
        },
      },
    },
    strategicPatch,
  );
  const spec = patched.spec!.template.spec!;
  t.deepEqual(
    spec.containers.map((c) => `${c.name}=${c.image}`),
    ['web=nginx:1.26', 'sidecar=busybox:1.36'],
    'the other container is kept',
  );
  const web = spec.containers[0]!;
  t.deepEqual(
    web.env?.map((e) => `${e.name}=${e.value}`),
    ['A=1', 'B=two', 'C=3'],
  );
  t.deepEqual(
    web.ports?.map((p) => `${p.containerPort}/${p.name}`),
    ['80/http', '443/tls'],
  );
  t.deepEqual(
    web.volumeMounts?.map((m) => `${m.mountPath}:${m.readOnly ?? false}`),
    ['/data:true', '/etc/conf:false'],
  );
  t.deepEqual(
    spec.tolerations?.map((x) => x.key),
    ['b'],
    'tolerations are atomic (no patch strategy): replaced',
  );
  t.is(patched.metadata?.generation, 2);

  // Directives: $patch: delete removes one item, $deleteFromPrimitiveList, $retainKeys, $setElementOrder.
  const directives = await apps.patchNamespacedDeployment(
    {
      name: 'd',
      namespace: 'default',
      body: {
        metadata: { finalizers: ['x.io/a', 'x.io/b'] },
        spec: {
          strategy: { $retainKeys: ['type'], type: 'Recreate' },
          template: {
            spec: {
              containers: [
                { name: 'sidecar', $patch: 'delete' },
                { name: 'web', volumeMounts: [{ mountPath: '/etc/conf', $patch: 'delete' }] },
              ],
              volumes: [{ name: 'conf', $patch: 'delete' }],
              '$setElementOrder/volumes': [{ name: 'data' }],
            },
          },
        },
      } as object,
    },
    strategicPatch,
  );
  t.deepEqual(
    directives.spec?.template.spec?.containers.map((c) => c.name),
    ['web'],
  );
  t.deepEqual(
    directives.spec?.template.spec?.volumes?.map((v) => v.name),
    ['data'],
  );
  t.deepEqual({ ...directives.spec?.strategy }, { type: 'Recreate' }, '$retainKeys dropped rollingUpdate');
  const trimmed = await apps.patchNamespacedDeployment(
    { name: 'd', namespace: 'default', body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['x.io/a'] } } as object },
    strategicPatch,
  );
  t.deepEqual(trimmed.metadata?.finalizers, ['x.io/b']);
  const conditions = await apps.patchNamespacedDeploymentStatus(
    {
      name: 'd',
      namespace: 'default',
      body: {
        status: {
          conditions: [
            { type: 'Available', status: 'False' },
            { type: 'Progressing', status: 'True' },
          ],
        },
      },
    },
    strategicPatch,
  );
  const merged = await apps.patchNamespacedDeploymentStatus(
    { name: 'd', namespace: 'default', body: { status: { conditions: [{ type: 'Available', status: 'True' }] } } },
    strategicPatch,
  );
  t.deepEqual(
    merged.status?.conditions?.map((c) => `${c.type}=${c.status}`),
    ['Available=True', 'Progressing=True'],
    'conditions merge by type',
  );
  t.is(conditions.metadata?.generation, merged.metadata?.generation);
});

test('JSON patch and merge patch; a stale update gets 409 Conflict and the store keeps the winner', async (t) => {
  const { apps } = await startCluster(t);
  const created = await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('d') });
  const jp = await apps.patchNamespacedDeployment(
    {
      name: 'd',
      namespace: 'default',
      body: [
        { op: 'replace', path: '/spec/template/spec/containers/1/image', value: 'busybox:1.37' },
        { op: 'add', path: '/metadata/labels', value: { x: 'y' } },
      ],
    },
    jsonPatch,
  );
  t.is(jp.spec?.template.spec?.containers[1]?.image, 'busybox:1.37');
  const mp = await apps.patchNamespacedDeployment({ name: 'd', namespace: 'default', body: { metadata: { labels: { x: null, z: 'w' } } } }, mergePatch);
  t.deepEqual(mp.metadata?.labels, { z: 'w' });
  const stale = await t.throwsAsync(
    apps.replaceNamespacedDeployment({ name: 'd', namespace: 'default', body: { ...created, spec: { ...created.spec!, replicas: 7 } } }),
  );
  t.like(statusOf(stale), { code: 409, reason: 'Conflict', details: { name: 'd', group: 'apps', kind: 'deployments' } });
  t.regex(statusOf(stale).message ?? '', /^Operation cannot be fulfilled on deployments\.apps "d": the object has been modified/);
  const current = await apps.readNamespacedDeployment({ name: 'd', namespace: 'default' });
  t.is(current.spec?.replicas, 1);
  const stalePatch = await t.throwsAsync(
    apps.patchNamespacedDeployment(
      { name: 'd', namespace: 'default', body: { metadata: { resourceVersion: created.metadata?.resourceVersion }, spec: { replicas: 2 } } },
      mergePatch,
    ),
  );
  t.like(statusOf(stalePatch), { code: 409, reason: 'Conflict' });
});

test('server-side apply: managed fields, conflicts with the other manager, force takes ownership, unapplied fields are removed', async (t) => {
  const { objects, core } = await startCluster(t);
  const cm = (data: Record<string, string>): k8s.V1ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'shared', namespace: 'default' },
    data,
  });
  const created = await objects.patch(cm({ a: '1', b: '2' }), undefined, undefined, 'alice', undefined, k8s.PatchStrategy.ServerSideApply);
  t.deepEqual(created.data, { a: '1', b: '2' });
  t.like(created.metadata?.managedFields?.[0], {
    manager: 'alice',
    operation: 'Apply',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } },
  });

  const err = await t.throwsAsync(objects.patch(cm({ a: '9' }), undefined, undefined, 'bob', undefined, k8s.PatchStrategy.ServerSideApply));
  const status = statusOf(err);
  t.like(status, { code: 409, reason: 'Conflict', message: 'Apply failed with 1 conflict: conflict with "alice": .data.a' });
  t.deepEqual(status.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }] as any);
  t.deepEqual((await core.readNamespacedConfigMap({ name: 'shared', namespace: 'default' })).data, { a: '1', b: '2' });

  // Same value: shared ownership, no conflict.
  const shared = await objects.patch(cm({ b: '2' }), undefined, undefined, 'bob', undefined, k8s.PatchStrategy.ServerSideApply);
  t.deepEqual(shared.metadata?.managedFields?.map((m) => m.manager).sort(), ['alice', 'bob']);
  const forced = await objects.patch(cm({ a: '9', b: '2' }), undefined, undefined, 'bob', true, k8s.PatchStrategy.ServerSideApply);
  t.deepEqual(forced.data, { a: '9', b: '2' });
  const alice = forced.metadata?.managedFields?.find((m) => m.manager === 'alice');
  t.deepEqual(alice?.fieldsV1, { 'f:data': { 'f:b': {} } }, 'force took .data.a from alice');

  // alice stops applying b: bob still owns it, so it stays; bob stops too: it goes.
  await objects.patch(cm({}), undefined, undefined, 'alice', undefined, k8s.PatchStrategy.ServerSideApply);
  t.deepEqual((await core.readNamespacedConfigMap({ name: 'shared', namespace: 'default' })).data, { a: '9', b: '2' });
  const dropped = await objects.patch(cm({ a: '9' }), undefined, undefined, 'bob', undefined, k8s.PatchStrategy.ServerSideApply);
  t.deepEqual(dropped.data, { a: '9' });

  // An ordinary update records an Update entry for its manager and takes the fields it changed.
  const updated = await core.patchNamespacedConfigMap({ name: 'shared', namespace: 'default', fieldManager: 'carol', body: { data: { a: '10' } } }, mergePatch);
  const carol = updated.metadata?.managedFields?.find((m) => m.manager === 'carol');
  t.like(carol, { operation: 'Update', fieldsV1: { 'f:data': { 'f:a': {} } } });
  t.falsy(
    updated.metadata?.managedFields?.find((m) => m.manager === 'bob'),
    'bob lost .data.a to carol and owns nothing else',
  );
  const conflictWithUpdate = statusOf(
    await t.throwsAsync(objects.patch(cm({ a: '11' }), undefined, undefined, 'bob', undefined, k8s.PatchStrategy.ServerSideApply)),
  );
  t.regex(conflictWithUpdate.message ?? '', /^Apply failed with 1 conflict: conflict with "carol" using v1: \.data\.a$/);

  const noManager = await raw(
    (await startCluster(t)).cluster,
    'PATCH',
    '/api/v1/namespaces/default/configmaps/x',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n',
    'application/apply-patch+yaml',
  );
  t.like(noManager, { status: 422, json: { reason: 'Invalid' } });
  t.regex(noManager.json.message, /fieldManager: Required value: is required for apply patch/);
});

test('server-side apply merges associative lists by key (built-in containers, CRD x-kubernetes-list-type)', async (t) => {
  const { objects, apps, cluster } = await startCluster(t);
  await objects.patch(deployment('d'), undefined, undefined, 'base', undefined, k8s.PatchStrategy.ServerSideApply);
  const partial = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1.37' }] } } },
  };
  const err = await t.throwsAsync(objects.patch(partial, undefined, undefined, 'updater', undefined, k8s.PatchStrategy.ServerSideApply));
  t.is(statusOf(err).details?.causes?.[0]?.field, '.spec.template.spec.containers[name="sidecar"].image');
  await objects.patch(partial, undefined, undefined, 'updater', true, k8s.PatchStrategy.ServerSideApply);
  const after = await apps.readNamespacedDeployment({ name: 'd', namespace: 'default' });
  t.deepEqual(
    after.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`),
    ['web=nginx:1.25', 'sidecar=busybox:1.37'],
  );

  const crd = structuredClone(WIDGET_CRD) as any;
  crd.spec.versions[0].schema.openAPIV3Schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          tags: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  };
  // Raw JSON: client-node's typed serializer would drop the x-kubernetes-* keys spelled as in YAML.
  t.is((await raw(cluster, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crd))).status, 201);
  const widget = (spec: object) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec });
  await objects.patch(widget({ ports: [{ name: 'a', port: 1 }], tags: ['x'] }), undefined, undefined, 'one', undefined, k8s.PatchStrategy.ServerSideApply);
  const two = (await objects.patch(
    widget({ ports: [{ name: 'b', port: 2 }] }),
    undefined,
    undefined,
    'two',
    undefined,
    k8s.PatchStrategy.ServerSideApply,
  )) as any;
  t.deepEqual(
    two.spec.ports,
    [
      { name: 'a', port: 1 },
      { name: 'b', port: 2 },
    ],
    'a map list merges items of different managers',
  );
  const atomic = await t.throwsAsync(objects.patch(widget({ tags: ['y'] }), undefined, undefined, 'two', undefined, k8s.PatchStrategy.ServerSideApply));
  t.is(statusOf(atomic).details?.causes?.[0]?.field, '.spec.tags', 'lists without a list type are atomic');
});

test('dryRun=All on create, update, patch, apply and delete changes nothing', async (t) => {
  const { core, objects, cluster } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }) });
  const before = (await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;
  await core.createNamespacedConfigMap({ namespace: 'default', dryRun: 'All', body: configMap('dry') });
  await core.replaceNamespacedConfigMap({ name: 'app', namespace: 'default', dryRun: 'All', body: configMap('app', { a: '2' }) });
  const patched = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', dryRun: 'All', body: { data: { a: '3' } } }, mergePatch);
  t.deepEqual(patched.data, { a: '3' }, 'the answer shows the result');
  await objects.patch(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' }, data: { a: '4' } },
    undefined,
    'All',
    'x',
    true,
    k8s.PatchStrategy.ServerSideApply,
  );
  await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default', dryRun: 'All' });
  await core.deleteCollectionNamespacedConfigMap({ namespace: 'default', dryRun: 'All' });
  const after = await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
  t.is(after.json.metadata.resourceVersion, before);
  t.deepEqual(
    after.json.items.map((i: any) => `${i.metadata.name}=${i.data?.a}`),
    ['app=1'],
  );
});

test('generateName: fresh names on every create, the prefix kept', async (t) => {
  const { core } = await startCluster(t);
  const names = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { generateName: 'worker-' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    t.regex(pod.metadata?.name ?? '', /^worker-[a-z0-9]{5}$/);
    names.add(pod.metadata!.name!);
  }
  t.is(names.size, 5);
});
