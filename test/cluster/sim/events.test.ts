/**
 * Events from the simulated components, as the real ones write them: reasons, messages, types,
 * sources, involved objects and names; the client-go recorder's dedup (a PATCH bumping count),
 * aggregation and spam filter; events.k8s.io series for the scheduler; kubectl showing them; no
 * kube-controller-manager events from the simulation next to a real control plane; the oracles and
 * the cluster recorder ignoring them.
 */
import test from 'ava';
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { EmbeddedCluster } from '../../../src/cluster/index.js';
import { KUBELET_CONTROLLERS } from '../../../src/cluster/sim/index.js';
import { SimEvents } from '../../../src/cluster/sim/events.js';
import { KubeClient } from '../../../src/kube/client.js';
import { keyOf, type KubeObject } from '../../../src/model/object-key.js';
import type { ClusterChangeEvent } from '../../../src/model/trace.js';
import { ClusterRecorder } from '../../../src/recorder/cluster-recorder.js';
import { compareRuns } from '../../../oracles/index.js';
import { MemoryTrace } from '../../proxy/helpers.js';
import { kubectlFor } from '../kubectl-helper.js';
import { container, eventually, getJson, send, startSimCluster, type SimCluster } from './helpers.js';

interface Ev {
  metadata: { name: string; namespace: string; resourceVersion: string };
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string; apiVersion: string; resourceVersion?: string; fieldPath?: string };
  reason: string;
  message: string;
  type: string;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  action?: string;
  series?: { count: number; lastObservedTime: string };
}

async function events(env: Pick<SimCluster, 'cluster'>, namespace = 'default'): Promise<Ev[]> {
  return ((await getJson(env.cluster, `/api/v1/namespaces/${namespace}/events`)) as { items: Ev[] }).items;
}

/** Waits until every [reason, message] pair is among the events; returns the events. */
async function waitForEvents(env: SimCluster, wanted: Array<[string, string]>, namespace = 'default'): Promise<Ev[]> {
  return eventually(
    `events ${wanted.map(([r, m]) => `${r} "${m}"`).join(', ')}`,
    async () => {
      const list = await events(env, namespace);
      return wanted.every(([r, m]) => list.some((e) => e.reason === r && e.message === m)) ? list : undefined;
    },
    20_000,
    env.log,
  );
}

const find = (list: Ev[], reason: string, message: string): Ev => {
  const e = list.find((x) => x.reason === reason && x.message === message);
  if (!e) throw new Error(`no ${reason} event "${message}" among ${list.map((x) => `${x.reason}: ${x.message}`).join('; ')}`);
  return e;
};

