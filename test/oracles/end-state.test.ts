import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { ABSENT } from '../../src/model/results.js';
import { configMap, runWith, secret } from './_runs.js';

test('identical runs raise no alarm', (t) => {
  const objects = [configMap('app', { key: 'a' }), secret('db-tls')];
  t.deepEqual(compareRuns([runWith(objects), runWith(objects)], runWith(objects)), []);
});

test('an object missing after the test run raises an alarm naming it', (t) => {
  const ref = [configMap('app', { key: 'a' }), secret('db-tls')];
  const alarms = compareRuns([runWith(ref), runWith(ref)], runWith([configMap('app', { key: 'a' })]));
  t.is(alarms.length, 1);
  const [a] = alarms;
  t.is(a!.oracle, 'end-state');
  t.is(a!.object, 'Secret/default/db-tls');
  t.is(a!.field, undefined);
  t.is(a!.test, ABSENT);
  t.is(a!.message, 'Secret/default/db-tls: exists after reference runs, but is absent after the test run');
});

test('an object only the test run left behind raises an alarm', (t) => {
  const alarms = compareRuns([runWith([])], runWith([secret('extra')]));
  t.deepEqual(
    alarms.map((a) => [a.object, a.reference, a.message]),
    [['Secret/default/extra', [ABSENT], 'Secret/default/extra: is absent after reference runs, but exists after the test run']],
  );
});

test('a changed field raises an alarm naming the field and both values', (t) => {
  const refs = [runWith([configMap('x', { key: 'a', same: 's' })]), runWith([configMap('x', { key: 'a', same: 's' })])];
  const alarms = compareRuns(refs, runWith([configMap('x', { key: 'b', same: 's' })]));
  t.deepEqual(alarms, [
    {
      oracle: 'end-state',
      check: 'value',
      object: 'ConfigMap/default/x',
      field: 'data.key',
      reference: ['a'],
      test: 'b',
      message: 'ConfigMap/default/x: data.key is "a" after reference runs, but "b" after the test run',
    },
  ]);
});

test('a field missing or added in the test run is reported per leaf against ABSENT', (t) => {
  const ref = configMap('x', { key: 'a' }, { status: { phase: 'Ready', replicas: [{ n: 1 }] } });
  const tst = configMap('x', { key: 'a', extra: 'e' }, { status: { replicas: [{ n: 1 }, { n: 2 }] } });
  const alarms = compareRuns([runWith([ref])], runWith([tst]));
  t.deepEqual(
    alarms.map((a) => [a.field, a.reference, a.test]),
    [
      ['data.extra', [ABSENT], 'e'],
      ['status.phase', ['Ready'], ABSENT],
      ['status.replicas[1].n', [ABSENT], 2],
    ],
  );
  t.is(alarms[1]!.message, 'ConfigMap/default/x: status.phase is "Ready" after reference runs, but absent after the test run');
});

test('fields that differ between reference runs are learned masks and do not alarm', (t) => {
  const refs = [
    runWith([configMap('x', { token: 'r1', key: 'a' }, { status: { pods: ['p1', 'p2'] } })]),
    runWith([configMap('x', { token: 'r2', key: 'a' }, { status: { pods: ['p1'] } })]),
  ];
  const alarms = compareRuns(refs, runWith([configMap('x', { token: 'other', key: 'b' }, { status: { pods: ['p9', 'p8', 'p7'] } })]));
  // token and status.pods are masked; the stable field still alarms.
  t.deepEqual(
    alarms.map((a) => a.field),
    ['data.key'],
  );
});

test('an object present in only some reference runs is masked as a whole', (t) => {
  const refs = [runWith([secret('flaky'), secret('stable')]), runWith([secret('stable')])];
  t.deepEqual(compareRuns(refs, runWith([secret('stable')])), []);
  t.deepEqual(compareRuns(refs, runWith([secret('stable'), secret('flaky')])), []);
});

test('with a single reference run nothing is learned', (t) => {
  const alarms = compareRuns([runWith([configMap('x', { token: 'r1' })])], runWith([configMap('x', { token: 'r2' })]));
  t.deepEqual(
    alarms.map((a) => a.field),
    ['data.token'],
  );
});

