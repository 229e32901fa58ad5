/** Watch streams: initial state, resume by resourceVersion, 410 Expired, selectors, bookmarks, informers. */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { clientWatch, configMap, mergePatch, openWatch, raw, startCluster, until } from './helpers.js';

test('an informer (makeInformer) sees add, update and delete in order', async (t) => {
  const { core, kc } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('before', { a: '0' }) });
  const seen: string[] = [];
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name} ${JSON.stringify(o.data)}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${JSON.stringify(o.data)}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
  const errors: unknown[] = [];
  informer.on('error', (e) => errors.push(e));
  await informer.start();
  t.teardown(() => informer.stop());
  await until(() => seen.length === 1);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { a: '1' }) });
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { a: '2' } } }, mergePatch);
  await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default' });
  await until(() => seen.length === 4);
  t.deepEqual(seen, ['add before {"a":"0"}', 'add app {"a":"1"}', 'update app {"a":"2"}', 'delete app']);
  t.deepEqual(errors, []);
  t.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['before'],
  );
});

test('a watch without resourceVersion starts with ADDED for the current state, filtered by namespace', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespace({ body: { metadata: { name: 'other' } } });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a') });
  await core.createNamespacedConfigMap({ namespace: 'other', body: configMap('b') });
  const w = await openWatch(t, cluster, '/api/v1/namespaces/default/configmaps?watch=true');
  t.is(w.status, 200);
  await w.waitFor(1);
  await core.createNamespacedConfigMap({ namespace: 'other', body: configMap('c') });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('d') });
  const events = await w.waitFor(2);
  t.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['ADDED a', 'ADDED d'],
  );
  t.is(events[0]!.object.kind, 'ConfigMap', 'watch event objects carry kind');
  t.is(events[0]!.object.apiVersion, 'v1');
});

