import test from 'ava';
import { compareRuns, looksLikeIP } from '../../oracles/index.js';
import { configMap, runWith } from './_runs.js';

const service = (clusterIP: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'db', namespace: 'default' },
  spec: { clusterIP, clusterIPs: [clusterIP], ports: [{ name: 'pg', port: 5432 }], ...extra },
});

test('addresses recognised: IPv4, IPv6, CIDRs, an address with a port; not versions or words', (t) => {
  for (const ip of ['10.0.0.1', '192.168.1.20', 'fd00::1', '2001:db8::8a2e:370:7334', '10.96.0.0/12', '127.110.0.2:2181', '[fd00::1]:2181'])
    t.true(looksLikeIP(ip), ip);
  for (const other of ['1.2.3', 'v1.2.3.4.5', 'abc', '10.0.0.256', '::g', '', 'zk-client:2181', '10.0.0.1:99999', '10.0.0.1:', 'fd00::1:2181:x'])
    t.false(looksLikeIP(other), other);
});

test("a run's loopback block does not alarm: a node's pod CIDR and an operator's status naming a Service by IP and port", (t) => {
  // Each embedded cluster claims its own 127.X.0.0/16 (src/cluster/network.ts); two reference runs
  // may get the same block by chance, and then nothing learns these fields as varying.
  const node = (block: number) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-1' },
    spec: { podCIDR: `127.${block}.128.0/20`, podCIDRs: [`127.${block}.128.0/20`] },
  });
  const zk = (block: number) => ({
    apiVersion: 'zookeeper.pravega.io/v1beta1',
    kind: 'ZookeeperCluster',
    metadata: { name: 'zk', namespace: 'default' },
    status: { internalClientEndpoint: `127.${block}.0.2:2181`, externalClientEndpoint: 'N/A' },
  });
  const refs = [runWith([node(110), zk(110)]), runWith([node(110), zk(110)])];
  t.deepEqual(
    compareRuns(refs, runWith([node(78), zk(78)])).map((a) => a.message),
    [],
  );
  // A status that names another port, or a host instead of an address, is still compared.
  const other = zk(78);
  other.status.internalClientEndpoint = 'zk-client:2181';
  t.deepEqual(
    compareRuns(refs, runWith([node(78), other])).map((a) => a.field),
    ['status.internalClientEndpoint'],
  );
});

test('IP addresses in address fields are built-in masks: podIP, hostIP, clusterIP(s), addresses', (t) => {
  const pod = (ip: string, host: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { nodeName: `node-${host}` },
    status: {
      podIP: ip,
      podIPs: [{ ip }],
      hostIP: host,
      containerStatuses: [{ name: 'c', containerID: `containerd://${ip}`, imageID: `sha256:${host}`, ready: true }],
    },
  });
  const refs = [runWith([service('10.96.0.10'), pod('10.244.0.5', '172.18.0.2')])];
  const tst = runWith([service('fd00::a'), pod('10.244.1.9', '172.18.0.3')]);
  t.deepEqual(compareRuns(refs, tst), []);
});

test('an address that appears or disappears still alarms, and IP-looking values elsewhere are compared', (t) => {
  const refs = [runWith([service('10.96.0.10'), configMap('v', { version: '1.2.3.4' })])];
  const tst = runWith([service('10.96.0.11', { externalIPs: ['1.1.1.1'] }), configMap('v', { version: '1.2.3.5' })]);
  t.deepEqual(
    compareRuns(refs, tst).map((a) => [a.object, a.field]),
    [
      ['ConfigMap/default/v', 'data.version'],
      ['Service/default/db', 'spec.externalIPs[0]'],
    ],
  );
});

test("the controller's own objects are never compared", (t) => {
  const own = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'my-operator-7d9f', namespace: 'operators' }, status: { restarts: 0 } };
  const refs = [runWith([own], [['ADDED', own]])];
  const tst = runWith(
    [{ ...own, status: { restarts: 1 } }],
    [
      ['ADDED', own],
      ['DELETED', own],
      ['ADDED', own],
    ],
  );
  t.true(compareRuns(refs, tst).length > 0);
  t.deepEqual(compareRuns(refs, tst, { controllerObjects: ['Pod/operators/my-operator-*'] }), []);
});