test('built-in masks: uid, resourceVersion, timestamps, owner uids, managedFields do not alarm', (t) => {
  const obj = (n: number) =>
    configMap(
      'x',
      { key: 'a', since: `2024-01-0${n}T00:00:0${n}.123456Z` },
      {
        metadata: {
          name: 'x',
          namespace: 'default',
          generation: n,
          deletionTimestamp: `2024-02-0${n}T00:00:00+02:00`,
          managedFields: [{ manager: `m${n}` }],
          ownerReferences: [{ apiVersion: 'v1', kind: 'Database', name: 'db', uid: `owner-${n}`, controller: true }],
        },
        status: { observed: { uid: `u${n}`, resourceVersion: `${n}` }, lastUpdate: `2024-03-0${n}T01:02:03Z` },
      },
    );
  // One reference: nothing learned, so only built-in masks can keep this quiet.
  t.deepEqual(compareRuns([runWith([obj(1)])], runWith([obj(2)])), []);
});

test('a timestamp field that disappears still alarms', (t) => {
  const ref = configMap('x', {}, { status: { lastBackup: '2024-01-01T00:00:00Z' } });
  const alarms = compareRuns([runWith([ref])], runWith([configMap('x', {}, { status: {} })]));
  t.deepEqual(
    alarms.map((a) => [a.field, a.test]),
    [['status.lastBackup', ABSENT]],
  );
});

test('map key order does not alarm, list order does', (t) => {
  const a = configMap('x', { one: '1', two: '2' }, { spec: { nested: { b: 2, a: 1 }, list: [1, 2] } });
  const b = configMap('x', { two: '2', one: '1' }, { spec: { nested: { a: 1, b: 2 }, list: [1, 2] } });
  t.deepEqual(compareRuns([runWith([a])], runWith([b])), []);
  const c = configMap('x', { one: '1', two: '2' }, { spec: { nested: { a: 1, b: 2 }, list: [2, 1] } });
  t.deepEqual(
    compareRuns([runWith([a])], runWith([c])).map((x) => x.field),
    ['spec.list[0]', 'spec.list[1]'],
  );
});

test('user masks by key glob suppress alarms for the named paths or the whole object', (t) => {
  const ref = [configMap('app-1', { key: 'a', keep: 'k' }, { status: { lastUpdate: 'monday' } }), secret('db-tls')];
  const tst = [configMap('app-1', { key: 'a', keep: 'changed' }, { status: { lastUpdate: 'tuesday' } })];
  const refs = [runWith(ref)];
  t.deepEqual(
    compareRuns(refs, runWith(tst)).map((a) => a.field ?? a.object),
    ['data.keep', 'status.lastUpdate', 'Secret/default/db-tls'],
  );
  const masked = compareRuns(refs, runWith(tst), {
    extraMasks: [
      { keyGlob: 'ConfigMap/*/app-*', paths: ['status.lastUpdate', 'data'] },
      { keyGlob: 'Secret/default/*', paths: [] },
    ],
  });
  t.deepEqual(masked, []);
  // A glob that does not match leaves the alarm.
  const unmatched = compareRuns(refs, runWith(tst), { extraMasks: [{ keyGlob: 'ConfigMap/other/*', paths: ['status.lastUpdate'] }] });
  t.true(unmatched.some((a) => a.field === 'status.lastUpdate'));
});

test('keys with dots are named with brackets and can be masked that way', (t) => {
  const ref = configMap('x', {}, { metadata: { name: 'x', namespace: 'default', labels: { 'app.kubernetes.io/name': 'a' } } });
  const tst = configMap('x', {}, { metadata: { name: 'x', namespace: 'default', labels: { 'app.kubernetes.io/name': 'b' } } });
  const alarms = compareRuns([runWith([ref])], runWith([tst]));
  t.deepEqual(
    alarms.map((a) => a.field),
    ['metadata.labels["app.kubernetes.io/name"]'],
  );
  t.deepEqual(compareRuns([runWith([ref])], runWith([tst]), { extraMasks: [{ keyGlob: '*', paths: ['metadata.labels["app.kubernetes.io/name"]'] }] }), []);
});

test('leases and events are ignored', (t) => {
  const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'leader', namespace: 'kube-system' }, spec: { holderIdentity: 'a' } };
  const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default' }, reason: 'Created' };
  const alarms = compareRuns([runWith([lease, event])], runWith([{ ...lease, spec: { holderIdentity: 'b' } }], [['ADDED', event]]));
  t.deepEqual(alarms, []);
});

test('objects with generated names are compared by count', (t) => {
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, generateName: 'web-', namespace: 'default' } });
  const refs = [runWith([pod('web-bcdfg'), pod('web-hjklm')]), runWith([pod('web-npqrs'), pod('web-tvwxz')])];
  t.deepEqual(compareRuns(refs, runWith([pod('web-24567'), pod('web-zzzzz')])), []);
  const alarms = compareRuns(refs, runWith([pod('web-24567')]));
  t.deepEqual(
    alarms.map((a) => [a.object, a.reference, a.test, a.message]),
    [['Pod/default/web-*', [2], 1, 'Pod/default/web-*: 2 object(s) with this generated name after reference runs, but 1 after the test run']],
  );
});