test('scheduler and kubelet: Scheduled, then Pulling/Pulled/Created/Started per container, Killing on deletion', async (t) => {
  const env = await startSimCluster(t);
  const created = await env.core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'p' }, spec: { containers: [container('a', 'nginx:1.27'), container('b', 'busybox:latest')] } },
  });
  const list = await waitForEvents(env, [
    ['Scheduled', 'Successfully assigned default/p to node-1'],
    ['Started', 'Started container a'],
    ['Started', 'Started container b'],
  ]);
  const scheduled = find(list, 'Scheduled', 'Successfully assigned default/p to node-1');
  // kube-scheduler writes through events.k8s.io/v1: no deprecated source, counts or timestamps.
  t.like(scheduled, { type: 'Normal', action: 'Binding', reportingComponent: 'default-scheduler', reportingInstance: 'default-scheduler-kperturb-sim' });
  t.like(scheduled.involvedObject, { kind: 'Pod', apiVersion: 'v1', name: 'p', namespace: 'default', uid: created.metadata!.uid });
  t.truthy(scheduled.involvedObject.resourceVersion);
  t.regex(scheduled.eventTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  t.falsy(scheduled.source?.component);
  t.falsy(scheduled.count);
  t.regex(scheduled.metadata.name, /^p\.[0-9a-f]{16}$/);

  const pulling = find(list, 'Pulling', 'Pulling image "nginx:1.27"');
  t.like(pulling, { type: 'Normal', source: { component: 'kubelet', host: 'node-1' }, reportingComponent: 'kubelet', reportingInstance: 'node-1', count: 1 });
  t.like(pulling.involvedObject, { kind: 'Pod', name: 'p', uid: created.metadata!.uid, fieldPath: 'spec.containers{a}' });
  t.truthy(pulling.firstTimestamp);
  t.is(pulling.firstTimestamp, pulling.lastTimestamp);
  t.regex(pulling.metadata.name, /^p\.[0-9a-f]{15,16}$/);
  t.regex(
    find(list, 'Pulled', list.find((e) => e.reason === 'Pulled' && e.involvedObject.fieldPath === 'spec.containers{a}')!.message).message,
    /^Successfully pulled image "nginx:1\.27" in [\d.]+m?s \([\d.]+m?s including waiting\)\. Image size: \d+ bytes\.$/,
  );
  t.like(find(list, 'Created', 'Created container: a').involvedObject, { fieldPath: 'spec.containers{a}' });
  t.like(find(list, 'Started', 'Started container b').involvedObject, { fieldPath: 'spec.containers{b}' });
  const order = list.filter((e) => e.involvedObject.fieldPath === 'spec.containers{a}').map((e) => e.reason);
  t.deepEqual(order, ['Pulling', 'Pulled', 'Created', 'Started']);

  // A second pod on the node: IfNotPresent finds nginx:1.27, busybox:latest (Always) is pulled again.
  await env.core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'q' }, spec: { containers: [container('a', 'nginx:1.27'), container('b', 'busybox:latest')] } },
  });
  const again = await waitForEvents(env, [['Started', 'Started container b']]);
  await eventually(
    'q started',
    async () => (await events(env)).filter((e) => e.involvedObject.name === 'q' && e.reason === 'Started').length === 2,
    20_000,
    env.log,
  );
  const q = (await events(env)).filter((e) => e.involvedObject.name === 'q');
  t.deepEqual(
    q.filter((e) => e.involvedObject.fieldPath === 'spec.containers{a}').map((e) => [e.reason, e.message]),
    [
      ['Pulled', 'Container image "nginx:1.27" already present on machine'],
      ['Created', 'Created container: a'],
      ['Started', 'Started container a'],
    ],
  );
  t.deepEqual(
    q.filter((e) => e.involvedObject.fieldPath === 'spec.containers{b}').map((e) => e.reason),
    ['Pulling', 'Pulled', 'Created', 'Started'],
  );
  t.true(again.length > 0);

  await env.core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
  const killed = await waitForEvents(env, [
    ['Killing', 'Stopping container a'],
    ['Killing', 'Stopping container b'],
  ]);
  t.like(find(killed, 'Killing', 'Stopping container a'), {
    type: 'Normal',
    source: { component: 'kubelet', host: 'node-1' },
    involvedObject: { fieldPath: 'spec.containers{a}' },
  });
});

test('FailedScheduling is a Warning with the fit error', async (t) => {
  const env = await startSimCluster(t);
  await env.core.createNamespacedPod({
    namespace: 'default',
    body: { metadata: { name: 'nowhere' }, spec: { containers: [container()], nodeSelector: { disk: 'ssd' } } },
  });
  const message =
    "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
  const list = await waitForEvents(env, [['FailedScheduling', message]]);
  t.like(find(list, 'FailedScheduling', message), {
    type: 'Warning',
    action: 'Scheduling',
    reportingComponent: 'default-scheduler',
    involvedObject: { kind: 'Pod', name: 'nowhere' },
  });
});

