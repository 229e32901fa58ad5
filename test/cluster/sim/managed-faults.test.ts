/**
 * The simulation's faults on the managed system beyond containers (node-not-ready, pod-evict and
 * pvc-fault plans): a node outage as the node lifecycle and taint eviction controllers handle it, a
 * pod removed by someone else and recreated by its owner, and a claim that stays Pending, loses its
 * volume or has its resize refused, each healing as its component would.
 */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { container, eventually, isReady, mergePatch, podTemplate, startSimCluster, type SimCluster } from './helpers.js';

const read = (sim: SimCluster, name: string) => sim.core.readNamespacedPod({ name, namespace: 'default' });
const readOrGone = (sim: SimCluster, name: string) => read(sim, name).catch(() => undefined);
const cond = (obj: { status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } }, type: string) =>
  obj.status?.conditions?.find((c) => c.type === type);

async function readyPod(sim: SimCluster, name: string, tolerations: k8s.V1Toleration[] = []): Promise<k8s.V1Pod> {
  await sim.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name }, spec: { containers: [container()], tolerations } } });
  return eventually(`${name} ready`, async () => {
    const p = await read(sim, name);
    return isReady(p) ? p : undefined;
  });
}

async function statefulSetPod(sim: SimCluster): Promise<k8s.V1Pod> {
  await sim.apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'db' },
      spec: { replicas: 1, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: podTemplate({ app: 'db' }) },
    },
  });
  return eventually('db-0 ready', async () => {
    const p = await readOrGone(sim, 'db-0');
    return p && isReady(p) ? p : undefined;
  });
}

test('a not-ready node is tainted, its pods turn unready and are evicted after the shortened toleration; the StatefulSet recreates its pod elsewhere; the heal clears it all', async (t) => {
  const sim = await startSimCluster(t, { nodes: ['node-1', 'node-2'] });
  const before = await statefulSetPod(sim);
  const node = before.spec!.nodeName!;
  const faults = sim.cluster.containerFaults!;
  t.is(faults.setNodeOutage(node, { mode: 'not-ready', evictAfterSeconds: 0.2 }), undefined);

  const tainted = await eventually('the node tainted', async () => {
    const n = await sim.core.readNode({ name: node });
    return (n.spec?.taints ?? []).length === 2 ? n : undefined;
  });
  t.deepEqual(
    tainted.spec!.taints!.map((x) => `${x.key}:${x.effect}`),
    ['node.kubernetes.io/not-ready:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute'],
  );
  t.like(cond(tainted, 'Ready'), { status: 'False', reason: 'KubeletNotReady' });

  const recreated = await eventually(
    'db-0 recreated on the other node and ready',
    async () => {
      const p = await readOrGone(sim, 'db-0');
      return p && p.metadata!.uid !== before.metadata!.uid && isReady(p) ? p : undefined;
    },
    5000,
    sim.log,
  );
  t.not(recreated.spec!.nodeName, node, 'the scheduler keeps away from the not-ready node');
  const events = await sim.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=db-0' });
  const reasons = events.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
  t.true(reasons.includes('Warning NodeNotReady Node is not ready'), reasons.join('\n'));
  t.true(reasons.includes('Normal TaintManagerEviction Marking for deletion Pod default/db-0'), reasons.join('\n'));

  faults.setNodeOutage(node, undefined);
  const healed = await eventually('the node ready, untainted', async () => {
    const n = await sim.core.readNode({ name: node });
    return cond(n, 'Ready')?.status === 'True' && !(n.spec?.taints ?? []).length ? n : undefined;
  });
  t.like(cond(healed, 'Ready'), { reason: 'KubeletReady' });
});

