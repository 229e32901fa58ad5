/**
 * Container faults of the simulated kubelet (pod-crash plans): a crash loop (restartCount up at each
 * back-off, waiting in CrashLoopBackOff, lastState terminated with an error, Ready False, BackOff
 * warnings) and an unready window, each recovering at the heal with its restart count kept.
 */
import test from 'ava';
import type * as k8s from '@kubernetes/client-node';
import { container, eventually, isReady, startSimCluster } from './helpers.js';

async function runningPod(sim: Awaited<ReturnType<typeof startSimCluster>>, name: string): Promise<k8s.V1Pod> {
  await sim.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name }, spec: { containers: [container('app'), container('sidecar')] } } });
  return eventually(`${name} Running and Ready`, async () => {
    const p = await sim.core.readNamespacedPod({ name, namespace: 'default' });
    return isReady(p) ? p : undefined;
  });
}

const read = (sim: Awaited<ReturnType<typeof startSimCluster>>, name: string) => sim.core.readNamespacedPod({ name, namespace: 'default' });

test('crash-loop: the containers exit with an error and restart with back-off until the heal, then run and are ready with their restart count', async (t) => {
  const sim = await startSimCluster(t, { crashBackOffMs: 40 });
  const before = await runningPod(sim, 'p');
  const faults = sim.cluster.containerFaults!;
  t.true(faults.setContainerFault('default', 'p', 'crash-loop'), 'the pod runs on a simulated node');

  const crashed = await eventually('the first crash', async () => {
    const p = await read(sim, 'p');
    return p.status?.containerStatuses?.[0]?.restartCount === 1 ? p : undefined;
  });
  t.is(crashed.status?.phase, 'Running', 'a crash-looping pod stays Running');
  t.like(
    crashed.status?.conditions?.find((c) => c.type === 'Ready'),
    { status: 'False', reason: 'ContainersNotReady' },
  );
  for (const c of crashed.status!.containerStatuses!) {
    t.is(c.state?.waiting?.reason, 'CrashLoopBackOff');
    t.regex(c.state?.waiting?.message ?? '', new RegExp(`^back-off 0s restarting failed container=${c.name} pod=p_default\\(${before.metadata!.uid}\\)$`));
    t.like(c.lastState?.terminated, { exitCode: 1, reason: 'Error' });
    t.false(c.ready);
  }
  // The back-off runs out and the restarted container crashes again, more than once.
  await eventually('more restarts after the back-off', async () => ((await read(sim, 'p')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 3);
  const events = await sim.core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=p' });
  t.true(
    events.items.some(
      (e) => e.reason === 'BackOff' && e.type === 'Warning' && /^Back-off restarting failed container app in pod p_default/.test(e.message ?? ''),
    ),
    JSON.stringify(events.items.map((e) => [e.reason, e.message])),
  );

  faults.setContainerFault('default', 'p', undefined);
  const healed = await eventually('ready again', async () => {
    const p = await read(sim, 'p');
    return isReady(p) ? p : undefined;
  });
  const restarts = healed.status!.containerStatuses!.map((c) => c.restartCount);
  t.true(
    restarts.every((n) => n >= 3),
    `restartCount kept: ${restarts.join(', ')}`,
  );
  for (const c of healed.status!.containerStatuses!) {
    t.truthy(c.state?.running, 'running again');
    t.true(c.ready);
    t.like(c.lastState?.terminated, { exitCode: 1 });
  }
  // Healed for good: no crash comes after.
  await eventually('the pod stays ready', async () => isReady(await read(sim, 'p')));
  t.is((await read(sim, 'p')).status?.containerStatuses?.[0]?.restartCount, restarts[0]);
});

test('unready: the containers keep running but the pod is not Ready until the heal; nothing restarts', async (t) => {
  const sim = await startSimCluster(t);
  const before = await runningPod(sim, 'q');
  const startedAt = before.status!.containerStatuses![0]!.state!.running!.startedAt;
  const faults = sim.cluster.containerFaults!;
  faults.setContainerFault('default', 'q', 'unready');
  const unready = await eventually('unready', async () => {
    const p = await read(sim, 'q');
    return p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False' ? p : undefined;
  });
  t.is(unready.status?.phase, 'Running');
  for (const c of unready.status!.containerStatuses!) {
    t.false(c.ready);
    t.is(c.restartCount, 0);
    t.deepEqual(c.state?.running?.startedAt, startedAt);
  }
  faults.setContainerFault('default', 'q', undefined);
  const healed = await eventually('ready again', async () => {
    const p = await read(sim, 'q');
    return isReady(p) ? p : undefined;
  });
  t.deepEqual(
    healed.status!.containerStatuses!.map((c) => [c.ready, c.restartCount]),
    [
      [true, 0],
      [true, 0],
    ],
  );
  t.false(faults.setContainerFault('default', 'absent', 'unready'), 'a pod no simulated kubelet runs cannot be faulted');
});

test("podReadiness 'probe': a container restarted after a crash runs unready until its readiness probe's initial delay has passed again", async (t) => {
  const sim = await startSimCluster(t, { crashBackOffMs: 40, podReadiness: 'probe' });
  const probed = { ...container('app'), readinessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 1 } };
  await sim.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'r' }, spec: { containers: [probed] } } });
  await eventually('ready after its first delay', async () => isReady(await read(sim, 'r')), 10_000, sim.log);
  const faults = sim.cluster.containerFaults!;
  faults.setContainerFault('default', 'r', 'crash-loop');
  await eventually('crashed', async () => ((await read(sim, 'r')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
  faults.setContainerFault('default', 'r', undefined);
  // The kubelet's log says when the container ran again unready and when it turned ready: in that order.
  const restarted = await eventually(
    'running again, unready',
    async () => sim.log.find((l) => l.includes('default/r: containers running again (fault healed), ready after')),
    10_000,
    sim.log,
  );
  await eventually('ready again', async () => isReady(await read(sim, 'r')), 10_000, sim.log);
  const ready = sim.log.findIndex((l, i) => i > sim.log.indexOf(restarted) && l.includes("default/r ready (its readiness probe's initial delay over)"));
  t.true(ready > sim.log.indexOf(restarted), sim.log.join('\n'));
  t.false(
    sim.log.some((l) => l.includes('default/r: containers running and ready again (fault healed)')),
    'not ready at once, as without a readiness delay',
  );
});
