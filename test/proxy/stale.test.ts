/**
 * Stale views (time travel): a restarted controller's informer first shows the cluster as it was
 * right after an earlier change, then catches up once the view is released; writes stay live.
 */
import test from 'ava';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigOf, rawRequest, sleep, startConfigMapInformer, startRecordedProxy, upstreamOf, waitFor } from './helpers.js';
import { scratchDir } from '../_scratch-dir.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

test('a restarted informer gets the frozen view, its watch is held, and it catches up after release', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/s';
  const mark = proxy.primitives.triggers.markChange({ key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 });

  // The first controller sees everything as it happens.
  const first = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 's' }, data: { v: '1' } } });
  const v2 = await direct.patchNamespacedConfigMap({ name: 's', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'later' }, data: { v: '1' } } });
  await direct.patchNamespacedConfigMap({ name: 's', namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('the first informer to be current', () => first.cache().s === '3' && first.cache().later === '1');
  t.is(mark.resourceVersion, v2.metadata!.resourceVersion, 'the mark is the resourceVersion of the change');

  // The coordinator kills it and restarts it onto the view frozen right after v=2.
  proxy.primitives.holdController();
  await first.stop();
  proxy.startNewEpoch();
  proxy.incarnation = 2;
  const view = proxy.primitives.staleViews.serve(mark.resourceVersion!);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const restarted = await startConfigMapInformer(t, kc);
  await waitFor('the restarted informer to list', () => 's' in restarted.cache());
  await sleep(300);
  t.deepEqual(restarted.cache(), { s: '2' }, 'before release: the old view (no "later", v=2)');
  const list = trace.ofType('request').find((r) => r.verb === 'list' && r.incarnation === 2)!;
  t.like(trace.ofType('response').find((r) => r.id === list.id)?.object, { metadata: { resourceVersion: mark.resourceVersion } });
  const watch = trace.ofType('request').find((r) => r.verb === 'watch' && r.incarnation === 2)!;
  t.is(watch.query.resourceVersion, mark.resourceVersion!, 'the informer watches from the frozen resourceVersion');
  t.false(
    trace.ofType('watch-event').some((e) => e.id === watch.id),
    'the watch is held',
  );

  // Writes are live: the restarted controller creates an object the real cluster gets at once.
  await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'written' }, data: { v: '1' } } });
  t.is((await direct.readNamespacedConfigMap({ name: 'written', namespace: 'default' })).data?.v, '1');

  view.release();
  await waitFor('after release: caught up', () => restarted.cache().s === '3' && restarted.cache().later === '1' && restarted.cache().written === '1');
  t.deepEqual(restarted.log, ['add s v=2', 'add later v=1', 'update s v=3', 'add written v=1'], 'history replayed in order from the frozen point');
  t.deepEqual(
    trace
      .ofType('fault')
      .filter((f) => f.fault === 'stale-restart')
      .map((f) => f.phase),
    ['held', 'applied', 'applied', 'released'],
  );
  const applied = trace.ofType('fault').find((f) => f.phase === 'applied' && f.requestId === list.id)!;
  t.regex(applied.detail, /beyond the API contract/);
  t.is(applied.beyondContract, 'a LIST with resourceVersion unset (a consistent read) answered from a stale view');
  t.deepEqual(proxy.primitives.staleViews.beyondContract(), [applied.beyondContract!], 'the run learns that its fault went beyond the contract');
});

test('with contract strict, a stale view answers no consistent read: a LIST with resourceVersion unset is live, one from "0" is stale', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t, { contract: 'strict' });
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const mark = proxy.primitives.triggers.markChange({ key: 'ConfigMap/default/a', change: 'create', occurrence: 1 });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
  proxy.startNewEpoch();
  proxy.primitives.staleViews.serve(mark.resourceVersion!);
  const headers = { authorization: `Bearer ${proxy.controllerToken}` };
  const names = async (query: string) =>
    (
      JSON.parse((await rawRequest(proxy.url, { path: `/api/v1/namespaces/default/configmaps${query}`, headers })).body.toString()) as {
        items: Array<{ metadata: { name: string } }>;
      }
    ).items
      .map((i) => i.metadata.name)
      .sort();
  t.deepEqual(await names(''), ['a', 'b'], 'a consistent read is answered live');
  t.deepEqual(await names('?resourceVersion=0'), ['a'], 'a read any cache may answer gets the stale view');
  t.deepEqual(proxy.primitives.staleViews.beyondContract(), []);
  t.false(trace.ofType('fault').some((f) => f.beyondContract !== undefined));
});

