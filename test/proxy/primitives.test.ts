/**
 * The smaller fault primitives with a real client: disconnect (graceful vs reset), delay, a change
 * trigger that holds the controller before it sees the change, and the Lease release.
 */
import http from 'node:http';
import test from 'ava';
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigOf, proxyAuth, sleep, startConfigMapInformer, startRecordedProxy, waitFor } from './helpers.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

test('graceful disconnect of watches: the informer re-watches from its last resourceVersion without relisting and misses nothing', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  const a = await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a' }, data: { v: '1' } } });
  await waitFor('a', () => informer.cache().a === '1');
  const { streams } = proxy.primitives.connections.disconnect({ target: 'watches', mode: 'graceful' });
  t.is(streams.length, 1);
  await direct.patchNamespacedConfigMap({ name: 'a', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the change after the disconnect', () => informer.cache().a === '2');
  const watches = trace.ofType('request').filter((r) => r.verb === 'watch');
  t.is(watches.length, 2);
  t.is(watches[1]!.query.resourceVersion, a.metadata!.resourceVersion!, 're-watch from the last resourceVersion seen');
  t.is(trace.ofType('request').filter((r) => r.verb === 'list').length, 1, 'no relist');
  t.regex(trace.ofType('stream-close')[0]!.reason ?? '', /closed the stream \(disconnect fault\)/);
  t.deepEqual(informer.errors, []);
  t.like(trace.ofType('fault').at(-1), { fault: 'disconnect', phase: 'applied', streams });
});

test('reset of watches: client-node reports the broken stream as an informer error (its informers then stop: the app must restart them)', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'r' }, data: { v: '1' } } });
  await waitFor('r', () => informer.cache().r === '1');
  proxy.primitives.connections.disconnect({ target: 'watches', mode: 'reset' });
  await waitFor('the informer error', () => informer.errors.length > 0);
  await sleep(200);
  t.is(trace.ofType('request').filter((r) => r.verb === 'watch').length, 1, 'no re-watch after a reset');
  await waitFor('the upstream watch to be aborted', () => proxy.upstreamOpenCount() === 0);
});

test('graceful disconnect of connections closes idle keep-alive connections and ends streams; the client reconnects', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' }, data: { v: '1' } } });
  await waitFor('c', () => informer.cache().c === '1');
  const { connections } = proxy.primitives.connections.disconnect({ target: 'connections', mode: 'graceful' });
  t.true(connections >= 1);
  await direct.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the change after reconnecting', () => informer.cache().c === '2');
  t.deepEqual(informer.errors, []);
  t.is(trace.ofType('request').filter((r) => r.verb === 'watch').length, 2);
});

test('a delay applies to its request class only', async (t) => {
  const { cluster, proxy } = await startRecordedProxy(t);
  const api = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await kubeConfigOf(cluster.kubeconfigYaml())
    .makeApiClient(CoreV1Api)
    .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'd' } } });
  await api.readNamespacedConfigMap({ name: 'd', namespace: 'default' }); // warm up discovery and connections
  // A delayed request takes at least the delay: a lower bound, which a loaded machine only adds to
  // (less 5 ms: timers may fire a millisecond early against Date.now).
  const short = proxy.primitives.connections.addDelay({ verbs: ['get'], kind: 'ConfigMap' }, 300);
  const started = Date.now();
  await api.readNamespacedConfigMap({ name: 'd', namespace: 'default' });
  t.true(Date.now() - started >= 295, `a delayed GET took ${Date.now() - started} ms`);
  short.remove();

  // Which requests a delay holds, by the order of events: under a delay longer than any test, a GET
  // waits while other requests are answered, and after remove() a new GET goes through.
  const long = proxy.primitives.connections.addDelay({ verbs: ['get'], kind: 'ConfigMap' }, 600_000);
  let answered = false;
  const held = http.get(`${proxy.url}/api/v1/namespaces/default/configmaps/d`, { headers: proxyAuth(proxy) }, (res) => {
    res.resume();
    answered = true;
  });
  held.on('error', () => undefined);
  t.teardown(() => held.destroy());
  await waitFor('the held GET to reach the proxy', () => proxy.activity().inFlight === 1);
  await api.listNamespacedConfigMap({ namespace: 'default' });
  await api.readNamespacedSecret({ name: 'none', namespace: 'default' }).catch(() => undefined);
  t.false(answered, 'the GET of a ConfigMap waits while a LIST and a GET of another kind are answered');
  long.remove();
  await api.readNamespacedConfigMap({ name: 'd', namespace: 'default' });
  t.false(answered, 'a GET admitted under the delay keeps it; one sent after remove() is answered while it waits');
  t.is(proxy.activity().inFlight, 1);
});

