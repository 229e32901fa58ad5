/**
 * Stub applications on a loopback embedded cluster, following the cluster through the recorder: a
 * listener on each selected pod's IP while it runs and on the named Service's cluster IP; calls in
 * the trace as app-call events; a stopped pod's address refuses connections; the ZooKeeper tree
 * starts over when the last pod stops.
 */
import test, { type ExecutionContext } from 'ava';
import { connect } from 'node:net';
import { EmbeddedCluster } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { ClusterRecorder } from '../../src/recorder/cluster-recorder.js';
import { ApplicationStubs } from '../../src/stubs/applications.js';
import { JuteReader, JuteWriter, PacketSplitter } from '../../src/stubs/jute.js';
import { isObject } from '../../src/model/object-key.js';
import type { ApplicationConfig } from '../../src/model/applications.js';
import type { AppCallEvent, ClusterTraceEvent, ControllerTraceEvent, TraceSink, Unstamped } from '../../src/model/trace.js';
import { waitFor } from '../proxy/helpers.js';

/** Connects and opens a ZooKeeper session: resolves with the session id, rejects on refusal. */
function zkSession(address: string): Promise<bigint> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), host, () =>
      socket.write(new JuteWriter().int(0).long(0n).int(6000).long(0n).buffer(Buffer.alloc(16)).bool(false).packet()),
    );
    const splitter = new PacketSplitter();
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => {
      const [packet] = splitter.push(d);
      if (!packet) return;
      const r = new JuteReader(packet);
      r.int();
      r.int();
      resolve(r.long());
      socket.destroy();
    });
  });
}

/** The object at `path` (a GET), `{}` when there is none. */
async function getObject(client: KubeClient, path: string): Promise<Record<string, unknown>> {
  const res = await client.request('GET', path);
  return isObject(res.body) ? res.body : {};
}

/** The pod's IP in namespace default, '' until it has one. */
async function podIp(client: KubeClient, name: string): Promise<string> {
  const pod = await getObject(client, `/api/v1/namespaces/default/pods/${name}`);
  return isObject(pod.status) && typeof pod.status.podIP === 'string' ? pod.status.podIP : '';
}

/** The Service's cluster IP in namespace default. */
async function clusterIpOf(client: KubeClient, name: string): Promise<string> {
  const svc = await getObject(client, `/api/v1/namespaces/default/services/${name}`);
  return String(isObject(svc.spec) ? svc.spec.clusterIP : '');
}

/** An embedded loopback cluster, its recorder and the stub of one zookeeper application `zk` (pods labelled app=zk). */
async function zkStubs(t: ExecutionContext, services: string[], select: Partial<ApplicationConfig> = { pods: { matchLabels: { app: 'zk' } } }) {
  const cluster = await EmbeddedCluster.start({ network: 'loopback', simulation: { podStopDelayMs: 0 } });
  const client = new KubeClient(cluster.url, cluster.clientOptions());
  const events: Array<Unstamped<ControllerTraceEvent | ClusterTraceEvent>> = [];
  const sink: TraceSink = { append: (e) => events.push(e) };
  const recorder = await ClusterRecorder.start(client, sink);
  const lines: string[] = [];
  const stubs = new ApplicationStubs([{ name: 'zk', protocol: 'zookeeper', port: 2181, namespace: 'default', services, ...select }], recorder, sink, (l) =>
    lines.push(l),
  );
  t.teardown(async () => {
    stubs.stop();
    await recorder.stop();
    client.close();
    await cluster.stop();
  });
  return { client, events, lines, app: stubs.application('zk')! };
}

test('listeners follow the selected pods and the Service; calls are traced; a stopped pod refuses connections', async (t) => {
  const { client, events, lines, app } = await zkStubs(t, ['zk-client']);
  await client.request('POST', '/api/v1/namespaces/default/services', {
    body: { metadata: { name: 'zk-client' }, spec: { ports: [{ port: 2181 }], selector: { app: 'zk' } } },
  });
  await client.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'other' }, spec: { ports: [{ port: 2181 }] } } });
  await client.request('POST', '/api/v1/namespaces/default/pods', {
    body: { metadata: { name: 'zk-0', labels: { app: 'zk' } }, spec: { containers: [{ name: 'zk', image: 'zookeeper' }] } },
  });
  await client.request('POST', '/api/v1/namespaces/default/pods', {
    body: { metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  });
  await waitFor('both pods running', async () => (await podIp(client, 'zk-0')) !== '' && (await podIp(client, 'web')) !== '', 15_000);
  const clusterIp = await clusterIpOf(client, 'zk-client');
  const zkIp = await podIp(client, 'zk-0');
  await waitFor('listeners on the pod and the Service', () => app.addresses().length === 2, 15_000);
  t.deepEqual(app.addresses(), [`${clusterIp}:2181`, `${zkIp}:2181`].sort());

  const sessionViaService = await zkSession(`${clusterIp}:2181`);
  t.not(sessionViaService, 0n);
  await zkSession(`${zkIp}:2181`);
  const calls = events.filter((e): e is Unstamped<AppCallEvent> => e.type === 'app-call');
  t.deepEqual(
    calls.map((c) => [c.key, c.address, c.operation, c.result]),
    [
      ['Service/default/zk-client', `${clusterIp}:2181`, 'connect', 'ok'],
      ['Pod/default/zk-0', `${zkIp}:2181`, 'connect', 'ok'],
    ],
  );
  // Neither the unselected pod nor the unnamed Service got a listener.
  await t.throwsAsync(zkSession(`${await podIp(client, 'web')}:2181`), { code: 'ECONNREFUSED' });

  // A znode written now is gone once the last pod has stopped: a new ensemble starts empty.
  app.zookeeper!.createNode('/kept', Buffer.alloc(0), [{ perms: 31, scheme: 'world', id: 'anyone' }], 0);
  await client.request('DELETE', '/api/v1/namespaces/default/pods/zk-0');
  await waitFor('the pod listener to close', () => app.addresses().length === 1, 15_000);
  await t.throwsAsync(zkSession(`${zkIp}:2181`), { code: 'ECONNREFUSED' });
  t.is(app.zookeeper!.get('/kept'), undefined);
  t.truthy(lines.find((l) => l.includes('starts over')));
  // The Service still answers.
  t.not(await zkSession(`${clusterIp}:2181`), 0n);
});