test('Deployment and ReplicaSet: ScalingReplicaSet, then SuccessfulCreate / SuccessfulDelete per pod', async (t) => {
  const env = await startSimCluster(t);
  const labels = { app: 'web' };
  await env.apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container()] } } },
    },
  });
  const rs = await eventually('the ReplicaSet', async () => (await env.apps.listNamespacedReplicaSet({ namespace: 'default' })).items[0], 20_000, env.log);
  const rsName = rs.metadata!.name!;
  const pods = await eventually(
    'two pods',
    async () => {
      const items = (await env.core.listNamespacedPod({ namespace: 'default' })).items;
      return items.length === 2 ? items.map((p) => p.metadata!.name!).sort() : undefined;
    },
    20_000,
  );
  const list = await waitForEvents(env, [
    ['ScalingReplicaSet', `Scaled up replica set ${rsName} from 0 to 2`],
    ...pods.map((p): [string, string] => ['SuccessfulCreate', `Created pod: ${p}`]),
  ]);
  const scaling = find(list, 'ScalingReplicaSet', `Scaled up replica set ${rsName} from 0 to 2`);
  t.like(scaling, {
    type: 'Normal',
    source: { component: 'deployment-controller' },
    reportingComponent: 'deployment-controller',
    reportingInstance: '',
    involvedObject: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'web' },
  });
  t.falsy(scaling.source?.host);
  const create = find(list, 'SuccessfulCreate', `Created pod: ${pods[0]}`);
  t.like(create, {
    type: 'Normal',
    source: { component: 'replicaset-controller' },
    involvedObject: { kind: 'ReplicaSet', apiVersion: 'apps/v1', name: rsName, uid: rs.metadata!.uid },
  });
  t.regex(create.metadata.name, new RegExp(`^${rsName}\\.[0-9a-f]+$`));

  await env.apps.patchNamespacedDeployment({ name: 'web', namespace: 'default', body: { spec: { replicas: 1 } } }, (await import('./helpers.js')).mergePatch);
  const after = await eventually('a SuccessfulDelete', async () => (await events(env)).find((e) => e.reason === 'SuccessfulDelete'), 20_000, env.log);
  t.like(after, { source: { component: 'replicaset-controller' }, involvedObject: { kind: 'ReplicaSet', name: rsName } });
  t.regex(after.message, new RegExp(`^Deleted pod: ${rsName}-`));
  t.truthy((await events(env)).find((e) => e.reason === 'ScalingReplicaSet' && e.message === `Scaled down replica set ${rsName} from 2 to 1`));
});

test('StatefulSet: create Claim, create Pod events; provisioning events on the claim', async (t) => {
  const env = await startSimCluster(t);
  await send(env.cluster, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'standard' },
    provisioner: 'rancher.io/local-path',
  });
  const labels = { app: 'db' };
  await env.apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'db' },
      spec: {
        replicas: 1,
        serviceName: 'db',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [container()] } },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { storageClassName: 'standard', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      },
    },
  });
  const list = await waitForEvents(env, [
    ['SuccessfulCreate', 'create Claim data-db-0 Pod db-0 in StatefulSet db success'],
    ['SuccessfulCreate', 'create Pod db-0 in StatefulSet db successful'],
    ['Provisioning', 'External provisioner is provisioning volume for claim "default/data-db-0"'],
  ]);
  t.like(find(list, 'SuccessfulCreate', 'create Pod db-0 in StatefulSet db successful'), {
    type: 'Normal',
    source: { component: 'statefulset-controller' },
    involvedObject: { kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'db' },
  });
  const external = find(
    list,
    'ExternalProvisioning',
    "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
  );
  t.like(external, { source: { component: 'persistentvolume-controller' }, involvedObject: { kind: 'PersistentVolumeClaim', name: 'data-db-0' } });
  const provisioning = find(list, 'Provisioning', 'External provisioner is provisioning volume for claim "default/data-db-0"');
  t.regex(provisioning.source!.component!, /^rancher\.io\/local-path_kperturb-sim_[0-9a-f-]+$/);
  const pv = await eventually(
    'the claim bound',
    async () => (await env.core.readNamespacedPersistentVolumeClaim({ name: 'data-db-0', namespace: 'default' })).spec?.volumeName,
    20_000,
    env.log,
  );
  const done = await waitForEvents(env, [['ProvisioningSucceeded', `Successfully provisioned volume ${pv}`]]);
  t.is(find(done, 'ProvisioningSucceeded', `Successfully provisioned volume ${pv}`).source?.component, provisioning.source!.component);
});

test('Job: SuccessfulCreate per pod, then Completed', async (t) => {
  const env = await startSimCluster(t);
  await env.batch.createNamespacedJob({
    namespace: 'default',
    body: { metadata: { name: 'once' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [container()] } } } },
  });
  const list = await waitForEvents(env, [['Completed', 'Job completed']]);
  const created = list.find((e) => e.reason === 'SuccessfulCreate');
  t.regex(created!.message, /^Created pod: once-[a-z0-9]{5}$/);
  t.like(find(list, 'Completed', 'Job completed'), {
    type: 'Normal',
    source: { component: 'job-controller' },
    involvedObject: { kind: 'Job', apiVersion: 'batch/v1', name: 'once' },
  });
});

