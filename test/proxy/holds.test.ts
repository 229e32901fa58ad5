/**
 * Holding watch delivery and the unobserved-state fault, pinned by what a client-node informer's
 * cache holds before, during and after.
 */
import test from 'ava';
import { CoreV1Api, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { kubeConfigOf, sleep, startConfigMapInformer, startRecordedProxy, waitFor } from './helpers.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

test('holding one key holds its events and everything after them on that stream; release delivers in order', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'before' }, data: { v: '1' } } });
  await waitFor('the informer to see "before"', () => informer.cache().before === '1');

  const hold = proxy.primitives.watches.hold({ key: 'ConfigMap/default/h' });
  t.is(proxy.activity().holdsInPlace, 1, 'settling counts a hold in place as activity');
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'h' }, data: { v: '1' } } });
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after' }, data: { v: '1' } } });
  await direct.patchNamespacedConfigMap({ name: 'before', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await sleep(300);
  // During: the held key and every later event of the stream are missing from the cache.
  t.deepEqual(informer.cache(), { before: '1' });
  t.is(hold.streamIds.length, 1);
  t.is(hold.queuedEvents, 3);
  t.like(
    trace.ofType('fault').find((f) => f.phase === 'held'),
    { fault: 'watch-hold', key: 'ConfigMap/default/h' },
  );

  hold.release();
  t.is(proxy.activity().holdsInPlace, 0);
  await waitFor('the released events', () => informer.log.length >= 4);
  t.deepEqual(informer.log, ['add before v=1', 'add h v=1', 'add after v=1', 'update before v=2'], 'released in upstream order');
  t.deepEqual(informer.cache(), { before: '2', h: '1', after: '1' });
  // Events after the release flow freely again.
  await direct.patchNamespacedConfigMap({ name: 'h', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('a live event', () => informer.cache().h === '2');
  t.like(
    trace.ofType('fault').find((f) => f.phase === 'released'),
    { fault: 'watch-hold', detail: 'released 3 held event(s) of ConfigMap/default/h in order' },
  );
});

test('a held stream forwards no BOOKMARK past a held event; holds by kind leave other kinds alone', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' });
  const seen: string[] = [];
  const cmWatch = await new Watch(kc).watch(
    '/api/v1/namespaces/default/configmaps',
    { allowWatchBookmarks: true, resourceVersion: list.metadata!.resourceVersion! },
    (type: string, obj: { metadata?: { name?: string; resourceVersion?: string } }) =>
      seen.push(`${type} ${obj.metadata?.name ?? ''}@${obj.metadata?.resourceVersion}`),
    () => {},
  );
  t.teardown(() => cmWatch.abort());
  const secrets: string[] = [];
  const secretWatch = await new Watch(kc).watch(
    '/api/v1/namespaces/default/secrets',
    {},
    (type: string, obj: { metadata?: { name?: string } }) => secrets.push(`${type} ${obj.metadata?.name}`),
    () => {},
  );
  t.teardown(() => secretWatch.abort());
  await waitFor('both streams', () => trace.ofType('stream-open').length === 2);

  const hold = proxy.primitives.watches.hold({ kind: 'ConfigMap' });
  const created = await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'k' } } });
  await direct.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
  // The embedded cluster sends a BOOKMARK every second.
  await sleep(1300);
  t.deepEqual(
    seen.filter((s) => !s.startsWith('BOOKMARK')),
    [],
  );
  // A bookmark from before the held event (the list's resourceVersion; a loaded machine may see
  // several before the create) moves nothing past it.
  const heldRv = Number(created.metadata!.resourceVersion);
  t.deepEqual(
    seen.filter((s) => Number(s.split('@')[1]) >= heldRv),
    [],
    'no bookmark past the held event',
  );
  t.deepEqual(secrets, ['ADDED s'], 'the Secret stream is not held');
  hold.release();
  await waitFor('the held event', () => seen.some((s) => !s.startsWith('BOOKMARK')));
  t.is(
    seen.find((s) => !s.startsWith('BOOKMARK')),
    `ADDED k@${created.metadata!.resourceVersion}`,
  );
  await waitFor('a later bookmark', () => seen.some((s) => s.startsWith('BOOKMARK') && Number(s.split('@')[1]) >= heldRv));
  const rvs = seen.map((s) => Number(s.split('@')[1]));
  t.true(
    rvs.every((rv, i) => i === 0 || rv >= rvs[i - 1]!),
    `resourceVersions never go backwards: ${seen.join(', ')}`,
  );
});