test('resuming a watch from a resourceVersion delivers every later change exactly once', async (t) => {
  const { core, cluster, kc } = await startCluster(t);
  const path = '/api/v1/namespaces/default/configmaps';
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { n: '0' }) });
  const first = await clientWatch(t, kc, path, { resourceVersion: created.metadata!.resourceVersion! });
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: '1' } } }, mergePatch);
  const [e1] = await first.waitFor(1);
  first.abort();
  // Changes while no watch is open.
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: '2' } } }, mergePatch);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('other') });
  await core.deleteNamespacedConfigMap({ name: 'app', namespace: 'default' });
  const resumed = await clientWatch(t, kc, path, { resourceVersion: e1!.object.metadata.resourceVersion });
  const events = await resumed.waitFor(3);
  await new Promise((r) => setTimeout(r, 100));
  t.is(resumed.events.length, 3, 'nothing duplicated or synthesized');
  t.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.name}`),
    ['MODIFIED app', 'ADDED other', 'DELETED app'],
  );
  t.deepEqual(events[0]!.object.data, { n: '2' });
  const rvs = [e1!, ...events].map((e) => Number(e.object.metadata.resourceVersion));
  t.deepEqual(
    [...rvs].sort((a, b) => a - b),
    rvs,
    'resourceVersions increase',
  );
  t.deepEqual(events[2]!.object.data, { n: '2' }, 'DELETED carries the last state');
  const list = await raw(cluster, 'GET', '/api/v1/namespaces/default/configmaps');
  t.is(events[2]!.object.metadata.resourceVersion, list.json.metadata.resourceVersion, 'DELETED carries the deletion resourceVersion');
});

test('resuming from before the retained history gets an in-stream 410 Expired and the stream ends', async (t) => {
  const { core, kc } = await startCluster(t, { watchHistorySize: 3 });
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { n: '0' }) });
  for (let i = 1; i <= 5; i++) await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: String(i) } } }, mergePatch);
  const w = await clientWatch(t, kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: created.metadata!.resourceVersion! });
  const endError = await w.ended;
  t.is(endError, null, 'the stream ends cleanly after the ERROR event');
  t.is(w.events.length, 1);
  t.is(w.events[0]!.type, 'ERROR');
  t.like(w.events[0]!.object, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });

  // The informer contract: client-node relists after the 410 and carries on.
  const list = await core.listNamespacedConfigMap({ namespace: 'default' });
  const fresh = await clientWatch(t, kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: list.metadata!.resourceVersion! });
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: 'x' } } }, mergePatch);
  const [e] = await fresh.waitFor(1);
  t.is(e!.type, 'MODIFIED');
});

test('a resourceVersion newer than the server gets 504 ResourceVersionTooLarge', async (t) => {
  const { cluster } = await startCluster(t);
  const res = await raw(cluster, 'GET', '/api/v1/configmaps?watch=true&resourceVersion=999999');
  t.is(res.status, 504);
  t.is(res.json.details.causes[0].reason, 'ResourceVersionTooLarge');
});

test('label selectors: an object that stops matching is DELETED, one that starts matching is ADDED', async (t) => {
  const { core, cluster } = await startCluster(t);
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', {}, { role: 'web' }) });
  const w = await openWatch(t, cluster, '/api/v1/namespaces/default/configmaps?watch=true&labelSelector=role%3Dweb');
  await w.waitFor(1);
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { labels: { role: 'db' } } } }, mergePatch);
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { ignored: 'yes' } } }, mergePatch);
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { metadata: { labels: { role: 'web' } } } }, mergePatch);
  const events = await w.waitFor(3);
  t.deepEqual(
    events.map((e) => `${e.type} ${e.object.metadata.labels.role}`),
    ['ADDED web', 'DELETED web', 'ADDED web'],
  );
  t.deepEqual(events[2]!.object.data, { ignored: 'yes' });
});

test('bookmarks carry the current resourceVersion; timeoutSeconds ends the stream', async (t) => {
  const { core, cluster } = await startCluster(t, { bookmarkIntervalMs: 100 });
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app') });
  // Taken before the request is sent: the server's 1 s starts later, however slow the machine.
  const sent = Date.now();
  const w = await openWatch(
    t,
    cluster,
    `/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${created.metadata?.resourceVersion}`,
  );
  const [bookmark] = await w.waitFor(1);
  t.is(bookmark!.type, 'BOOKMARK');
  t.deepEqual(bookmark!.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: created.metadata?.resourceVersion } });
  // The server ends the stream (the test never closes it), and not before timeoutSeconds (a few ms
  // of slack: Date.now() and the server's timer are different clocks).
  await w.ended;
  const elapsed = Date.now() - sent;
  t.true(elapsed >= 995, `ended after ${elapsed} ms`);
});

test('sendInitialEvents: ADDED events, then a BOOKMARK marking the end of the initial events', async (t) => {
  const { core, cluster } = await startCluster(t, { bookmarkIntervalMs: 0 });
  await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a') });
  const w = await openWatch(
    t,
    cluster,
    '/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
  );
  const events = await w.waitFor(2);
  t.is(events[0]!.type, 'ADDED');
  t.is(events[1]!.type, 'BOOKMARK');
  t.is(events[1]!.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
  const rejected = await raw(cluster, 'GET', '/api/v1/configmaps?watch=true&sendInitialEvents=true');
  t.is(rejected.status, 422);
});

test('stop() ends open watches promptly', async (t) => {
  const { cluster } = await startCluster(t);
  const w = await openWatch(t, cluster, '/api/v1/configmaps?watch=true');
  const started = Date.now();
  await cluster.stop();
  await w.ended;
  t.true(Date.now() - started < 1000);
});

test('after a compaction, a watch from an older resourceVersion gets 410 Expired; from the compacted one it resumes', async (t) => {
  const { core, kc, cluster } = await startCluster(t);
  const created = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('app', { n: '0' }) });
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: '1' } } }, mergePatch);
  const compactedAt = cluster.resourceVersion;
  cluster.compact();
  const old = await clientWatch(t, kc, '/api/v1/namespaces/default/configmaps', {
    resourceVersion: created.metadata!.resourceVersion!,
    allowWatchBookmarks: true,
  });
  await old.ended;
  t.like(old.events[0], { type: 'ERROR', object: { kind: 'Status', reason: 'Expired', code: 410 } });
  t.regex(old.events[0]!.object.message, /^too old resource version: \d+ \(\d+\)$/);
  const fresh = await clientWatch(t, kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: String(compactedAt) });
  await core.patchNamespacedConfigMap({ name: 'app', namespace: 'default', body: { data: { n: '2' } } }, mergePatch);
  const [e] = await fresh.waitFor(1);
  t.like(e, { type: 'MODIFIED', object: { data: { n: '2' } } });
});

test('a watch resumes across kinds sharing one resourceVersion sequence, and events.k8s.io sees core Events', async (t) => {
  const { core, kc } = await startCluster(t);
  const start = await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('a') });
  const events = await clientWatch(t, kc, '/apis/events.k8s.io/v1/namespaces/default/events', { resourceVersion: start.metadata!.resourceVersion! });
  await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
  await core.createNamespacedEvent({
    namespace: 'default',
    body: { metadata: { name: 'e' }, involvedObject: { kind: 'ConfigMap', name: 'a' }, reason: 'R', message: 'm' },
  });
  const [ev] = await events.waitFor(1);
  t.like(ev, { type: 'ADDED', object: { apiVersion: 'events.k8s.io/v1', kind: 'Event', note: 'm', regarding: { name: 'a' } } });
  t.is(events.events.length, 1, 'the Secret is not an Event');
});