test('the reference value of a missing object leaves out masked fields, so runs that differ only there show once', (t) => {
  const refs = [runWith([configMap('gone', { k: 'v' })]), runWith([configMap('gone', { k: 'v' })])];
  const [alarm] = compareRuns(refs, runWith([]));
  t.deepEqual(alarm!.reference, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gone', namespace: 'default' }, data: { k: 'v' } }]);
});

test('objects named after a UID (pvc-<uid> volumes) are compared by count; values naming them differ only in the UID', (t) => {
  const uid = (n: number) => `5b015140-2edf-4494-94ee-a38660c9${String(n).padStart(4, '0')}`;
  const pv = (n: number) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pvc-${uid(n)}` }, spec: { capacity: { storage: '1Gi' } } });
  const pvc = (n: number) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-dc1-0', namespace: 'default' },
    spec: { volumeName: `pvc-${uid(n)}` },
  });
  const refs = [runWith([pv(1), pvc(1)], [['ADDED', pv(1)]]), runWith([pv(2), pvc(2)], [['ADDED', pv(2)]])];
  t.deepEqual(compareRuns(refs, runWith([pv(3), pvc(3)], [['ADDED', pv(3)]])), []);
  // With one reference nothing is learned; the UID-only difference still does not alarm.
  t.deepEqual(compareRuns([refs[0]!], runWith([pv(3), pvc(3)], [['ADDED', pv(3)]])), []);
  // One volume too many is still found, by count.
  const extra = compareRuns(
    refs,
    runWith(
      [pv(3), pv(4), pvc(3)],
      [
        ['ADDED', pv(3)],
        ['ADDED', pv(4)],
      ],
    ),
  );
  t.deepEqual(
    extra.map((a) => a.message),
    [
      'PersistentVolume/pvc-*: 1 object(s) with this generated name after reference runs, but 2 after the test run',
      'PersistentVolume/pvc-*: created 1 time(s) in reference runs, but 2 time(s) in the test run',
    ],
  );
  // A value that differs in more than the UID alarms.
  const renamed = { ...pvc(3), spec: { volumeName: `other-${uid(3)}` } };
  t.deepEqual(
    compareRuns([refs[0]!], runWith([pv(3), renamed], [['ADDED', pv(3)]])).map((a) => a.field),
    ['spec.volumeName'],
  );
});

test("the endpoints controller's last-change-trigger-time annotation is a built-in mask, other annotations are compared", (t) => {
  const endpoints = (annotations?: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'db', namespace: 'default', ...(annotations ? { annotations } : {}) },
    subsets: [{ ports: [{ name: 'pg', port: 5432 }] }],
  });
  const refs = [runWith([endpoints()]), runWith([endpoints()])];
  t.deepEqual(compareRuns(refs, runWith([endpoints({ 'endpoints.kubernetes.io/last-change-trigger-time': '2026-11-22T10:00:00Z' })])), []);
  t.deepEqual(
    compareRuns(refs, runWith([endpoints({ 'endpoints.kubernetes.io/last-change-trigger-time': '2026-11-22T10:00:00Z', owner: 'x' })])).map((a) => a.field),
    ['metadata.annotations.owner'],
  );
});

test("a pod's restart history (restartCount, lastState) is a built-in mask, as a pod-crash fault leaves it; whether its containers are ready is compared", (t) => {
  const pod = (restartCount: number, ready = true) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'kv1-0', namespace: 'default' },
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'store',
          ready,
          restartCount,
          state: { running: { startedAt: '2026-11-28T10:00:00Z' } },
          ...(restartCount > 0 ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: '2026-11-28T10:00:01Z' } } } : { lastState: {} }),
        },
      ],
    },
  });
  const refs = [runWith([pod(0)]), runWith([pod(0)])];
  t.deepEqual(compareRuns(refs, runWith([pod(2)])), []);
  t.deepEqual(
    compareRuns(refs, runWith([pod(2, false)])).map((a) => a.field),
    ['status.containerStatuses[name=store].ready'],
  );
});
