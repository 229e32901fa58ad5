/** ConfigMaps, Secrets and Namespaces through @kubernetes/client-node's CoreV1Api. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { configMap, jsonPatch, mergePatch, raw, startCluster, statusOf, strategicPatch } from './helpers.js';

test('create, read, replace, patch and delete a ConfigMap', async (t) => {
  const { core } = await startCluster(t);
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }) });
  t.is(created.metadata?.namespace, 'default');
  t.regex(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
  t.regex(created.metadata?.creationTimestamp?.toISOString() ?? '', /^\d{4}-/);
  t.is(created.metadata?.generation, undefined, 'configmaps have no generation');
  const rv1 = Number(created.metadata?.resourceVersion);
  t.true(rv1 > 0);

  const read = await core.readNamespacedConfigMap({ name: 'app', namespace: 'default' });
  t.deepEqual(read.data, { a: '1' });

  read.data = { a: '2' };
  const replaced = await core.replaceNamespacedConfigMap({ name: 'app', namespace: 'default', body: read });
  t.true(Number(replaced.metadata?.resourceVersion) > rv1);
  t.is(replaced.metadata?.uid, created.metadata?.uid);

  const merged = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { b: '3' } } }, mergePatch);
  t.deepEqual(merged.data, { a: '2', b: '3' });
  const jsonPatched = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: [{ op: 'remove', path: '/data/a' }] }, jsonPatch);
  t.deepEqual(jsonPatched.data, { b: '3' });
  const strategic = await core.patchNamespacedConfigMap(
    { name: 'app', namespace: 'default', body: { metadata: { finalizers: ['x.io/a'] }, data: { c: '4' } } },
    strategicPatch,
  );
  t.deepEqual(strategic.data, { b: '3', c: '4' });
  const strategic2 = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: ['x.io/b'] } } }, strategicPatch);
  t.deepEqual(strategic2.metadata?.finalizers, ['x.io/a', 'x.io/b'], 'strategic merge patch merges metadata.finalizers');
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);

  const status = await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default' });
  t.is(status.status, 'Success');
  t.is(status.details?.name, 'app');
  const err = await t.throwsAsync(core.readNamespacedConfigMap({ name: 'app', namespace: 'default' }));
  t.is((err as k8s.ApiException<unknown>).code, 404);
  t.like(statusOf(err), { kind: 'Status', reason: 'NotFound', code: 404, message: 'configmaps "app" not found', details: { name: 'app', kind: 'configmaps' } });
});

test('a stale replace gets 409 Conflict with the real message', async (t) => {
  const { core } = await startCluster(t);
  const v1 = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }) });
  await core.replaceNamespacedConfigMap({ name: 'app', namespace: 'default', body: { ...v1, data: { a: '2' } } });
  const err = await t.throwsAsync(core.replaceNamespacedConfigMap({ name: 'app', namespace: 'default', body: { ...v1, data: { a: '3' } } }));
  t.is((err as k8s.ApiException<unknown>).code, 409);
  t.like(statusOf(err), {
    reason: 'Conflict',
    code: 409,
    message: 'Operation cannot be fulfilled on configmaps "app": the object has been modified; please apply your changes to the latest version and try again',
  });
  const current = await core.readNamespacedConfigMap({ name: 'app', namespace: 'default' });
  t.deepEqual(current.data, { a: '2' });
});

test('creating twice gets 409 AlreadyExists; generateName picks a fresh name', async (t) => {
  const { core } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app') });
  const err = await t.throwsAsync(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app') }));
  t.like(statusOf(err), { reason: 'AlreadyExists', code: 409, message: 'configmaps "app" already exists' });
  const generated = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
  t.regex(generated.metadata?.name ?? '', /^gen-[a-z0-9]{5}$/);
});

test('a no-op update or patch keeps the resourceVersion and returns the stored object', async (t) => {
  const { core, cluster } = await startCluster(t);
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }, { x: 'y' }) });
  const rv = created.metadata?.resourceVersion;
  const replaced = await core.replaceNamespacedConfigMap({ name: 'app', namespace: 'default', body: created });
  t.is(replaced.metadata?.resourceVersion, rv);
  const patched = await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { a: '1' } } }, mergePatch);
  t.is(patched.metadata?.resourceVersion, rv);
  const list = await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
  t.is(list.json.metadata.resourceVersion, rv, 'the global resourceVersion did not move');
});

test('lists: items without kind/apiVersion, selectors, all namespaces, pagination', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespace({ body: { metadata: { name: 'other' } } });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a', {}, { tier: 'web', env: 'prod' }) });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('b', {}, { tier: 'db' }) });
  await core.createNamespacedConfigMap({ namespace: 'other', body: configMap('c', {}, { tier: 'web' }) });
  const names = async (path: string): Promise<string[]> => {
    const res = await raw(cluster, 'GET', path);
    t.is(res.status, 200, JSON.stringify(res.json));
    return res.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
  };
  const list = await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
  t.is(list.json.kind, 'ConfigMapList');
  t.is(list.json.apiVersion, 'v1');
  t.is(list.json.items[0].kind, undefined, 'built-in list items carry no kind, as a real apiserver');
  t.deepEqual(await names('/api/v1/configmaps'), ['default/a', 'default/b', 'other/c']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=tier%3Dweb'), ['default/a', 'other/c']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=tier%3D%3Dweb,env'), ['default/a']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=tier!%3Dweb'), ['default/b']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=tier%20in%20(db,x)'), ['default/b']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=tier%20notin%20(db)'), ['default/a', 'other/c']);
  t.deepEqual(await names('/api/v1/configmaps?labelSelector=!env'), ['default/b', 'other/c']);
  t.deepEqual(await names('/api/v1/configmaps?fieldSelector=metadata.name%3Dc'), ['other/c']);
  t.deepEqual(await names('/api/v1/configmaps?fieldSelector=metadata.namespace!%3Ddefault'), ['other/c']);
  const bad = await raw(cluster, 'GET', '/api/v1/configmaps?fieldSelector=spec.x%3D1');
  t.is(bad.status, 400);

  const page1 = await raw(cluster, 'GET', '/api/v1/configmaps?limit=2');
  t.is(page1.json.items.length, 2);
  t.truthy(page1.json.metadata.continue);
  t.is(page1.json.metadata.remainingItemCount, 1);
  const page2 = await raw(cluster, 'GET', `/api/v1/configmaps?limit=2&continue=${encodeURIComponent(page1.json.metadata.continue)}`);
  t.deepEqual(
    page2.json.items.map((i: any) => i.metadata.name),
    ['c'],
  );
  t.is(page2.json.metadata.continue, undefined);
  t.is(page2.json.metadata.resourceVersion, page1.json.metadata.resourceVersion);

  const cmList = await core.listConfigMapForAllNamespaces();
  t.is(cmList.items.length, 3);
});

test('Secrets: stringData folds into base64 data and type defaults to Opaque', async (t) => {
  const { core } = await startCluster(t);
  const secret = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' }, stringData: { password: 'hunter2' } } });
  t.is(secret.type, 'Opaque');
  t.deepEqual(secret.data, { password: Buffer.from('hunter2').toString('base64') });
  t.is(secret.stringData, undefined);
});

test('errors: malformed JSON 400, invalid name 422, namespace mismatch 400, missing namespace 404, and the server keeps answering', async (t) => {
  const { core, cluster } = await startCluster(t);
  const malformed = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata": {');
  t.is(malformed.status, 400);
  t.like(malformed.json, { kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });

  const err = await t.throwsAsync(core.createNamespacedConfigMap({ namespace: 'default', body: configMap('Bad_Name') }));
  t.is((err as k8s.ApiException<unknown>).code, 422);
  const invalid = statusOf(err);
  t.like(invalid, { reason: 'Invalid', code: 422, details: { name: 'Bad_Name', kind: 'ConfigMap' } });
  t.regex(invalid.message ?? '', /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
  t.is(invalid.details?.causes?.[0]?.field, 'metadata.name');

  const noName = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{}}');
  t.is(noName.status, 422);
  t.regex(noName.json.message, /metadata\.name: Required value: name or generateName is required/);

  const mismatch = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"x","namespace":"other"}}');
  t.is(mismatch.status, 400);
  t.is(mismatch.json.message, 'the namespace of the provided object does not match the namespace sent on the request');

  const missingNs = await t.throwsAsync(core.createNamespacedConfigMap({ namespace: 'nope', body: configMap('x') }));
  t.like(statusOf(missingNs), { reason: 'NotFound', code: 404, message: 'namespaces "nope" not found', details: { name: 'nope', kind: 'namespaces' } });

  for (const [method, path, body] of [
    ['GET', '/api/v1/widgets', undefined],
    ['GET', '/apis/nope.io/v1', undefined],
    ['GET', '/api/v1/namespaces/default/configmaps/x/status', undefined],
    ['GET', '/api/v1/configmaps/x', undefined],
    ['GET', '/openapi/v3/apis/nope.io/v1', undefined],
    ['GET', '/api/v1/namespaces/%E0%A4%A/configmaps', undefined],
  ] as const) {
    const res = await raw(cluster, method, path, body);
    t.is(res.status, 404, `${method} ${path}`);
    t.like(res.json, { kind: 'Status', reason: 'NotFound', code: 404 });
  }
  const notAllowed = await raw(cluster, 'POST', '/api/v1/configmaps', '{}');
  t.like(notAllowed, { status: 405, json: { reason: 'MethodNotAllowed' } });
  const media = await raw(cluster, 'PATCH', '/api/v1/namespaces/default/configmaps/x', '{}', 'text/plain');
  t.like(media, { status: 415, json: { reason: 'UnsupportedMediaType' } });
  const notObject = await raw(cluster, 'PUT', '/api/v1/namespaces/default/configmaps/x', '[1,2]');
  t.is(notObject.status, 400);
  const badJsonPatch = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"p"}}');
  t.is(badJsonPatch.status, 201);
  const failedTest = await raw(
    cluster,
    'PATCH',
    '/api/v1/namespaces/default/configmaps/p',
    '[{"op":"test","path":"/data","value":1}]',
    'application/json-patch+json',
  );
  t.like(failedTest, { status: 422, json: { reason: 'Invalid' } });
  const garbagePatch = await raw(cluster, 'PATCH', '/api/v1/namespaces/default/configmaps/p', 'nope', 'application/merge-patch+json');
  t.is(garbagePatch.status, 400);

  const after = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('still-alive') });
  t.is(after.metadata?.name, 'still-alive');
});

test('dryRun=All validates and answers without persisting', async (t) => {
  const { core, cluster } = await startCluster(t);
  const res = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', '{"metadata":{"name":"dry"}}');
  t.is(res.status, 201);
  t.is(res.json.metadata.name, 'dry');
  const err = await t.throwsAsync(core.readNamespacedConfigMap({ name: 'dry', namespace: 'default' }));
  t.is((err as k8s.ApiException<unknown>).code, 404);
  const invalid = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', '{"metadata":{"name":"NO"}}');
  t.is(invalid.status, 422);
});

test('discovery documents list resources, subresources and CRD groups', async (t) => {
  const { cluster } = await startCluster(t);
  const version = await raw(cluster, 'GET', '/version');
  t.like(version.json, { major: '1' });
  const api = await raw(cluster, 'GET', '/api');
  t.like(api.json, { kind: 'APIVersions', versions: ['v1'] });
  const v1 = await raw(cluster, 'GET', '/api/v1');
  t.is(v1.json.kind, 'APIResourceList');
  const ns = v1.json.resources.find((r: any) => r.name === 'namespaces');
  t.like(ns, { singularName: 'namespace', namespaced: false, kind: 'Namespace' });
  t.truthy(v1.json.resources.find((r: any) => r.name === 'namespaces/status'));
  const cm = v1.json.resources.find((r: any) => r.name === 'configmaps');
  t.deepEqual([...cm.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  t.is(
    v1.json.resources.find((r: any) => r.name === 'configmaps/status'),
    undefined,
  );
  const apis = await raw(cluster, 'GET', '/apis');
  t.deepEqual(apis.json.groups.map((g: any) => g.name).sort(), [
    'admissionregistration.k8s.io',
    'apiextensions.k8s.io',
    'apps',
    'authorization.k8s.io',
    'autoscaling',
    'batch',
    'coordination.k8s.io',
    'discovery.k8s.io',
    'events.k8s.io',
    'networking.k8s.io',
    'policy',
    'rbac.authorization.k8s.io',
    'storage.k8s.io',
  ]);
  const ext = await raw(cluster, 'GET', '/apis/apiextensions.k8s.io/v1');
  t.truthy(ext.json.resources.find((r: any) => r.name === 'customresourcedefinitions/status'));
  const namespaces = await raw(cluster, 'GET', '/api/v1/namespaces');
  t.deepEqual(namespaces.json.items.map((n: any) => n.metadata.name).sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
});
