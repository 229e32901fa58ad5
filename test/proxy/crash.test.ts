import test from 'ava';
import { CoreV1Api, KubeConfig, PatchStrategy, Watch, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import type { CrashTriggered } from '../../proxy/index.js';
import { kubeConfigOf, sleep, startCluster, startProxy, waitFor } from './helpers.js';

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

test('crash-after-write holds the controller right after the matching write and nothing else gets through', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const exists = async (name: string) =>
    direct.readNamespacedConfigMap({ name, namespace: 'default' }).then(
      (cm) => cm,
      () => undefined,
    );

  let triggered: CrashTriggered | undefined;
  proxy.primitives.holdAfterWrite({ verb: 'create', key: 'ConfigMap/default/a', occurrence: 1 }, (info) => (triggered = info));

  // The controller: a client-node client through the proxy, and a watch it should stop hearing from.
  const viaProxy = kubeConfigOf(proxy.kubeconfigYaml());
  const api = viaProxy.makeApiClient(CoreV1Api);
  const watched: string[] = [];
  const watch = await new Watch(viaProxy).watch(
    '/api/v1/namespaces/default/configmaps',
    {},
    (type: string, obj: V1ConfigMap) => watched.push(`${type} ${obj.metadata?.name}`),
    () => {},
  );
  t.teardown(() => watch.abort());
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'before' } } });
  await waitFor('the watch to deliver', () => watched.includes('ADDED before'));
  const createA = settle(api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { v: '1' } } }));
  await waitFor('the trigger', () => triggered !== undefined);
  const createB = settle(api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } }));
  const patchA = settle(
    api.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: { data: { v: '2' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
  );
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'during' } } });
  await sleep(300);
  t.false(watched.includes('ADDED during'), 'watch events are held');

  const a = await exists('a');
  t.truthy(a, 'the create of a reached the server');
  t.deepEqual(a!.data, { v: '1' }, 'the patch of a was held');
  t.is(await exists('b'), undefined, 'the create of b was held');
  let aSettled = false;
  void createA.then(() => (aSettled = true));
  await sleep(0);
  t.false(aSettled, "a's response was not delivered");

  const requests = trace.ofType('request');
  const createAReq = requests.find((r) => r.verb === 'create' && r.key === 'ConfigMap/default/a')!;
  t.truthy(createAReq);
  t.is(triggered!.requestId, createAReq.id);
  t.is(triggered!.description, 'creates ConfigMap/default/a (1st time)');
  t.false(
    requests.some((r) => r.key === 'ConfigMap/default/b'),
    'b was never forwarded',
  );
  const response = trace.ofType('response').find((r) => r.id === createAReq.id)!;
  t.is(response.status, 201);
  const fault = trace.ofType('fault');
  t.is(fault.length, 1);
  t.like(fault[0], { fault: 'crash-after-write', phase: 'triggered', requestId: createAReq.id });
  t.true(fault[0]!.seq > response.seq, 'the fault is recorded after the write completed');
  t.true(proxy.activity().inFlight >= 3);
  t.is(proxy.activity().openWatches, 1);
  const watchReq = requests.find((r) => r.verb === 'watch')!;
  t.false(
    trace.ofType('watch-event').some((e) => e.id === watchReq.id && e.key === 'ConfigMap/default/during'),
    'held events are not in the trace',
  );

  // The coordinator kills the controller, then starts a new epoch.
  proxy.startNewEpoch();
  const outcomes = await Promise.all([createA, createB, patchA]);
  t.true(
    outcomes.every((o) => !o.ok),
    'the old connections were cut',
  );
  await sleep(100);
  t.is(await exists('b'), undefined, 'held work was dropped, not replayed');
  t.deepEqual((await exists('a'))!.data, { v: '1' });
  await waitFor('old exchanges to finish', () => proxy.activity().inFlight === 0 && proxy.activity().openWatches === 0);
  await waitFor('old upstream requests to be aborted', () => proxy.upstreamOpenCount() === 0);
  t.regex(trace.ofType('stream-close').find((e) => e.id === watchReq.id)?.reason ?? '', /epoch ended/);

  // The restarted controller: a fresh client (straight from the proxy's kubeconfig) works normally.
  proxy.incarnation = 2;
  const kc = new KubeConfig();
  kc.loadFromString(proxy.kubeconfigYaml());
  const api2 = kc.makeApiClient(CoreV1Api);
  await api2.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'b' } } });
  const patched = await api2.patchNamespacedConfigMap(
    { name: 'a', namespace: 'default', body: { data: { v: '2' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  t.deepEqual(patched.data, { v: '2' });
  t.truthy(await exists('b'));
  const later = trace.ofType('request').filter((r) => r.incarnation === 2);
  t.deepEqual(
    later.map((r) => `${r.verb} ${r.key}`),
    ['create ConfigMap/default/b', 'patch ConfigMap/default/a'],
  );
  t.is(trace.ofType('fault').length, 1, 'a trigger fires once');
});

test('occurrences count successful non-dry-run writes over all incarnations, and generateName creates match on the folded key', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const api = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  let fired: CrashTriggered | undefined;
  proxy.primitives.holdAfterWrite({ verb: 'patch', key: 'ConfigMap/default/c', occurrence: 3 }, (info) => (fired = info));

  await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' } } });
  await api.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { n: '1' } } }, merge);
  await api.patchNamespacedConfigMap({ name: 'c', namespace: 'default', dryRun: 'All', body: { data: { n: 'dry' } } }, merge);
  await t.throwsAsync(api.patchNamespacedConfigMap({ name: 'missing', namespace: 'default', body: { data: {} } }, merge));
  proxy.startNewEpoch();
  proxy.incarnation = 2;
  const api2 = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await api2.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { n: '2' } } }, merge);
  t.is(fired, undefined, 'dry runs and failures do not count');
  const third = settle(api2.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { n: '3' } } }, merge));
  await waitFor('the trigger', () => fired !== undefined);
  t.is(trace.ofType('request').find((r) => r.id === fired!.requestId)?.incarnation, 2);
  proxy.startNewEpoch();
  t.false((await third).ok);

  // generateName: the request has no key; the write counts under the created object's key, folded
  // as the planner folds it (`gen-*#1`, the 1st object created with that prefix); a later create
  // of the same name is that object's 2nd create.
  let genFired: CrashTriggered | undefined;
  const api3 = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const first = await api3.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
  const name = first.metadata!.name!;
  const createReq = trace.ofType('request').find((r) => r.verb === 'create' && r.key === undefined);
  t.truthy(createReq, 'a generateName create has no key in its request event');
  t.is(trace.ofType('response').find((r) => r.id === createReq!.id)?.object?.metadata?.name, name);
  proxy.primitives.holdAfterWrite({ verb: 'create', key: 'ConfigMap/default/gen-*#1', occurrence: 2 }, (info) => (genFired = info));
  await api3.deleteNamespacedConfigMap({ name, namespace: 'default' });
  const again = settle(api3.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } }));
  await waitFor('the 2nd create of the generated name to fire', () => genFired !== undefined);
  t.is(genFired!.description, 'creates ConfigMap/default/gen-*#1 (2nd time)');
  t.is(trace.ofType('request').find((r) => r.id === genFired!.requestId)?.key, `ConfigMap/default/${name}`);
  proxy.startNewEpoch();
  t.false((await again).ok);
});
