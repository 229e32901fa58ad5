/**
 * The simulated disruption controller: a PodDisruptionBudget's status follows its pods, so the
 * eviction subresource allows what kube-controller-manager's budget allows (kubectl drain of one of
 * three healthy StatefulSet pods under maxUnavailable 1) and refuses the next while that one is away.
 */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { eventually, isReady, podTemplate, startSimCluster } from './helpers.js';

test('a budget counts its healthy pods: one eviction of three under maxUnavailable 1 goes through, a second waits for the first pod to be back', async (t) => {
  const sim = await startSimCluster(t);
  const policy = sim.kc.makeApiClient(k8s.PolicyV1Api);
  const faults = sim.cluster.containerFaults!;
  await sim.apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'db' },
      spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: podTemplate({ app: 'db' }) },
    },
  });
  await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: { metadata: { name: 'db' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'db' } } } },
  });
  const budget = () => policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: 'default' });
  const settled = await eventually('the budget counts three healthy pods', async () => {
    const b = await budget();
    return b.status?.currentHealthy === 3 ? b : undefined;
  });
  t.like(settled.status, { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1, observedGeneration: 1 });
  t.like(
    settled.status?.conditions?.find((c) => c.type === 'DisruptionAllowed'),
    { status: 'True', reason: 'SufficientPods' },
  );

  const uid = (await sim.core.readNamespacedPod({ name: 'db-0', namespace: 'default' })).metadata!.uid;
  t.is(await faults.removePod('default', 'db-0', 'evict'), undefined);
  t.regex((await faults.removePod('default', 'db-1', 'evict')) ?? '', /429.*disruption budget/);

  await eventually('db-0 back and the budget allowing one disruption again', async () => {
    const p = await sim.core.readNamespacedPod({ name: 'db-0', namespace: 'default' }).catch(() => undefined);
    if (!p || p.metadata!.uid === uid || !isReady(p)) return undefined;
    const b = await budget();
    return b.status?.disruptionsAllowed === 1 && b.status.currentHealthy === 3 && b.status.disruptedPods === undefined;
  });
  t.is(await faults.removePod('default', 'db-1', 'evict'), undefined);
});

test('a budget whose pod has no controller allows no disruption under maxUnavailable, as the real controller fails safe', async (t) => {
  const sim = await startSimCluster(t);
  const policy = sim.kc.makeApiClient(k8s.PolicyV1Api);
  await sim.core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'lone', labels: { app: 'lone' } }, spec: podTemplate({ app: 'lone' }).spec! },
  });
  await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: { metadata: { name: 'lone' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'lone' } } } },
  });
  const failed = await eventually('the budget fails safe', async () => {
    const b = await policy.readNamespacedPodDisruptionBudget({ name: 'lone', namespace: 'default' });
    return b.status?.conditions?.find((c) => c.type === 'DisruptionAllowed' && c.reason === 'SyncFailed') ? b : undefined;
  });
  t.like(failed.status, { disruptionsAllowed: 0, observedGeneration: 1 });
  t.regex(failed.status?.conditions?.[0]?.message ?? '', /found no controllers for pod "lone"/);
});
