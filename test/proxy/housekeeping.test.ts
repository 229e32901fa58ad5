import test from 'ava';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigOf, startCluster, startProxy, waitFor } from './helpers.js';

const LEADER = 'control-plane.alpha.kubernetes.io/leader';

test('leader-election renewals through the proxy are not activity: settle can see a leading controller go quiet', async (t) => {
  const cluster = await startCluster(t);
  const { proxy, trace } = await startProxy(t, cluster.url);
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
