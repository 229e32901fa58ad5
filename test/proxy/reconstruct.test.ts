/**
 * The traces of a run let someone reconstruct, for every object, the states the cluster went through
 * and the states the controller was shown (src/model/reconstruct.ts), here on a run with an
 * unobserved-state fault, where the two differ on purpose.
 */
import test from 'ava';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { reconstructHistories } from '../../src/model/reconstruct.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { kubeConfigOf, startConfigMapInformer, startRecordedProxy, waitFor } from './helpers.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const v = (s: KubeObject | undefined) => (s ? ((s as { data?: { v?: string } }).data?.v ?? '-') : 'absent');

test('per object: the cluster states and the states the controller was shown, from a run with a hold-until fault', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/u';
  proxy.primitives.watches.armHoldUntil({
    type: 'hold-until',
    key,
    from: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
    until: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 },
  });
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const informer = await startConfigMapInformer(t, kc);
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'u' }, data: { v: '1' } } });
  await waitFor('u=1', () => informer.cache().u === '1');
  await direct.patchNamespacedConfigMap({ name: 'u', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await direct.patchNamespacedConfigMap({ name: 'u', namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('u=3', () => informer.cache().u === '3');
  // The controller writes an object itself, and one comes and goes.
  await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w' }, data: { v: '1' } } });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'gone' }, data: { v: '1' } } });
  await direct.deleteNamespacedConfigMap({ name: 'gone', namespace: 'default' });
  await waitFor('the informer to settle', () => informer.cache().w === '1' && informer.log.includes('delete gone'));
  await waitFor('the recorder to settle', () =>
    trace.events.some((e) => e.type === 'cluster-change' && e.key === 'ConfigMap/default/gone' && e.eventType === 'DELETED'),
  );

  // Shuffled: the function orders by seq itself.
  const events: TraceEvent[] = [...trace.events].reverse();
  const h = reconstructHistories(events);
  const u = h.get(key)!;
  t.deepEqual(
    u.cluster.map((s) => v(s.state)),
    ['1', '2', '3'],
    'the cluster went through v=2',
  );
  t.deepEqual(
    u.shown.map((s) => `${s.via}:${v(s.state)}`),
    ['watch:1', 'list:3'],
    'the controller never saw it',
  );
  t.true(u.shown.every((s) => s.incarnation === 1));

  const w = h.get('ConfigMap/default/w')!;
  t.deepEqual(
    w.cluster.map((s) => v(s.state)),
    ['1'],
  );
  t.deepEqual(
    w.shown.map((s) => `${s.via}:${v(s.state)}`),
    ['write:1', 'watch:1'],
    'the answer to its own create, then the event',
  );

  const gone = h.get('ConfigMap/default/gone')!;
  t.deepEqual(
    gone.cluster.map((s) => v(s.state)),
    ['1', 'absent'],
  );
  t.is(v(gone.cluster[1]!.last), '1');
  t.deepEqual(
    gone.shown.map((s) => `${s.via}:${s.eventType}:${v(s.state)}`),
    ['watch:ADDED:1', 'watch:DELETED:absent'],
  );
});

test('a list that no longer holds an object shows it absent to that incarnation only', (t) => {
  const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
  const resource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
  const list = (id: number, seq: number, incarnation: number, items: KubeObject[]): TraceEvent[] => [
    {
      seq,
      ts: 0,
      type: 'request',
      id,
      incarnation,
      method: 'GET',
      path: '/api/v1/namespaces/default/configmaps',
      query: {},
      verb: 'list',
      resource,
      bodyBytes: 0,
    },
    { seq: seq + 1, ts: 0, type: 'response', id, status: 200, object: { kind: 'ConfigMapList', items }, durationMs: 1 },
  ];
  const h = reconstructHistories([...list(1, 1, 1, [cm('a', '1'), cm('b', '1')]), ...list(2, 3, 1, [cm('a', '2')]), ...list(3, 5, 2, [cm('a', '2')])]);
  t.deepEqual(
    h.get('ConfigMap/default/b')!.shown.map((s) => [s.incarnation, s.state ? 'present' : 'absent']),
    [
      [1, 'present'],
      [1, 'absent'],
    ],
  );
  t.deepEqual(
    h.get('ConfigMap/default/a')!.shown.map((s) => [s.requestId, s.resourceVersion]),
    [
      [1, '1'],
      [2, '2'],
      [3, '2'],
    ],
  );
});
