/** Nodes, the scheduler and the kubelets: pod lifecycle from creation to deletion. */
import test, { type ExecutionContext } from 'ava';
import { Watch } from '@kubernetes/client-node';
import type * as k8s from '@kubernetes/client-node';
import { container, eventually, getJson, isReady, mergePatch, startSimCluster } from './helpers.js';

/** Every state of the pods of `default` a watch delivers, in order, until the test ends. */
async function watchPods(t: ExecutionContext, kc: k8s.KubeConfig): Promise<k8s.V1Pod[]> {
  const states: k8s.V1Pod[] = [];
  const req = await new Watch(kc).watch(
    '/api/v1/namespaces/default/pods',
    {},
    (_type, pod: k8s.V1Pod) => states.push(pod),
    () => undefined,
  );
  t.teardown(() => req.abort());
  return states;
}

test('simulated nodes are registered and Ready', async (t) => {
  const { core } = await startSimCluster(t, { nodes: ['worker-a', 'worker-b'] });
  const nodes = await core.listNode();
  t.deepEqual(nodes.items.map((n) => n.metadata!.name).sort(), ['worker-a', 'worker-b']);
  for (const n of nodes.items) {
    t.is(n.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    t.is(n.metadata?.labels?.['kubernetes.io/hostname'], n.metadata!.name);
    t.truthy(n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address);
  }
});

test('a pod is bound to a node, then Running and Ready with its IPs and container statuses', async (t) => {
  const { core, kc, log } = await startSimCluster(t, { podStartDelayMs: 80 });
  const states = await watchPods(t, kc);
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'p' }, spec: { containers: [container('a'), container('b', 'busybox:1.36')] } },
  });
  const running = await eventually(
    'Running and Ready',
    async () => {
      const p = await core.readNamespacedPod({ name: 'p', namespace: 'default' });
      return isReady(p) ? p : undefined;
    },
    5000,
    log,
  );
  await eventually('the watch caught up', async () => states.some(isReady));
  const bound = states.find((p) => p.spec?.nodeName);
  t.is(bound?.spec?.nodeName, 'node-1');
  t.like(
    bound?.status?.conditions?.find((c) => c.type === 'PodScheduled'),
    { status: 'True' },
    'binding sets PodScheduled',
  );
  const pending = states.find((p) => p.status?.hostIP && !isReady(p));
  t.is(pending?.status?.phase, 'Pending', 'first the kubelet reports the containers being created');
  t.is(pending?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  t.falsy(pending?.status?.podIP);
  t.regex(running.status!.podIP!, /^10\.244\.0\.\d+$/);
  t.deepEqual(
    running.status?.podIPs?.map((x) => x.ip),
    [running.status!.podIP!],
  );
  t.truthy(running.status?.startTime);
  t.deepEqual(
    running.status!.conditions!.map((c) => [c.type, c.status]),
    [
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ],
  );
  t.deepEqual(
    running.status!.containerStatuses!.map((c) => [c.name, c.ready, c.started, !!c.state?.running]),
    [
      ['a', true, true, true],
      ['b', true, true, true],
    ],
  );
});

test('pods spread over the nodes and honour nodeSelector', async (t) => {
  const { core, log } = await startSimCluster(t, { nodes: ['n1', 'n2'] });
  for (const name of ['a', 'b']) await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name }, spec: { containers: [container()] } } });
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'pinned' }, spec: { containers: [container()], nodeSelector: { 'kubernetes.io/hostname': 'n2' } } },
  });
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'nowhere' }, spec: { containers: [container()], nodeSelector: { disk: 'ssd' } } },
  });
  const placed = await eventually(
    'three pods scheduled',
    async () => {
      const list = await core.listNamespacedPod({ namespace: 'default' });
      const byName = Object.fromEntries(list.items.map((p) => [p.metadata!.name!, p]));
      return ['a', 'b', 'pinned'].every((n) => byName[n]?.spec?.nodeName) && byName.nowhere?.status?.conditions?.some((c) => c.reason === 'Unschedulable')
        ? byName
        : undefined;
    },
    5000,
    log,
  );
  t.not(placed.a!.spec!.nodeName, placed.b!.spec!.nodeName, 'two pods land on two nodes');
  t.is(placed.pinned!.spec!.nodeName, 'n2');
  t.falsy(placed.nowhere!.spec!.nodeName);
  t.like(
    placed.nowhere!.status!.conditions!.find((c) => c.type === 'PodScheduled'),
    { status: 'False', reason: 'Unschedulable' },
  );
});

