/** List semantics: resourceVersion and resourceVersionMatch, pagination with expiring continue tokens, selectors. */
import test from 'ava';
import { configMap, mergePatch, raw, startCluster, statusOf } from './helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

test('resourceVersion: unset and "0" are current, "X" not older than X, Exact and limit read the past', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a', { v: '1' }) });
  const rvBefore = (await core.listNamespacedConfigMap({ namespace: 'default' })).metadata!.resourceVersion!;
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('b') });
  await core.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: { data: { v: '2' } } }, mergePatch);
  const current = await core.listNamespacedConfigMap({ namespace: 'default' });
  const now = current.metadata!.resourceVersion!;
  t.true(Number(now) > Number(rvBefore));
  const summary = (items: any[]): string[] => items.map((i) => `${i.metadata.name}=${i.data?.v ?? ''}`);
  t.deepEqual(summary(current.items), ['a=2', 'b=']);

  const notOlder = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rvBefore, resourceVersionMatch: 'NotOlderThan' });
  t.deepEqual(summary(notOlder.items), ['a=2', 'b='], 'NotOlderThan answers with the current state');
  t.is(notOlder.metadata?.resourceVersion, now);
  const exact = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rvBefore, resourceVersionMatch: 'Exact' });
  t.deepEqual(summary(exact.items), ['a=1'], 'Exact answers with the state at that resourceVersion');
  t.is(exact.metadata?.resourceVersion, rvBefore);
  const paged = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rvBefore, limit: 10 });
  t.deepEqual(summary(paged.items), ['a=1'], 'a limit with a resourceVersion is an exact read');
  const any = await core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: '0', limit: 1 });
  t.is(any.items.length, 2, 'resourceVersion=0 is served from the cache, which ignores the limit');
  t.is(any.metadata?._continue, undefined);

  for (const [query, field] of [
    ['resourceVersionMatch=Exact', 'resourceVersionMatch'],
    ['resourceVersion=0&resourceVersionMatch=Exact', 'resourceVersionMatch'],
    [`resourceVersion=${rvBefore}&resourceVersionMatch=Newest`, 'resourceVersionMatch'],
  ] as const) {
    const res = await raw(cluster, 'GET', `${CM}?${query}`);
    t.like(res, { status: 422, json: { reason: 'Invalid', details: { kind: 'ListOptions', group: 'meta.k8s.io' } } }, query);
    t.is(res.json.details.causes[0].field, field);
  }
  const future = await t.throwsAsync(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: String(Number(now) + 100) }));
  t.like(statusOf(future), { code: 504, reason: 'Timeout', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } });

  cluster.compact();
  const compacted = await t.throwsAsync(core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: rvBefore, resourceVersionMatch: 'Exact' }));
  t.like(statusOf(compacted), { code: 410, reason: 'Expired' });
});

test('pagination: pages of one snapshot; a continue token from before a compaction gets 410 with a fresh token', async (t) => {
  const { core, cluster } = await startCluster(t);
  for (const name of ['a', 'b', 'c', 'd', 'e']) await core.createNamespacedConfigMap({ namespace: 'default', body: configMap(name) });
  const first = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2 });
  t.deepEqual(
    first.items.map((i) => i.metadata?.name),
    ['a', 'b'],
  );
  t.is(first.metadata?.remainingItemCount, 3);
  await core.deleteNamespacedConfigMap({ name: 'c', namespace: 'default' });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('bb') });
  const second = await core.listNamespacedConfigMap({ namespace: 'default', limit: 2, _continue: first.metadata!._continue! });
  t.deepEqual(
    second.items.map((i) => i.metadata?.name),
    ['c', 'd'],
    "later pages show the first page's snapshot",
  );
  t.is(second.metadata?.resourceVersion, first.metadata?.resourceVersion);
  const withRv = await raw(cluster, 'GET', `${CM}?limit=2&resourceVersion=1&continue=${encodeURIComponent(first.metadata!._continue!)}`);
  t.like(withRv, { status: 400, json: { reason: 'BadRequest', message: 'specifying resource version is not allowed when using continue' } });

  cluster.compact();
  const expired = await raw(cluster, 'GET', `${CM}?limit=2&continue=${encodeURIComponent(second.metadata!._continue!)}`);
  t.like(expired, { status: 410, json: { kind: 'Status', reason: 'Expired', code: 410 } });
  t.regex(expired.json.message, /^The provided continue parameter is too old/);
  const rest = await raw(cluster, 'GET', `${CM}?limit=10&continue=${encodeURIComponent(expired.json.metadata.continue)}`);
  t.deepEqual(
    rest.json.items.map((i: any) => i.metadata.name),
    ['e'],
    'the fresh token continues (inconsistently) from the current state',
  );
  const garbage = await raw(cluster, 'GET', `${CM}?limit=2&continue=garbage`);
  t.is(garbage.status, 400);
});

test('field selectors per kind and set-based label selectors', async (t) => {
  const { core } = await startCluster(t);
  const spec = { containers: [{ name: 'c', image: 'x' }] };
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'a', labels: { tier: 'web', env: 'prod' } }, spec: { ...spec, nodeName: 'n1' } },
  });
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'b', labels: { tier: 'db' } }, spec } });
  await core.patchNamespacedPodStatus({ name: 'a', namespace: 'default', body: { status: { phase: 'Running' } } }, mergePatch);
  const names = async (opts: { fieldSelector?: string; labelSelector?: string }) =>
    (await core.listPodForAllNamespaces(opts)).items.map((p) => p.metadata?.name);
  t.deepEqual(await names({ fieldSelector: 'status.phase=Running' }), ['a']);
  t.deepEqual(await names({ fieldSelector: 'status.phase!=Running,metadata.namespace=default' }), ['b']);
  t.deepEqual(await names({ fieldSelector: 'spec.nodeName=n1' }), ['a']);
  t.deepEqual(await names({ labelSelector: 'tier in (web,db),!env' }), ['b']);
  t.deepEqual(await names({ labelSelector: 'env notin (dev)' }), ['a', 'b']);
  const unsupported = await t.throwsAsync(core.listPodForAllNamespaces({ fieldSelector: 'spec.image=x' }));
  t.like(statusOf(unsupported), { code: 400, reason: 'BadRequest' });
  const secrets = await core.listSecretForAllNamespaces({ fieldSelector: 'type=Opaque' });
  t.deepEqual(secrets.items, []);
});