test('a stale view answers resourceVersion=0 lists, refuses WatchList with the exact 422, and watches from "0" get the view as ADDED events', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/w';
  const mark = proxy.primitives.triggers.markChange({ key, change: 'create', occurrence: 1 });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w', labels: { app: 'x' } }, data: { v: '1' } } });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w2', labels: { app: 'y' } } } });
  await direct.createNamespacedConfigMap({ namespace: 'other', body: { metadata: { name: 'w3' } } }).catch(() => undefined);
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  await sleep(50);
  proxy.startNewEpoch();
  const view = proxy.primitives.staleViews.serve(mark.resourceVersion!);
  const headers = { authorization: `Bearer ${proxy.controllerToken}` };

  const list = await rawRequest(proxy.url, { path: '/api/v1/namespaces/default/configmaps?resourceVersion=0&limit=500', headers });
  const body = JSON.parse(list.body.toString()) as { metadata: { resourceVersion: string }; items: Array<{ metadata: { name: string } }> };
  t.is(body.metadata.resourceVersion, mark.resourceVersion!);
  t.deepEqual(
    body.items.map((i) => i.metadata.name),
    ['w'],
    'only what existed at the frozen point',
  );
  const selected = await rawRequest(proxy.url, { path: '/api/v1/configmaps?resourceVersion=0&labelSelector=app%3Dy', headers });
  t.deepEqual(JSON.parse(selected.body.toString()).items, [], 'selectors apply to the frozen state');

  const watchList = await rawRequest(proxy.url, {
    path: '/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    headers,
  });
  t.is(watchList.status, 422);
  const status = JSON.parse(watchList.body.toString());
  t.like(status, { kind: 'Status', code: 422, reason: 'Invalid' });
  t.regex(status.message, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/);

  // A watch from "0": the view's state as ADDED at once, nothing else until release.
  const events: string[] = [];
  const http = await import('node:http');
  const u = new URL(proxy.url);
  const req = http.request({ hostname: u.hostname, port: u.port, path: '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0', headers });
  req.on('response', (res) =>
    res.on('data', (c: Buffer) =>
      events.push(
        ...c
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l) => `${JSON.parse(l).type} ${JSON.parse(l).object.metadata.name}`),
      ),
    ),
  );
  req.end();
  t.teardown(() => req.destroy());
  await waitFor('the synthetic ADDED', () => events.length >= 1);
  await sleep(200);
  t.deepEqual(events, ['ADDED w']);
  view.release();
  await waitFor('history after the frozen point', () => events.includes('ADDED w2'));
  t.deepEqual(events, ['ADDED w', 'ADDED w2']);
  t.true(trace.ofType('fault').some((f) => f.phase === 'applied' && /WatchList/.test(f.detail)));
});

test('a view scoped to some kinds freezes only their lists and watches; every other kind is live', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const mark = proxy.primitives.triggers.markChange({ key: 'ConfigMap/default/a', change: 'create', occurrence: 1 });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
  await direct.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
  proxy.startNewEpoch();
  proxy.primitives.staleViews.serve(mark.resourceVersion!, undefined, ['Secret']);
  const headers = { authorization: `Bearer ${proxy.controllerToken}` };
  const names = async (path: string) => {
    const body = JSON.parse((await rawRequest(proxy.url, { path, headers })).body.toString()) as {
      metadata: { resourceVersion: string };
      items: Array<{ metadata: { name: string } }>;
    };
    return { rv: body.metadata.resourceVersion, names: body.items.map((i) => i.metadata.name) };
  };
  const secrets = await names('/api/v1/namespaces/default/secrets?resourceVersion=0');
  t.deepEqual(secrets, { rv: mark.resourceVersion!, names: [] }, 'Secrets: frozen before s existed');
  const configMaps = await names('/api/v1/namespaces/default/configmaps?resourceVersion=0');
  t.deepEqual(
    configMaps.names.filter((n) => n === 'a' || n === 'b'),
    ['a', 'b'],
    'ConfigMaps: live',
  );
  t.not(configMaps.rv, mark.resourceVersion!);
  t.regex(trace.ofType('fault').find((f) => f.fault === 'stale-restart' && f.phase === 'held')!.detail, /for Secret \(every other kind live\)/);
  t.is(trace.ofType('fault').filter((f) => f.fault === 'stale-restart' && f.phase === 'applied').length, 1, 'only the Secret list was served from the view');
});