test('deleting a running pod: it stays terminating for its grace period, then the kubelet removes it', async (t) => {
  // Containers that ignore SIGTERM: they stop only when the 1 s grace period is over.
  const { core, cluster, log } = await startSimCluster(t, { podStopDelayMs: 60_000 });
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'slow' }, spec: { terminationGracePeriodSeconds: 1, containers: [container()] } },
  });
  await eventually('running', async () => isReady(await core.readNamespacedPod({ name: 'slow', namespace: 'default' })), 5000, log);
  const started = Date.now();
  const marked = (await core.deleteNamespacedPod({ name: 'slow', namespace: 'default' })) as unknown as k8s.V1Pod;
  t.truthy(marked.metadata?.deletionTimestamp, 'a running pod is deleted gracefully');
  t.is(marked.metadata?.deletionGracePeriodSeconds, 1);
  await new Promise((r) => setTimeout(r, 400));
  t.truthy(await getJson(cluster, '/api/v1/namespaces/default/pods/slow'), 'still there within the grace period');
  await eventually('removed after the grace period', async () => !(await getJson(cluster, '/api/v1/namespaces/default/pods/slow')), 5000, log);
  t.true(Date.now() - started >= 900, `removed after ${Date.now() - started} ms`);
});

test('a deleted pod with a finalizer is stopped by the kubelet but stays until the finalizer is removed', async (t) => {
  const { core, cluster, log } = await startSimCluster(t);
  await core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'held', finalizers: ['example.com/cleanup'] }, spec: { containers: [container()] } },
  });
  await eventually('running', async () => isReady(await core.readNamespacedPod({ name: 'held', namespace: 'default' })), 5000, log);
  await core.deleteNamespacedPod({ name: 'held', namespace: 'default' });
  const stopped = await eventually(
    'containers stopped and grace period zeroed',
    async () => {
      const p = await getJson(cluster, '/api/v1/namespaces/default/pods/held');
      return p?.metadata.deletionGracePeriodSeconds === 0 && p.status.phase === 'Succeeded' ? p : undefined;
    },
    5000,
    log,
  );
  t.truthy(stopped.metadata.deletionTimestamp);
  t.is(stopped.status.containerStatuses[0].state.terminated.reason, 'Completed');
  await new Promise((r) => setTimeout(r, 100));
  t.truthy(await getJson(cluster, '/api/v1/namespaces/default/pods/held'), 'the finalizer holds it');
  await core.patchNamespacedPod({ name: 'held', namespace: 'default', body: { metadata: { finalizers: null } } }, mergePatch);
  await eventually('gone once the finalizer is removed', async () => !(await getJson(cluster, '/api/v1/namespaces/default/pods/held')), 5000, log);
  t.pass();
});

test('a pod with restartPolicy Never runs to completion', async (t) => {
  const { core, log } = await startSimCluster(t, { podRunToCompletionMs: 100 });
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'once' }, spec: { restartPolicy: 'Never', containers: [container()] } } });
  const done = await eventually(
    'Succeeded',
    async () => {
      const p = await core.readNamespacedPod({ name: 'once', namespace: 'default' });
      return p.status?.phase === 'Succeeded' ? p : undefined;
    },
    5000,
    log,
  );
  t.like(done.status?.containerStatuses?.[0]?.state?.terminated, { exitCode: 0, reason: 'Completed' });
  t.like(
    done.status?.conditions?.find((c) => c.type === 'Ready'),
    { status: 'False', reason: 'PodCompleted' },
  );
});

test('a pod with restartPolicy Never and a probed container is a server: it keeps running', async (t) => {
  // nifikop runs each NiFi node in a bare pod with restartPolicy Never and readiness/liveness
  // probes, and replaces a pod whose container terminated: a simulated exit made it replace the
  // pod every half second. The probed pod is created first, so it would have completed first.
  const { core, log } = await startSimCluster(t, { podRunToCompletionMs: 100 });
  const probed = { ...container(), readinessProbe: { exec: { command: ['true'] } }, livenessProbe: { tcpSocket: { port: 8080 } } };
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'server' }, spec: { restartPolicy: 'Never', containers: [probed] } } });
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'task' }, spec: { restartPolicy: 'Never', containers: [container()] } } });
  await eventually(
    'the task Succeeded',
    async () => ((await core.readNamespacedPod({ name: 'task', namespace: 'default' })).status?.phase === 'Succeeded' ? true : undefined),
    5000,
    log,
  );
  const server = await core.readNamespacedPod({ name: 'server', namespace: 'default' });
  t.is(server.status?.phase, 'Running');
  t.truthy(server.status?.containerStatuses?.[0]?.state?.running);
});