test('hold-until: the informer never sees the intermediate state, relists after the in-stream 410 and ends with the final one', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/u';
  const state = proxy.primitives.watches.armHoldUntil({
    type: 'hold-until',
    key,
    from: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
    until: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 },
  });
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'u' }, data: { v: '1' } } });
  await waitFor('before: the informer has v=1', () => informer.cache().u === '1');
  t.is(state.state, 'armed');

  await direct.patchNamespacedConfigMap({ name: 'u', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the hold', () => state.state === 'holding');
  await sleep(200);
  t.deepEqual(informer.cache(), { u: '1' }, 'during: the intermediate state is held');
  const listsBefore = trace.ofType('request').filter((r) => r.verb === 'list').length;

  await direct.patchNamespacedConfigMap({ name: 'u', namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('after: the informer has the final state', () => informer.cache().u === '3');
  t.is(state.state, 'expired');
  t.true(state.injected);
  t.deepEqual(informer.log, ['add u v=1', 'update u v=3'], 'v=2 was never shown');
  t.deepEqual(informer.errors, []);
  // The wire: ERROR 410 Expired in the stream, the stream closed, then a relist.
  const error = trace.ofType('watch-event').find((e) => e.eventType === 'ERROR')!;
  t.like(error.object, { kind: 'Status', reason: 'Expired', code: 410 });
  t.regex(trace.ofType('stream-close').find((c) => c.id === error.id)?.reason ?? '', /410 Expired/);
  t.true(trace.ofType('request').filter((r) => r.verb === 'list').length > listsBefore, 'the informer relisted');
  t.false(
    trace.ofType('watch-event').some((e) => e.key === key && (e.object as { data?: { v?: string } }).data?.v === '2'),
    'the trace agrees: v=2 never delivered',
  );
  t.deepEqual(
    trace
      .ofType('fault')
      .filter((f) => f.fault === 'hold-until')
      .map((f) => f.phase),
    ['triggered', 'held', 'expired'],
  );
  // Delivery is live again afterwards.
  await direct.patchNamespacedConfigMap({ name: 'u', namespace: 'default', body: { data: { v: '4' } } }, merge);
  await waitFor('a later change', () => informer.cache().u === '4');
});

test('after a hold expired, a watch from before what it dropped is answered 410, as from a compacted resourceVersion; a watch from after it is served', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const created = await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' }, data: { v: '1' } } });
  const seen: string[] = [];
  const first = await new Watch(kc).watch(
    '/api/v1/namespaces/default/configmaps',
    { resourceVersion: created.metadata!.resourceVersion! },
    (type: string) => seen.push(type),
    () => {},
  );
  t.teardown(() => first.abort());
  const hold = proxy.primitives.watches.hold({ key: 'ConfigMap/default/x' });
  const patched = await direct.patchNamespacedConfigMap({ name: 'x', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the update to be held', () => hold.queuedEvents === 1);
  hold.expire();
  await waitFor('the in-stream 410', () => seen.includes('ERROR'));

  // The Python client's Watch().stream re-watches once from its last resourceVersion: a real server refuses it.
  const rewatch = async (resourceVersion: string) => {
    const events: Array<{ type: string; code?: number; v?: string }> = [];
    const w = await new Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion },
      (type: string, obj: { code?: number; data?: { v?: string } }) =>
        events.push({ type, ...(obj.code ? { code: obj.code } : {}), ...(obj.data?.v ? { v: obj.data.v } : {}) }),
      () => {},
    );
    t.teardown(() => w.abort());
    return events;
  };
  const stale = await rewatch(created.metadata!.resourceVersion!);
  await waitFor('the stale re-watch to be answered', () => stale.length > 0);
  t.deepEqual(stale, [{ type: 'ERROR', code: 410 }], 'v=2 is not served from before the expiry');
  t.like(
    trace
      .ofType('fault')
      .filter((f) => f.phase === 'expired')
      .at(-1),
    {
      fault: 'watch-hold',
      detail: `answered the controller's re-watch of configmaps from resourceVersion ${created.metadata!.resourceVersion} with 410 Expired: the fault dropped events up to ${patched.metadata!.resourceVersion}; it relists`,
    },
  );
  const fresh = await rewatch(patched.metadata!.resourceVersion!);
  await direct.patchNamespacedConfigMap({ name: 'x', namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('a later change on the watch from after the expiry', () => fresh.length > 0);
  t.deepEqual(fresh, [{ type: 'MODIFIED', v: '3' }]);
  t.is(proxy.activity().awaitingRelist, 0, 'the served watch is the relist the expiry awaited');
});

test('hold-until naming a generated name (`<prefix>*#<n>`): holds the events of the n-th object created with that prefix', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/gen-*#2';
  const state = proxy.primitives.watches.armHoldUntil({
    type: 'hold-until',
    key,
    from: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
    until: { key, change: 'update', fields: [{ path: 'data.v', before: '2', after: '3' }], occurrence: 1 },
  });
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  const first = (await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' }, data: { v: '1' } } })).metadata!
    .name!;
  const second = (await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' }, data: { v: '1' } } })).metadata!
    .name!;
  await waitFor('both objects', () => informer.cache()[first] === '1' && informer.cache()[second] === '1');
  // The first object's update is not the trigger's (it names the 2nd object created with gen-).
  await direct.patchNamespacedConfigMap({ name: first, namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the first object updated', () => informer.cache()[first] === '2');
  t.is(state.state, 'armed');
  await direct.patchNamespacedConfigMap({ name: second, namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the hold', () => state.state === 'holding');
  await sleep(200);
  t.is(informer.cache()[second], '1', "the second object's intermediate state is held");
  await direct.patchNamespacedConfigMap({ name: second, namespace: 'default', body: { data: { v: '3' } } }, merge);
  await waitFor('the final state', () => informer.cache()[second] === '3');
  t.true(state.injected);
  t.false(informer.log.includes(`update ${second} v=2`), 'v=2 of the second object was never shown');
  t.true(informer.log.includes(`update ${first} v=2`), 'the first object is not held');
  t.like(
    trace.ofType('fault').find((f) => f.fault === 'hold-until' && f.phase === 'held'),
    { key: `ConfigMap/default/${second}` },
  );
});

test('hold-until a deletion: the informer never sees the update, and the relist removes the object', async (t) => {
  const { cluster, proxy } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/d';
  const state = proxy.primitives.watches.armHoldUntil({
    type: 'hold-until',
    key,
    from: { key, change: 'update', occurrence: 1 },
    until: { key, change: 'delete', occurrence: 1 },
  });
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'd' }, data: { v: '1' } } });
  await waitFor('the object', () => informer.cache().d === '1');
  await direct.patchNamespacedConfigMap({ name: 'd', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await direct.deleteNamespacedConfigMap({ name: 'd', namespace: 'default' });
  await waitFor('the relist to drop it', () => !('d' in informer.cache()));
  t.is(state.state, 'expired');
  t.deepEqual(informer.log, ['add d v=1', 'delete d']);
});

test('hold-until whose cancelling change never comes expires after its limit: the informer relists, the fault counts as not injected', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/n';
  const state = proxy.primitives.watches.armHoldUntil(
    { type: 'hold-until', key, from: { key, change: 'update', occurrence: 1 }, until: { key, change: 'delete', occurrence: 1 } },
    undefined,
    {},
    400,
  );
  const informer = await startConfigMapInformer(t, kubeConfigOf(proxy.kubeconfigYaml()));
  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'n' }, data: { v: '1' } } });
  await waitFor('n', () => informer.cache().n === '1');
  await direct.patchNamespacedConfigMap({ name: 'n', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await sleep(150);
  t.is(informer.cache().n, '1', 'held');
  await waitFor('the hold to expire', () => informer.cache().n === '2');
  t.is(state.state, 'expired');
  t.false(state.injected);
  t.true(trace.ofType('fault').some((f) => f.fault === 'hold-until' && f.phase === 'not-injected' && /did not happen within 0.4 s/.test(f.detail)));
});

test('hold-until from a creation hides the ADDED; the relist shows the object first in its later state, and settling waits for that relist', async (t) => {
  const { cluster, proxy, trace } = await startRecordedProxy(t);
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const key = 'ConfigMap/default/c';
  const state = proxy.primitives.watches.armHoldUntil({
    type: 'hold-until',
    key,
    from: { key, change: 'create', occurrence: 1 },
    until: { key, change: 'update', fields: [{ path: 'data.v', before: '1', after: '2' }], occurrence: 1 },
  });
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const path = '/api/v1/namespaces/default/configmaps';
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' });
  const seen: string[] = [];
  let ended = false;
  // A bare watch, which (unlike an informer) does not watch again by itself after the 410.
  const watch = await new Watch(kc).watch(
    path,
    { resourceVersion: list.metadata!.resourceVersion! },
    (type: string, obj: { metadata?: { name?: string } }) => seen.push(`${type} ${obj.metadata?.name ?? ''}`),
    () => (ended = true),
  );
  t.teardown(() => watch.abort());
  await waitFor('the stream', () => trace.ofType('stream-open').length >= 1);

  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' }, data: { v: '1' } } });
  await waitFor('the hold', () => state.state === 'holding');
  await direct.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { v: '2' } } }, merge);
  await waitFor('the stream ended with 410', () => state.state === 'expired' && ended);
  t.false(
    seen.some((s) => s.endsWith(' c')),
    `the creation was never shown: ${seen.join(', ')}`,
  );
  t.true(state.injected);
  t.is(proxy.activity().awaitingRelist, 1, 'the expired resource has not been watched again');

  // The relist shows the object first in its later state.
  const relist = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' });
  t.is(relist.items.find((c) => c.metadata?.name === 'c')?.data?.v, '2');
  t.is(proxy.activity().awaitingRelist, 1, 'a LIST alone is not the relist done: the watch follows it');
  const again = await new Watch(kc).watch(
    path,
    { resourceVersion: relist.metadata!.resourceVersion! },
    () => {},
    () => {},
  );
  t.teardown(() => again.abort());
  await waitFor('the new watch', () => proxy.activity().awaitingRelist === 0);
});