test('a stale view serves Secrets with their real values even when the trace redacts them', async (t) => {
  const { join } = await import('node:path');
  const { TraceSequence, TraceWriter } = await import('../../src/io/trace-io.js');
  const { ClusterRecorder } = await import('../../src/recorder/cluster-recorder.js');
  const { KubeClient } = await import('../../src/kube/client.js');
  const { startCluster } = await import('./helpers.js');
  const { ControllerProxy } = await import('../../proxy/index.js');
  const dir = scratchDir(t, 'kperturb-stale-');
  const cluster = await startCluster(t);
  const sequence = new TraceSequence();
  const clusterTrace = new TraceWriter(join(dir, 'cluster.jsonl'), 'cluster', sequence);
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  const recorder = await ClusterRecorder.start(client, clusterTrace);
  t.teardown(async () => {
    await recorder.stop();
    client.close();
    await clusterTrace.close();
  });
  const controllerTrace = new TraceWriter(join(dir, 'controller.jsonl'), 'controller', sequence);
  t.teardown(() => controllerTrace.close());
  const proxy = await ControllerProxy.start({ ...upstreamOf(cluster), trace: controllerTrace, clusterView: recorder, log: () => {} });
  t.teardown(() => proxy.stop());
  const mark = proxy.primitives.triggers.markChange({ key: 'Secret/default/pw', change: 'create', occurrence: 1 });
  const value = Buffer.from('hunter2').toString('base64');
  await kubeConfigOf(cluster.kubeconfigYaml())
    .makeApiClient(CoreV1Api)
    .createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'pw' }, data: { password: value } } });
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  proxy.startNewEpoch();
  proxy.primitives.staleViews.serve(mark.resourceVersion!);
  // The proxy's own trace redacts too (a TraceWriter): twice, so a first answer cannot spoil the second.
  const api = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  for (let i = 0; i < 2; i++) {
    const list = await api.listNamespacedSecret({ namespace: 'default', resourceVersion: '0' });
    t.is(list.metadata?.resourceVersion, mark.resourceVersion);
    t.is(list.items.find((s) => s.metadata?.name === 'pw')?.data?.password, value);
  }
});

test('churn on a stale view: creates that keep succeeding because something removes what they made end the view as a loop; a create with generateName does not', async (t) => {
  const { cluster, proxy } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const mark = proxy.primitives.triggers.markChange({ key: 'ConfigMap/default/a', change: 'create', occurrence: 1 });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' } } });
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  proxy.startNewEpoch();
  const view = proxy.primitives.staleViews.serve(mark.resourceVersion!);
  let loop: { round: number; churn: boolean } | undefined;
  void view.retrying.then((l) => (loop = l));
  const controller = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  // A controller's round on the view: make its child, which something else (a garbage collector) removes.
  for (let round = 1; round <= 2; round++) {
    await controller.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'child' } } });
    await direct.deleteNamespacedConfigMap({ name: 'child', namespace: 'default' });
    // A new object each time (generateName) is a write that stays: not churn, and the count starts again.
    await controller.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'event-' } } });
  }
  for (let round = 1; round <= 2; round++) {
    await controller.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'child' } } });
    await direct.deleteNamespacedConfigMap({ name: 'child', namespace: 'default' });
    t.is(loop, undefined, `not yet a loop after ${round} create(s) since the last write that stayed`);
  }
  await controller.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'child' } } });
  await waitFor('the loop', () => loop !== undefined);
  t.deepEqual(loop, { round: 1, churn: true });
});

test('a view right before a change: the mark is the resourceVersion just before it, and the restarted informer sees the state before it', async (t) => {
  const { cluster, proxy } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/s';
  const mark = proxy.primitives.triggers.markChange(
    { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
    { before: true },
  );
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'other' }, data: { v: '1' } } });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 's' }, data: { v: '1' } } });
  const v2 = await direct.patchNamespacedConfigMap({ name: 's', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the mark', () => mark.resourceVersion !== undefined);
  t.is(Number(mark.resourceVersion), Number(v2.metadata!.resourceVersion) - 1);

  proxy.primitives.holdController();
  proxy.startNewEpoch();
  proxy.incarnation = 2;
  const view = proxy.primitives.staleViews.serve(mark.resourceVersion!);
  const restarted = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await waitFor('the restarted informer to list', () => 's' in restarted.cache());
  t.deepEqual(restarted.cache(), { other: '1', s: '1' }, 'before release: everything before the update, not the update');
  view.release();
  await waitFor('after release: caught up', () => restarted.cache().s === '2');
});