test('a change trigger fires from the cluster view before any controller stream delivers the change', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  let fired = 0;
  const armed = proxy.primitives.triggers.arm(
    { change: { key: 'ConfigMap/default/t', change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 } },
    () => {
      fired++;
      proxy.primitives.holdController();
    },
  );
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 't' }, data: { v: '1' } } });
  await waitFor('t', () => informer.cache().t === '1');
  await direct.patchNamespacedConfigMap({ name: 't', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the trigger', () => armed.fired);
  await sleep(300);
  t.is(fired, 1);
  t.is(informer.cache().t, '1', 'the informer never got the change that fired the trigger');
  t.false(trace.ofType('watch-event').some((e) => e.key === 'ConfigMap/default/t' && e.eventType === 'MODIFIED'));
});

test('releaseLeaderElection deletes the Leases the controller wrote, with the proxy credentials', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const leases = kubeConfigOf(proxy.kubeconfigYaml()).makeApiClient(CoordinationV1Api);
  await leases.createNamespacedLease({
    namespace: 'default',
    body: { metadata: { name: 'my-operator-leader' }, spec: { holderIdentity: 'pod-1', leaseDurationSeconds: 15 } },
  });
  await leases
    .replaceNamespacedLease({
      name: 'my-operator-leader',
      namespace: 'default',
      body: { metadata: { name: 'my-operator-leader' }, spec: { holderIdentity: 'pod-1', leaseDurationSeconds: 15, renewTime: new Date() as unknown as Date } },
    })
    .catch(() => undefined);
  t.deepEqual(proxy.leaderElectionRecords(), ['Lease/default/my-operator-leader']);
  proxy.startNewEpoch(); // the controller is gone
  t.deepEqual(await proxy.releaseLeaderElection(), ['Lease/default/my-operator-leader']);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoordinationV1Api);
  await t.throwsAsync(direct.readNamespacedLease({ name: 'my-operator-leader', namespace: 'default' }), { any: true });
  t.like(trace.ofType('fault').at(-1), { fault: 'lease-release', phase: 'applied', key: 'Lease/default/my-operator-leader' });
});

test('change triggers and marks armed late count the changes the cluster view saw before (as the planner counts the whole cluster trace)', async (t) => {
  const { cluster, proxy, recorder } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'early' }, data: { v: '1' } } });
  await direct.patchNamespacedConfigMap({ name: 'early', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor(
    'the recorder',
    () => recorder.current('ConfigMap/default/early')?.data !== undefined && (recorder.current('ConfigMap/default/early')!.data as { v: string }).v === '2',
  );
  // Created by the cluster itself before the proxy even started.
  const kubernetes = proxy.primitives.triggers.markChange({ key: 'Service/default/kubernetes', change: 'create', occurrence: 1 });
  t.truthy(kubernetes.resourceVersion);
  let fired = 0;
  proxy.primitives.triggers.arm({ change: { key: 'ConfigMap/default/early', change: 'update', occurrence: 1 } }, () => fired++);
  t.is(fired, 1, 'fires at once: its change already happened');
  const second = proxy.primitives.triggers.arm({ change: { key: 'ConfigMap/default/early', change: 'update', occurrence: 2 } }, () => fired++);
  t.false(second.fired);
  await direct.patchNamespacedConfigMap({ name: 'early', namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('the 2nd update', () => second.fired);
  t.is(fired, 2);
});
