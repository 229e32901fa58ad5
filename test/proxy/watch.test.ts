import test from 'ava';
import { ADD, CoreV1Api, DELETE, PatchStrategy, UPDATE, Watch, makeInformer, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { kubeConfigOf, startCluster, startProxy, waitFor } from './helpers.js';
import { EmbeddedCluster } from '../../src/cluster/index.js';

const N = 12;

test('a client-node Watch through the proxy sees every add/update/delete in order, and the trace holds the same events', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const viaProxy = kubeConfigOf(proxy.kubeconfigYaml());
  // Writes go straight to the cluster: only the watch passes the proxy.
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);

  const seen: Array<{ type: string; name: string; rv: string }> = [];
  let ended: unknown = 'not yet';
  const controller = await new Watch(viaProxy).watch(
    '/api/v1/namespaces/default/configmaps',
    {},
    (type: string, obj: V1ConfigMap) => {
      if (obj.metadata?.name?.startsWith('w-')) seen.push({ type, name: obj.metadata.name, rv: obj.metadata.resourceVersion ?? '' });
    },
    (err: unknown) => (ended = err),
  );
  t.teardown(() => controller.abort());
  await waitFor('the stream to open', () => trace.ofType('stream-open').length === 1);

  const expected: Array<{ type: string; name: string }> = [];
  for (let i = 0; i < N; i++) {
    await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `w-${i}` }, data: { v: '0' } } });
    expected.push({ type: 'ADDED', name: `w-${i}` });
  }
  for (let i = 0; i < N; i++) {
    await direct.patchNamespacedConfigMap(
      { name: `w-${i}`, namespace: 'default', body: { data: { v: '1' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expected.push({ type: 'MODIFIED', name: `w-${i}` });
  }
  for (let i = 0; i < N; i++) {
    await direct.deleteNamespacedConfigMap({ name: `w-${i}`, namespace: 'default' });
    expected.push({ type: 'DELETED', name: `w-${i}` });
  }

  await waitFor(`${expected.length} events`, () => seen.length >= expected.length);
  t.is(ended, 'not yet', 'the watch stayed open');
  t.deepEqual(
    seen.map(({ type, name }) => ({ type, name })),
    expected,
  );

  const watchRequest = trace.ofType('request').find((r) => r.verb === 'watch');
  t.truthy(watchRequest);
  t.is(watchRequest!.key, undefined);
  t.like(watchRequest!.resource, { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true });
  const recorded = trace
    .ofType('watch-event')
    .filter((e) => e.id === watchRequest!.id && e.key?.startsWith('ConfigMap/default/w-'))
    .map((e) => ({ type: e.eventType, name: e.key!.split('/')[2]!, rv: e.resourceVersion ?? '' }));
  t.deepEqual(recorded, seen, 'the trace shows exactly what the client saw, in the same order, with resourceVersions');
  t.is(proxy.activity().openWatches, 1);

  controller.abort();
  await waitFor('the stream to close', () => trace.ofType('stream-close').length === 1);
  t.regex(trace.ofType('stream-close')[0]!.reason ?? '', /controller closed/);
  await waitFor('no open watch', () => proxy.activity().openWatches === 0 && proxy.upstreamOpenCount() === 0);
});

test('watch events split across arbitrary chunks are forwarded whole and recorded once each', async (t) => {
  const { startHttpServer } = await import('./helpers.js');
  const events = [
    {
      type: 'ADDED',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', namespace: 'default', resourceVersion: '5' }, data: { s: 'é'.repeat(50) } },
    },
    { type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '6' } } },
    { type: 'DELETED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x', namespace: 'default', resourceVersion: '7' } } },
  ];
  const wire = Buffer.from(events.map((e) => JSON.stringify(e) + '\n').join(''));
  const upstream = await startHttpServer(t, (req, res) => {
    if (!req.url?.includes('watch')) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    // 7-byte chunks: boundaries fall inside events and inside multi-byte characters.
    let i = 0;
    const timer = setInterval(() => {
      if (i >= wire.length) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(wire.subarray(i, i + 7));
      i += 7;
    }, 1);
  });
  const { proxy, trace } = await startProxy(t, upstream);
  const { proxyAuth, rawRequest } = await import('./helpers.js');
  const res = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps?watch=1', headers: proxyAuth(proxy) });
  t.is(res.status, 200);
  t.true(res.body.equals(wire), 'bytes forwarded unchanged');
  const recorded = trace.ofType('watch-event');
  t.deepEqual(
    recorded.map((e) => [e.eventType, e.key, e.resourceVersion]),
    [
      ['ADDED', 'ConfigMap/default/x', '5'],
      ['BOOKMARK', undefined, '6'],
      ['DELETED', 'ConfigMap/default/x', '7'],
    ],
  );
  t.is(trace.ofType('stream-close')[0]?.reason, 'the API server ended the stream');
});