test('DaemonSet: SuccessfulCreate per node', async (t) => {
  const env = await startSimCluster(t, { nodes: ['n1', 'n2'] });
  const labels = { app: 'agent' };
  await env.apps.createNamespacedDaemonSet({
    namespace: 'default',
    body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container()] } } } },
  });
  const list = await eventually(
    'two SuccessfulCreate',
    async () => {
      const l = (await events(env)).filter((e) => e.reason === 'SuccessfulCreate');
      return l.length === 2 ? l : undefined;
    },
    20_000,
    env.log,
  );
  for (const e of list) t.like(e, { source: { component: 'daemonset-controller' }, involvedObject: { kind: 'DaemonSet', name: 'agent' } });
});

test('a repeated identical event is a PATCH that bumps count; 10 messages aggregate; 25 per object, then filtered', async (t) => {
  const cluster = await EmbeddedCluster.start({ simulation: false });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(async () => {
    client.close();
    await cluster.stop();
  });
  const log: string[] = [];
  const sim = new SimEvents(client, false, (l) => log.push(l), true);
  const cm = (await send(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm' } })).json as KubeObject;
  const subject = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
  const verbs: string[] = [];
  const kc = new k8s.KubeConfig();
  kc.loadFromString(cluster.kubeconfigYaml());
  const watch = await new k8s.Watch(kc).watch(
    '/api/v1/namespaces/default/events',
    {},
    (type) => verbs.push(type),
    () => undefined,
  );
  t.teardown(() => watch.abort());
  const recorder = sim.recorder({ component: 'test-controller' });
  recorder.event(subject, 'Warning', 'Broken', 'it broke');
  recorder.event(subject, 'Warning', 'Broken', 'it broke');
  recorder.event(subject, 'Warning', 'Broken', 'it broke');
  await sim.flush();
  let list = (await getJson(cluster, '/api/v1/namespaces/default/events')).items as Ev[];
  t.is(list.length, 1, 'one Event object');
  t.like(list[0], { reason: 'Broken', message: 'it broke', count: 3, type: 'Warning', source: { component: 'test-controller' } });
  t.is(sim.writes, 3, 'one POST and two PATCHes');
  await eventually('the watch saw the writes', async () => verbs.length === 3, 20_000);
  t.deepEqual(verbs, ['ADDED', 'MODIFIED', 'MODIFIED']);

  // Messages that differ: the 10th distinct one within 10 minutes becomes a combined event.
  for (let i = 1; i <= 11; i++) recorder.event(subject, 'Normal', 'Tick', `tick ${i}`);
  await sim.flush();
  list = (await getJson(cluster, '/api/v1/namespaces/default/events')).items as Ev[];
  const ticks = list.filter((e) => e.reason === 'Tick');
  t.is(ticks.filter((e) => !e.message.startsWith('(combined')).length, 9);
  const combined = ticks.find((e) => e.message.startsWith('(combined from similar events): '));
  t.like(combined, { count: 2, message: '(combined from similar events): tick 11' });

  // 3 + 11 recorded so far; the spam filter lets 25 through per source and object.
  for (let i = 0; i < 20; i++) recorder.event(subject, 'Normal', 'Other', `other ${i % 2}`);
  await sim.flush();
  list = (await getJson(cluster, '/api/v1/namespaces/default/events')).items as Ev[];
  const others = list.filter((e) => e.reason === 'Other');
  t.is(
    others.reduce((n, e) => n + (e.count ?? 0), 0),
    25 - 14,
    'the rest is filtered',
  );
  t.deepEqual(log, []);
});

test('events.k8s.io: a repeated isomorphic event starts a series with one PATCH; later repeats stay in memory', async (t) => {
  const cluster = await EmbeddedCluster.start({ simulation: false });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  t.teardown(async () => {
    client.close();
    await cluster.stop();
  });
  const sim = new SimEvents(client, false, () => undefined, true);
  const cm = (await send(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm' } })).json as KubeObject;
  const recorder = sim.eventsRecorder('default-scheduler', 'host');
  for (let i = 0; i < 4; i++) recorder.event({ ...cm, apiVersion: 'v1', kind: 'ConfigMap' }, 'Warning', 'FailedScheduling', 'Scheduling', 'no room');
  await sim.flush();
  t.is(sim.writes, 2);
  const list = (await getJson(cluster, '/apis/events.k8s.io/v1/namespaces/default/events')).items as Array<Record<string, any>>;
  t.is(list.length, 1);
  t.like(list[0], {
    reason: 'FailedScheduling',
    note: 'no room',
    action: 'Scheduling',
    reportingController: 'default-scheduler',
    reportingInstance: 'default-scheduler-host',
    series: { count: 2 },
  });
});

test('deterministic mode: two runs name their events alike', async (t) => {
  const names: string[][] = [];
  for (let run = 0; run < 2; run++) {
    const env = await startSimCluster(t, { deterministic: true });
    const labels = { app: 'web' };
    await env.apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container()] } } },
      },
    });
    const list = await eventually(
      '2 Started events and 2 creates',
      async () => {
        const l = await events(env);
        return l.filter((e) => e.reason === 'Started').length === 2 && l.filter((e) => e.reason === 'SuccessfulCreate').length === 2 ? l : undefined;
      },
      20_000,
      env.log,
    );
    names.push(list.map((e) => e.metadata.name).sort());
  }
  t.deepEqual(names[0], names[1]);
});