test('the ZooKeeper tree outlives its last pod while a claim the pod mounted remains, and starts over once it is gone', async (t) => {
  // A one-replica ensemble whose pod is rolled for a template change keeps its data on its claim:
  // zookeeper-operator's metadata znode must still be there for the scale-up after the roll.
  const { client, lines, app } = await zkStubs(t, []);
  await client.request('POST', '/apis/storage.k8s.io/v1/storageclasses', {
    body: {
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'kperturb.dev/simulated',
      volumeBindingMode: 'Immediate',
    },
  });
  await client.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
    body: { metadata: { name: 'data-zk-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  });
  const pod = {
    metadata: { name: 'zk-0', labels: { app: 'zk' } },
    spec: { containers: [{ name: 'zk', image: 'zookeeper' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-zk-0' } }] },
  };
  await client.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
  await waitFor('a listener on the pod', () => app.addresses().length === 1, 15_000);
  const acl = [{ perms: 31, scheme: 'world', id: 'anyone' }];
  app.zookeeper!.createNode('/kept', Buffer.alloc(0), acl, 0);

  // The pod is deleted and made again (a rolling update): the claim stays, and so does the tree.
  await client.request('DELETE', '/api/v1/namespaces/default/pods/zk-0');
  await waitFor('the pod listener to close', () => app.addresses().length === 0, 15_000);
  await waitFor('the pod to be gone', async () => (await client.request('GET', '/api/v1/namespaces/default/pods/zk-0')).status === 404, 15_000);
  await client.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
  await waitFor('a listener on the new pod', () => app.addresses().length === 1, 15_000);
  t.truthy(app.zookeeper!.get('/kept'), 'the znode survived the pod');
  t.falsy(lines.find((l) => l.includes('starts over')));

  // The cluster deleted with its volumes: the tree starts over once the claim is gone too.
  await client.request('DELETE', '/api/v1/namespaces/default/pods/zk-0');
  await waitFor('the pod listener to close', () => app.addresses().length === 0, 15_000);
  t.truthy(app.zookeeper!.get('/kept'), 'kept while the claim remains');
  await client.request('DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/data-zk-0');
  await waitFor('the tree to start over', () => app.zookeeper!.get('/kept') === undefined, 15_000);
  t.truthy(lines.find((l) => l.includes('starts over')));
});

test('matchPort: every pod with a container port of the application and every Service with that port get a listener, no other', async (t) => {
  const { client, app } = await zkStubs(t, [], { matchPort: true });
  const create = (kind: 'pods' | 'services', body: unknown) => client.request('POST', `/api/v1/namespaces/default/${kind}`, { body });
  await create('services', { metadata: { name: 'zk-client' }, spec: { ports: [{ name: 'client', port: 2181 }] } });
  await create('services', { metadata: { name: 'web' }, spec: { ports: [{ port: 80, targetPort: 2181 }] } });
  const container = (ports: number[]) => ({ name: 'c', image: 'zookeeper', ports: ports.map((containerPort) => ({ containerPort })) });
  await create('pods', { metadata: { name: 'zk-0' }, spec: { containers: [container([2888, 2181])] } });
  await create('pods', { metadata: { name: 'web' }, spec: { containers: [container([80])] } });
  await waitFor('both pods running', async () => (await podIp(client, 'zk-0')) !== '' && (await podIp(client, 'web')) !== '', 15_000);
  await waitFor('listeners on the pod and the Service', () => app.addresses().length === 2, 15_000);
  t.deepEqual(app.addresses(), [`${await clusterIpOf(client, 'zk-client')}:2181`, `${await podIp(client, 'zk-0')}:2181`].sort());
  await t.throwsAsync(zkSession(`${await podIp(client, 'web')}:2181`), { code: 'ECONNREFUSED' });
});