test("a Deployment's ReplicaSet and pods are counted with the pod-template-hash folded, in the end state and the updates", (t) => {
  // mongodb's mongos Deployment: its template holds a TLS Secret's digest, so every run hashes it differently.
  const replicaSet = (hash: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: `mongos-${hash}`, namespace: 'default', labels: { 'pod-template-hash': hash } },
    spec: { replicas: 1, selector: { matchLabels: { 'pod-template-hash': hash } } },
  });
  const pod = (hash: string, suffix: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `mongos-${hash}-${suffix}`, generateName: `mongos-${hash}-`, namespace: 'default', labels: { 'pod-template-hash': hash } },
  });
  const run = (hash: string, podCount: number) => {
    const objects = [replicaSet(hash), ...['bcdfg', 'hjklm'].slice(0, podCount).map((s) => pod(hash, s))];
    return runWith(
      objects,
      objects.map((o) => ['ADDED', o] as ['ADDED', KubeObject]),
    );
  };
  const refs = [run('f46f78b59', 1), run('546fd7978b', 1)];
  t.deepEqual(compareRuns(refs, run('6df8d959cf', 1)), []);
  t.deepEqual(
    compareRuns(refs, run('6df8d959cf', 2)).map((a) => a.message),
    [
      'Pod/default/mongos-*-*: 1 object(s) with this generated name after reference runs, but 2 after the test run',
      'Pod/default/mongos-*-*: created 1 time(s) in reference runs, but 2 time(s) in the test run',
    ],
  );
});

test('IPAddresses (a Service cluster IP each, named after the address the allocator picked at random) are compared by count', (t) => {
  const ip = (name: string) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IPAddress',
    metadata: { name },
    spec: { parentRef: { resource: 'services', namespace: 'default', name: 'web' } },
  });
  const refs = [runWith([ip('10.0.0.12')]), runWith([ip('10.0.0.181')])];
  t.deepEqual(compareRuns(refs, runWith([ip('10.0.0.192')])), []);
  t.deepEqual(
    compareRuns(refs, runWith([ip('10.0.0.192'), ip('10.0.0.7')])).map((a) => a.message),
    ['IPAddress/*: 1 object(s) with this generated name after reference runs, but 2 after the test run'],
  );
});

test('alarms are sorted by object, oracle and field', (t) => {
  const ref = [configMap('b', { z: '1', a: '1' }), configMap('a', { k: '1' })];
  const tst = [configMap('b', { z: '2', a: '2' }), configMap('a', { k: '2' })];
  const alarms = compareRuns([runWith(ref)], runWith(tst, [['ADDED', configMap('a', {})]]));
  t.deepEqual(
    alarms.map((a) => `${a.object} ${a.oracle} ${a.field ?? ''}`),
    [
      'ConfigMap/default/a end-state data.k',
      'ConfigMap/default/a update-summary ',
      'ConfigMap/default/b end-state data.a',
      'ConfigMap/default/b end-state data.z',
    ],
  );
});

test('an object left terminating (deletionTimestamp only after the test run) alarms on that field', (t) => {
  const ref = configMap('x', { key: 'a' });
  const stuck = configMap(
    'x',
    { key: 'a' },
    { metadata: { name: 'x', namespace: 'default', deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['demo/cleanup'] } },
  );
  const alarms = compareRuns([runWith([ref]), runWith([ref])], runWith([stuck]));
  t.deepEqual(alarms.map((a) => a.field).sort(), ['metadata.deletionTimestamp', 'metadata.finalizers[0]']);
});

test('a pod service-account token volume (kube-api-access-<random>, named by the API server) is compared folded', (t) => {
  const pod = (suffix: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'dc1-0', generateName: 'dc1-', namespace: 'default' },
    spec: {
      volumes: [{ name: 'data' }, { name: `kube-api-access-${suffix}`, projected: { defaultMode: 420 } }],
      containers: [
        {
          name: 'c',
          volumeMounts: [
            { name: 'data', mountPath: '/d' },
            { name: `kube-api-access-${suffix}`, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
        },
      ],
    },
  });
  const refs = [runWith([pod('9nz6q')]), runWith([pod('m8bmm')])];
  t.deepEqual(compareRuns(refs, runWith([pod('rzzq5')])), []);
  // Only names of that shape are folded: a different volume still alarms.
  const other = pod('rzzq5');
  other.spec.volumes.push({ name: 'extra' } as never);
  t.deepEqual(
    compareRuns(refs, runWith([other])).map((a) => a.object),
    ['Pod/default/dc1-0'],
  );
});