test('kubectl events and kubectl describe pod show the events', async (t) => {
  if (!existsSync(process.env.KUBECTL ?? '/usr/bin/kubectl')) return t.fail('kubectl is not installed');
  const kubectl = await kubectlFor(t, { simulation: { podStartDelayMs: 20 } });
  const env = kubectl.env;
  t.is((await kubectl('run', 'web', '--image=nginx:1.27')).code, 0);
  await eventually(
    'the pod started',
    async () => {
      const list = (await getJson(env.cluster, '/api/v1/namespaces/default/events')).items as Ev[];
      return list.some((e) => e.reason === 'Started');
    },
    20_000,
  );
  const ev = await kubectl('events', '--for', 'pod/web');
  t.is(ev.code, 0, ev.stderr);
  t.regex(ev.stdout, /Normal\s+Scheduled\s+Pod\/web\s+Successfully assigned default\/web to node-1/);
  t.regex(ev.stdout, /Normal\s+Started\s+Pod\/web\s+Started container web/);
  const describe = await kubectl('describe', 'pod', 'web');
  t.is(describe.code, 0, describe.stderr);
  t.regex(describe.stdout, /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/web to node-1/);
  t.regex(describe.stdout, /Normal\s+Pulling\s+\S+\s+kubelet\s+Pulling image "nginx:1.27"/);
  t.regex(describe.stdout, /Normal\s+Created\s+\S+\s+kubelet\s+Created container: web/);
});

test('next to a real control plane the simulation writes no kube-controller-manager events', async (t) => {
  const env = await startSimCluster(t, { controllers: [...KUBELET_CONTROLLERS, 'persistentvolume'], bindVolumes: false });
  await send(env.cluster, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'standard' },
    provisioner: 'rancher.io/local-path',
  });
  // What the real PV controller does first: name the provisioner on the claim.
  const annotations = {
    'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
    'volume.beta.kubernetes.io/storage-provisioner': 'rancher.io/local-path',
  };
  await env.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      metadata: { name: 'c', annotations },
      spec: { storageClassName: 'standard', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
  });
  const labels = { app: 'x' };
  await env.apps.createNamespacedReplicaSet({
    namespace: 'default',
    body: {
      metadata: { name: 'x' },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container()] } } },
    },
  });
  await env.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [container()] } } });
  const list = await eventually(
    'kubelet and provisioner events',
    async () => {
      const l = await events(env);
      return l.some((e) => e.reason === 'Started') && l.some((e) => e.reason === 'ProvisioningSucceeded') ? l : undefined;
    },
    20_000,
    env.log,
  );
  const components = new Set(list.map((e) => e.source?.component || e.reportingComponent));
  t.deepEqual([...components].map((c) => c!.replace(/_.*/, '_*')).sort(), ['default-scheduler', 'kubelet', 'rancher.io/local-path_*']);
});