test("an unreachable node: its pods' conditions turn Unknown-driven unready; a pod evicted by the taint stays terminating while the kubelet is away, one tolerating for ever stays; the heal finishes both", async (t) => {
  const sim = await startSimCluster(t);
  const staysBefore = await readyPod(sim, 'stays', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]);
  const goes = await readyPod(sim, 'goes');
  t.deepEqual(
    goes.spec?.tolerations?.map((x) => x.tolerationSeconds),
    [300, 300],
    'the DefaultTolerationSeconds tolerations the fault shortens',
  );
  const faults = sim.cluster.containerFaults!;
  t.is(faults.setNodeOutage('node-1', { mode: 'unreachable', evictAfterSeconds: 0 }), undefined);

  const node = await eventually('node-1 Unknown and tainted', async () => {
    const n = await sim.core.readNode({ name: 'node-1' });
    return cond(n, 'Ready')?.status === 'Unknown' && (n.spec?.taints ?? []).length === 2 ? n : undefined;
  });
  t.like(cond(node, 'Ready'), { reason: 'NodeStatusUnknown' });
  t.true(
    (node.spec?.taints ?? []).some((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute' && x.timeAdded),
    JSON.stringify(node.spec),
  );
  const evicted = await eventually('goes marked for deletion', async () => {
    const p = await read(sim, 'goes');
    return p.metadata?.deletionTimestamp ? p : undefined;
  });
  t.like(cond(evicted, 'DisruptionTarget'), { status: 'True', reason: 'DeletionByTaintManager' });
  const stays = await eventually('stays unready', async () => {
    const p = await read(sim, 'stays');
    return cond(p, 'Ready')?.status === 'False' ? p : undefined;
  });
  t.is(cond(stays, 'ContainersReady')?.status, 'True', 'MarkPodsNotReady flips Ready alone');
  t.is(stays.metadata?.deletionTimestamp, undefined, 'a pod tolerating the taint for ever is not evicted');
  // The kubelet is away: the evicted pod is not stopped, so it is still there after the eviction took effect.
  t.truthy(await readOrGone(sim, 'goes'));

  faults.setNodeOutage('node-1', undefined);
  await eventually('goes deleted once the kubelet is back', async () => (await readOrGone(sim, 'goes')) === undefined, 5000, sim.log);
  const back = await eventually('stays ready again', async () => {
    const p = await read(sim, 'stays');
    return isReady(p) ? p : undefined;
  });
  t.deepEqual(
    back.status?.containerStatuses?.[0]?.state?.running?.startedAt,
    staysBefore.status?.containerStatuses?.[0]?.state?.running?.startedAt,
    'the containers ran on through the outage: the kubelet reports them ready, it does not start them again',
  );
  t.is(faults.setNodeOutage('node-9', { mode: 'unreachable' }), 'node-9 is not a simulated node of this cluster');
});

test('a pod evicted (eviction subresource) or deleted by someone else is recreated by its StatefulSet; a missing pod is said', async (t) => {
  const sim = await startSimCluster(t);
  const faults = sim.cluster.containerFaults!;
  let pod = await statefulSetPod(sim);
  for (const how of ['evict', 'delete'] as const) {
    t.is(await faults.removePod('default', 'db-0', how), undefined, how);
    const uid = pod.metadata!.uid;
    pod = await eventually(`db-0 recreated after the ${how}`, async () => {
      const p = await readOrGone(sim, 'db-0');
      return p && p.metadata!.uid !== uid && isReady(p) ? p : undefined;
    });
  }
  t.regex((await faults.removePod('default', 'nope', 'delete')) ?? '', /Pod default\/nope does not exist/);
  t.regex((await faults.removePod('default', 'nope', 'evict')) ?? '', /the eviction of Pod default\/nope failed/);
});

test('claims: one held Pending while another binds; a bound one Lost then Bound again; a resize refused with the resizer condition, then done at the heal', async (t) => {
  const sim = await startSimCluster(t, { volumeBindDelayMs: 200 });
  const faults = sim.cluster.containerFaults!;
  const claim = (name: string, storageClassName?: string) =>
    sim.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(storageClassName ? { storageClassName } : {}) },
      },
    });
  const readClaim = (name: string) => sim.core.readNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
  const phase = (name: string, want: string) => eventually(`${name} ${want}`, async () => ((await readClaim(name)).status?.phase === want ? true : undefined));

  await sim.kc.makeApiClient(k8s.StorageV1Api).createStorageClass({
    body: { metadata: { name: 'grow' }, provisioner: 'kperturb.dev/simulated-provisioner', allowVolumeExpansion: true },
  });
  await claim('held');
  t.is(faults.setClaimFault('default', 'held', 'pending'), undefined);
  await claim('free', 'grow');
  await phase('free', 'Bound');
  t.not((await readClaim('held')).status?.phase, 'Bound', 'the held claim did not bind while the other did');
  t.regex(faults.setClaimFault('default', 'free', 'pending') ?? '', /is bound already/);
  faults.setClaimFault('default', 'held', undefined);
  await phase('held', 'Bound');

  t.is(faults.setClaimFault('default', 'free', 'lost'), undefined);
  await phase('free', 'Lost');
  faults.setClaimFault('default', 'free', undefined);
  await phase('free', 'Bound');
  const lost = await sim.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=free' });
  t.true(lost.items.some((e) => e.type === 'Warning' && e.reason === 'ClaimLost'));

  t.is(faults.setClaimFault('default', 'free', 'resize-refused'), undefined);
  await sim.core.patchNamespacedPersistentVolumeClaim(
    { name: 'free', namespace: 'default', body: { spec: { resources: { requests: { storage: '2Gi' } } } } },
    mergePatch,
  );
  const refused = await eventually('the resize refused', async () => {
    const c = await readClaim('free');
    return cond(c, 'ControllerResizeError') ? c : undefined;
  });
  t.regex((cond(refused, 'ControllerResizeError') as { message?: string }).message ?? '', /^Failed to expand PV: /);
  t.is(refused.status?.allocatedResourceStatuses?.storage, 'ControllerResizeInfeasible');
  t.is(refused.status?.capacity?.storage, '1Gi');
  faults.setClaimFault('default', 'free', undefined);
  const grown = await eventually('the resize done at the heal', async () => {
    const c = await readClaim('free');
    return c.status?.capacity?.storage === '2Gi' ? c : undefined;
  });
  t.is(cond(grown, 'ControllerResizeError'), undefined);
  const pv = await sim.core.readPersistentVolume({ name: grown.spec!.volumeName! });
  t.is(pv.spec?.capacity?.storage, '2Gi');
});

test('a pod whose claim is held Pending is not scheduled (unbound immediate claim) and runs once the heal binds it', async (t) => {
  const sim = await startSimCluster(t);
  const faults = sim.cluster.containerFaults!;
  await sim.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  t.is(faults.setClaimFault('default', 'data', 'pending'), undefined);
  await sim.core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'p' }, spec: { containers: [container()], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] } },
  });
  const pending = await eventually('the pod unschedulable: its claim is not bound', async () => {
    const p = await read(sim, 'p');
    const c = cond(p, 'PodScheduled') as { status: string; message?: string } | undefined;
    return c?.status === 'False' && c.message?.includes('pod has unbound immediate PersistentVolumeClaims') ? p : undefined;
  });
  t.is(pending.spec?.nodeName, undefined);
  t.not(pending.status?.phase, 'Running');
  faults.setClaimFault('default', 'data', undefined);
  const running = await eventually('the pod running once the claim is bound', async () => {
    const p = await read(sim, 'p');
    return isReady(p) ? p : undefined;
  });
  t.is(running.spec?.nodeName, 'node-1');
});