test('a client-node informer (list, then watch) through the proxy keeps an exact cache', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'pre' } } });
  const viaProxy = kubeConfigOf(proxy.kubeconfigYaml());
  const api = viaProxy.makeApiClient(CoreV1Api);
  const informer = makeInformer(viaProxy, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }));
  const log: string[] = [];
  informer.on(ADD, (o: V1ConfigMap) => log.push(`add ${o.metadata?.name}`));
  informer.on(UPDATE, (o: V1ConfigMap) => log.push(`update ${o.metadata?.name} ${o.data?.v}`));
  informer.on(DELETE, (o: V1ConfigMap) => log.push(`delete ${o.metadata?.name}`));
  await informer.start();
  t.teardown(() => informer.stop());
  await waitFor('the informer watch', () => trace.ofType('stream-open').length === 1);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'i' }, data: { v: '1' } } });
  await direct.replaceNamespacedConfigMap({ name: 'i', namespace: 'default', body: { metadata: { name: 'i' }, data: { v: '2' } } });
  await direct.deleteNamespacedConfigMap({ name: 'pre', namespace: 'default' });
  await waitFor('three events', () => log.length >= 4);
  t.deepEqual(log, ['add pre', 'add i', 'update i 2', 'delete pre']);
  t.deepEqual(
    informer.list().map((o) => o.metadata?.name),
    ['i'],
  );
  const list = trace.ofType('request').find((r) => r.verb === 'list')!;
  t.like(
    trace.ofType('response').find((r) => r.id === list.id),
    { status: 200, object: { kind: 'ConfigMapList' } },
  );
});

test('BOOKMARKs delivered through the proxy are not controller activity: a watched controller still goes quiet', async (t) => {
  const cluster = await EmbeddedCluster.start({ port: 0, bookmarkIntervalMs: 20, simulation: false });
  t.teardown(() => cluster.stop());
  const { proxy, trace } = await startProxy(t, cluster);
  const viaProxy = kubeConfigOf(proxy.kubeconfigYaml());
  const controller = await new Watch(viaProxy).watch(
    '/api/v1/namespaces/default/configmaps',
    { allowWatchBookmarks: true },
    () => {},
    () => {},
  );
  t.teardown(() => controller.abort());
  await waitFor('the stream to open', () => trace.ofType('stream-open').length === 1);
  const lastActivity = proxy.activity().lastActivityAt;
  await waitFor('five bookmarks delivered', () => trace.ofType('watch-event').filter((e) => e.eventType === 'BOOKMARK').length >= 5);
  t.is(proxy.activity().lastActivityAt, lastActivity, 'bookmarks did not move the last activity');
  // A real change still does.
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'moved' } } });
  await waitFor('the ADDED event delivered', () => trace.ofType('watch-event').some((e) => e.eventType === 'ADDED'));
  t.true(proxy.activity().lastActivityAt > lastActivity, 'an ADDED event is activity');
});
