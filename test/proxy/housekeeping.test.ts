import test from 'ava';
import { CoordinationV1Api, CoreV1Api, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigOf, startCluster, startProxy, waitFor } from './helpers.js';

const LEADER = 'control-plane.alpha.kubernetes.io/leader';

test('leader-election renewals through the proxy are not activity: settle can see a leading controller go quiet', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const core = kc.makeApiClient(CoreV1Api);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const record = JSON.stringify({ holderIdentity: 'me', leaseDurationSeconds: 15 });
  // controller-runtime's `configmapsleases` lock: a ConfigMap with the leader annotation and a Lease.
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'op-leader', annotations: { [LEADER]: record } } } });
  await leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'op-leader' }, spec: { holderIdentity: 'me' } } });
  const before = proxy.activity().lastActivityAt;
  for (let i = 0; i < 3; i++) {
    const cm = await core.readNamespacedConfigMap({ name: 'op-leader', namespace: 'default' });
    await core.replaceNamespacedConfigMap({ name: 'op-leader', namespace: 'default', body: cm });
    const lease = await leases.readNamespacedLease({ name: 'op-leader', namespace: 'default' });
    await leases.replaceNamespacedLease({ name: 'op-leader', namespace: 'default', body: lease });
  }
  await waitFor('the renewals answered', () => proxy.activity().inFlight === 0 && trace.ofType('response').length >= 14);
  t.is(proxy.activity().lastActivityAt, before, 'renewing the leader records (and reading them) did not move the last activity');
  t.is(trace.ofType('request').length, 14, 'they were all recorded in the trace');
  // Reading or writing anything else is activity.
  await core.readNamespace({ name: 'default' });
  t.true(proxy.activity().lastActivityAt > before);
});

test('a watched leader-election record changing is not activity either', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster);
  const viaProxy = kubeConfigOf(proxy.kubeconfigYaml());
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const controller = await new Watch(viaProxy).watch(
    '/api/v1/configmaps',
    {},
    () => {},
    () => {},
  );
  t.teardown(() => controller.abort());
  await waitFor('the stream to open', () => trace.ofType('stream-open').length === 1);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'op-leader', annotations: { [LEADER]: '{}' } } } });
  await waitFor('the ADDED event delivered', () => trace.ofType('watch-event').some((e) => e.key === 'ConfigMap/default/op-leader'));
  const before = proxy.activity().lastActivityAt;
  for (let i = 1; i <= 3; i++) {
    await direct.patchNamespacedConfigMap(
      { name: 'op-leader', namespace: 'default', body: { metadata: { annotations: { [LEADER]: `{"renew":${i}}` } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
  await waitFor('three renewals delivered', () => trace.ofType('watch-event').filter((e) => e.key === 'ConfigMap/default/op-leader').length === 4);
  t.is(proxy.activity().lastActivityAt, before);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'work' } } });
  await waitFor('the ADDED event delivered', () => trace.ofType('watch-event').some((e) => e.key === 'ConfigMap/default/work'));
  t.true(proxy.activity().lastActivityAt > before);
});