test("the cluster recorder records Events when asked (explore reads them): the kubelet's Started is a cluster change", async (t) => {
  const env = await startSimCluster(t);
  const client = new KubeClient(env.cluster.url, env.cluster.clientOptions());
  const trace = new MemoryTrace();
  const recorder = await ClusterRecorder.start(client, trace, { events: true });
  t.teardown(async () => {
    await recorder.stop();
    client.close();
  });
  await env.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [container()] } } });
  const started = await eventually(
    'the Started Event in the cluster trace',
    () =>
      Promise.resolve(
        trace.events.find(
          (e): e is ClusterChangeEvent =>
            e.type === 'cluster-change' && e.key.startsWith('Event/default/') && (e.object as { reason?: string }).reason === 'Started',
        ),
      ),
    20_000,
    env.log,
  );
  t.like(started.object as unknown as Ev, { type: 'Normal', involvedObject: { kind: 'Pod', name: 'p' } });
});

test('the cluster recorder does not record Events and the oracles ignore them', async (t) => {
  const env = await startSimCluster(t);
  const client = new KubeClient(env.cluster.url, env.cluster.clientOptions());
  const trace = new MemoryTrace();
  const recorder = await ClusterRecorder.start(client, trace);
  t.teardown(async () => {
    await recorder.stop();
    client.close();
  });
  await env.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [container()] } } });
  await eventually('the pod started', async () => (await events(env)).some((e) => e.reason === 'Started'), 20_000, env.log);
  const endState = await recorder.snapshot();
  t.false(
    Object.keys(endState).some((k) => k.startsWith('Event/')),
    'no Event in the end state',
  );
  const clusterChanges = trace.events.filter((e): e is ClusterChangeEvent => e.type === 'cluster-change');
  t.false(
    clusterChanges.some((e) => e.key.startsWith('Event/')),
    'no Event in the cluster changes',
  );

  // Two runs whose Events differ (the test run has others, with other counts): no alarm.
  const reference = { endState, clusterChanges };
  const withEvents = structuredClone(reference);
  for (const e of await events(env)) {
    const obj = { ...(e as unknown as KubeObject), apiVersion: 'v1', kind: 'Event', count: (e.count ?? 1) + 5 } as KubeObject;
    withEvents.endState[keyOf(obj)!] = obj;
    withEvents.clusterChanges.push({ type: 'cluster-change', seq: 10_000, ts: 0, eventType: 'ADDED', key: keyOf(obj)!, resourceVersion: '1', object: obj });
  }
  const extra: KubeObject = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'p.17f0', namespace: 'default' },
    reason: 'Other',
    message: 'only in this run',
  };
  withEvents.endState[keyOf(extra)!] = extra;
  t.deepEqual(compareRuns([reference], withEvents), []);
  // The same comparison notices an object that is not bookkeeping.
  const withConfigMap = structuredClone(reference);
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'only-here', namespace: 'default' } };
  withConfigMap.endState[keyOf(cm)!] = cm;
  t.true(compareRuns([reference], withConfigMap).length > 0);
});

test('events: false writes none', async (t) => {
  const env = await startSimCluster(t, { events: false });
  await env.core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [container()] } } });
  await eventually(
    'the pod running',
    async () => (await env.core.readNamespacedPod({ name: 'p', namespace: 'default' })).status?.phase === 'Running',
    20_000,
    env.log,
  );
  await env.core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
  await eventually('the pod gone', async () => !(await env.core.listNamespacedPod({ namespace: 'default' })).items.length, 20_000, env.log);
  t.deepEqual(await events(env), []);
});

test('StatefulSet: a pod the API server refuses (its template is not validated as a pod spec) is a FailedCreate Warning with the refusal', async (t) => {
  const env = await startSimCluster(t);
  const labels = { app: 'q' };
  // kube-apiserver takes the set (ValidatePodTemplateSpecForStatefulSet skips the pod spec) and refuses its pod.
  await env.apps.createNamespacedStatefulSet({
    namespace: 'default',
    body: {
      metadata: { name: 'q' },
      spec: {
        replicas: 1,
        serviceName: 'q',
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [container()], tolerations: [{}] } },
      },
    },
  });
  const message =
    'create Pod q-0 in StatefulSet q failed error: Pod "q-0" is invalid: spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"';
  const list = await waitForEvents(env, [['FailedCreate', message]]);
  t.like(find(list, 'FailedCreate', message), {
    type: 'Warning',
    source: { component: 'statefulset-controller' },
    involvedObject: { kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'q' },
  });
});