test('a pod whose Secret or ConfigMap volume does not exist stays ContainerCreating until it does', async (t) => {
  // As the kubelet's volume manager: MountVolume.SetUp fails ("secret ... not found"), the
  // containers are not started; optional sources do not hold the pod (cass-operator's K8SSAND-1023
  // leaves a pod without its keystore Secret this way).
  const { core, log } = await startSimCluster(t);
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name: 'mounts' },
      spec: {
        containers: [container()],
        volumes: [
          { name: 'maybe', secret: { secretName: 'absent-but-optional', optional: true } },
          { name: 'certs', secret: { secretName: 'keystore' } },
          { name: 'conf', projected: { sources: [{ configMap: { name: 'settings' } }] } },
        ],
      },
    },
  });
  await new Promise((r) => setTimeout(r, 300));
  const waiting = await core.readNamespacedPod({ name: 'mounts', namespace: 'default' });
  t.is(waiting.status?.phase, 'Pending');
  t.is(waiting.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  const events = await eventually(
    'a FailedMount event',
    async () => {
      const list = await core.listNamespacedEvent({ namespace: 'default' });
      return list.items.some((e) => e.reason === 'FailedMount') ? list.items : undefined;
    },
    5000,
    log,
  );
  t.like(
    events.find((e) => e.reason === 'FailedMount'),
    { type: 'Warning', message: 'MountVolume.SetUp failed for volume "certs" : secret "keystore" not found' },
  );

  await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'keystore' } } });
  await new Promise((r) => setTimeout(r, 300));
  t.is((await core.readNamespacedPod({ name: 'mounts', namespace: 'default' })).status?.phase, 'Pending', 'the projected ConfigMap is still missing');
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'settings' } } });
  await eventually('Running once both exist', async () => isReady(await core.readNamespacedPod({ name: 'mounts', namespace: 'default' })), 5000, log);
  t.pass();
});

test("podReadiness 'probe': a container with a readiness probe's initial delay runs unready until then, as a kubelet reports it; 'immediate' (the default) is ready at Running", async (t) => {
  const probed = (name: string): k8s.V1Pod => ({
    metadata: { name },
    spec: { containers: [{ ...container(), readinessProbe: { tcpSocket: { port: 8080 }, initialDelaySeconds: 1, periodSeconds: 10 } }] },
  });
  const run = async (podReadiness: 'probe' | undefined) => {
    const { core, kc, log } = await startSimCluster(t, podReadiness ? { podReadiness } : {});
    const states = await watchPods(t, kc);
    await core.createNamespacedPod({ namespace: 'default', body: probed('probed') });
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'plain' }, spec: { containers: [container()] } } });
    // A bound, not a wait: the test goes on as soon as both are ready.
    for (const name of ['probed', 'plain'])
      await eventually(`${name} ready`, async () => states.some((p) => p.metadata?.name === name && isReady(p)), 10_000, log);
    const firstRunning = (name: string) => states.find((p) => p.metadata?.name === name && p.status?.phase === 'Running')!;
    return { firstRunning, log };
  };
  const probe = await run('probe');
  const started = probe.firstRunning('probed');
  t.deepEqual(
    started.status!.conditions!.filter((c) => c.type === 'Ready' || c.type === 'ContainersReady').map((c) => [c.type, c.status, c.reason]),
    [
      ['Ready', 'False', 'ContainersNotReady'],
      ['ContainersReady', 'False', 'ContainersNotReady'],
    ],
  );
  t.false(started.status!.containerStatuses![0]!.ready);
  t.truthy(started.status!.containerStatuses![0]!.state?.running, 'running, not ready');
  t.true(isReady(probe.firstRunning('plain')), 'a container without a probe is ready at Running');
  t.true(
    probe.log.some((l) => l.includes("default/probed ready (its readiness probe's initial delay over)")),
    probe.log.join('\n'),
  );
  const immediate = await run(undefined);
  t.true(isReady(immediate.firstRunning('probed')), 'by default a probed container is ready at Running');
});

test('a pod accepted and waiting to start is a change of the managed system pending, until it runs', async (t) => {
  // A run settles only when none is pending (coordinator/settle.ts): under load the start delay's
  // timer fires late, and a run ended on the pod's Pending status before it started.
  const { cluster, core, kc, log } = await startSimCluster(t, { podStartDelayMs: 1_500 });
  const states = await watchPods(t, kc);
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'slow' }, spec: { containers: [container()] } } });
  // Accepted: the kubelet reports its containers creating (the API server makes every pod Pending at its creation).
  const accepted = () => states.some((p) => p.metadata?.name === 'slow' && p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating');
  await eventually('accepted (ContainerCreating)', async () => accepted(), 10_000, log);
  const runningYet = () => states.some((p) => p.metadata?.name === 'slow' && p.status?.phase === 'Running');
  const pendingWhileWaiting = cluster.transitionPending();
  t.true(pendingWhileWaiting || runningYet(), 'pending between its acceptance and its start');
  await eventually('Running', async () => runningYet(), 10_000, log);
  await eventually('nothing pending once it runs', async () => !cluster.transitionPending(), 10_000, log);
  t.pass();
});
