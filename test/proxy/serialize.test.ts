/**
 * Serialized delivery (causality learning): one watch event at a time across all streams, the next
 * only once the controller has been quiet; each reaction falls inside its event's episode.
 */
import test from 'ava';
import { ADD, CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { CACHE_SYNC_POLL_MS } from '../../proxy/serialize.js';
import type { EpisodeEvent } from '../../src/model/trace.js';
import { kubeConfigOf, sleep, startRecordedProxy, waitFor } from './helpers.js';

test('each watch event opens an episode; the controller reaction to it lands inside that episode, in upstream order', async (t) => {
  // Quiet is measured on a manual clock that moves only once the controller has reacted: how long a
  // loaded machine takes to deliver the event and send the reaction does not matter.
  let now = 0;
  const { cluster, proxy, trace } = await startRecordedProxy(t, { serializeDelivery: { quietMs: 80, now: () => now } });
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  // The controller: for each ConfigMap it sees, it creates a Secret after a little work.
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }));
  informer.on(ADD, (cm: V1ConfigMap) => {
    void (async () => {
      await sleep(20);
      await api.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: `${cm.metadata!.name}-s` } } });
    })();
  });
  await informer.start();
  t.teardown(() => informer.stop());
  await waitFor('the watch', () => trace.ofType('stream-open').length === 1);

  const names = ['one', 'two', 'three'];
  for (const name of names) await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
  const ended = () => trace.events.filter((e) => e.type === 'episode' && e.phase === 'end').length;
  for (const [i, name] of names.entries()) {
    await waitFor(
      `the Secret of ${name}, answered`,
      () => trace.ofType('request').some((r) => r.verb === 'create' && r.key === `Secret/default/${name}-s`) && proxy.activity().inFlight === 0,
      30_000,
    );
    t.is(ended(), i, `episode ${i + 1} lasts until the controller is quiet`);
    now += 80;
    await waitFor(`episode ${i + 1} to end`, () => ended() === i + 1, 30_000);
  }

  const episodes = trace.events.filter((e): e is EpisodeEvent => e.type === 'episode');
  const starts = episodes.filter((e) => e.phase === 'start');
  t.deepEqual(
    starts.map((e) => e.key),
    ['ConfigMap/default/one', 'ConfigMap/default/two', 'ConfigMap/default/three'],
    'upstream order',
  );
  for (const start of starts) {
    const end = episodes.find((e) => e.phase === 'end' && e.index === start.index)!;
    t.true(end.quiet, `episode ${start.index} ended quiet`);
    t.is(end.requests, 1, `one request in episode ${start.index}`);
    const name = start.key!.split('/')[2];
    const create = trace.ofType('request').find((r) => r.verb === 'create' && r.key === `Secret/default/${name}-s`)!;
    t.truthy(create);
    t.true(create.seq > start.seq && create.seq < end.seq, `the Secret of ${name} was created inside its episode`);
    const delivered = trace.ofType('watch-event').find((w) => w.seq === start.watchEventSeq)!;
    t.is(delivered.key, start.key, 'the episode names the delivered watch event');
  }
  // The next event is delivered only after the previous episode ended.
  for (let i = 1; i < starts.length; i++) {
    const prevEnd = episodes.find((e) => e.phase === 'end' && e.index === starts[i - 1]!.index)!;
    t.true(starts[i]!.watchEventSeq! > prevEnd.seq);
  }
  t.is(proxy.serializedBacklog(), 0);
});

test('an episode in which the controller opens a watch lasts a cache-sync poll longer: the reads waiting on that informer are still its reaction', async (t) => {
  // Found on the snapshot-copy example under load: its first Get of a ConfigMap starts an informer,
  // client-go's WaitForCacheSync looks at it every 100 ms, and the episode ended (quiet) before the
  // create the event caused. The manual clock moves only when the test says; `reads` counts how often
  // the serializer looked at it, so the test knows it has judged the new time.
  let now = 0;
  let reads = 0;
  const clock = () => {
    reads++;
    return now;
  };
  const { cluster, proxy, trace } = await startRecordedProxy(t, { serializeDelivery: { quietMs: 80, now: clock } });
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const api = kc.makeApiClient(CoreV1Api);
  const configMaps = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }));
  const secrets = makeInformer(kc, '/api/v1/namespaces/default/secrets', () => api.listNamespacedSecret({ namespace: 'default' }));
  // The controller starts its Secret informer when it first sees a ConfigMap.
  configMaps.on(ADD, () => void secrets.start());
  await configMaps.start();
  t.teardown(() => configMaps.stop());
  t.teardown(() => secrets.stop());
  await waitFor('the ConfigMap watch', () => trace.ofType('stream-open').length === 1);

  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } });
  await waitFor('the Secret watch, opened in episode 1', () => trace.ofType('stream-open').length === 2 && proxy.activity().inFlight === 0, 30_000);
  const ended = () => trace.events.some((e) => e.type === 'episode' && e.phase === 'end');
  const judged = async () => {
    const r = reads;
    await waitFor('the serializer to look at the clock', () => reads >= r + 2, 30_000);
  };

  now += 80;
  await judged();
  t.false(ended(), 'quiet for quietMs since the watch opened is not enough');
  now += CACHE_SYNC_POLL_MS;
  await waitFor('episode 1 to end', ended, 30_000);
  const end = trace.events.find((e): e is EpisodeEvent => e.type === 'episode' && e.phase === 'end')!;
  t.true(end.quiet);
});

test('an episode ends once the controller repeats a write the API server refuses: it waits for news only the next events bring; repeated reads do not end it', async (t) => {
  // Found on decommission's reference runs: its status patch carries its cached resourceVersion, and
  // the echo that would refresh the cache is queued behind the episode, so it got 409 every 30 ms
  // until the episode's 2 s limit. The manual clock never moves here: neither quiet nor the limit
  // can end the episode, only the refused writes.
  let reads = 0;
  const { cluster, proxy, trace } = await startRecordedProxy(t, {
    serializeDelivery: {
      quietMs: 80,
      now: () => {
        reads++;
        return 0;
      },
    },
  });
  const direct = kubeConfigOf(cluster.kubeconfigYaml()).makeApiClient(CoreV1Api);
  const kc = kubeConfigOf(proxy.kubeconfigYaml());
  const api = kc.makeApiClient(CoreV1Api);
  let writeNow: () => void = () => undefined;
  const mayWrite = new Promise<void>((resolve) => (writeNow = resolve));
  let readsDone = false;
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }));
  informer.on(ADD, (cm: V1ConfigMap) => {
    if (cm.metadata!.name !== 'one') return;
    void (async () => {
      for (let i = 0; i < 4; i++) await api.readNamespacedConfigMap({ name: 'missing', namespace: 'default' }).catch(() => undefined);
      readsDone = true;
      await mayWrite;
      for (let i = 0; i < 3; i++) {
        await api
          .replaceNamespacedConfigMap({
            name: 'one',
            namespace: 'default',
            body: { metadata: { name: 'one', resourceVersion: cm.metadata!.resourceVersion! }, data: { v: String(i) } },
          })
          .catch(() => undefined);
      }
    })();
  });
  await informer.start();
  t.teardown(() => informer.stop());
  await waitFor('the watch', () => trace.ofType('stream-open').length === 1);
  const ended = () => trace.events.filter((e): e is EpisodeEvent => e.type === 'episode' && e.phase === 'end');

  await direct.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } });
  // Someone else moves it on, so the controller's replace (with the resourceVersion it saw) is refused.
  await direct.replaceNamespacedConfigMap({ name: 'one', namespace: 'default', body: { metadata: { name: 'one' }, data: { v: 'other' } } });
  await waitFor('the reads, answered', () => readsDone && proxy.activity().inFlight === 0, 30_000);
  const r = reads;
  await waitFor('the serializer to look again', () => reads >= r + 2, 30_000);
  t.is(ended().length, 0, 'four identical reads do not end the episode');

  writeNow();
  await waitFor('episode 1 to end', () => ended().length >= 1, 30_000);
  t.like(ended()[0], { index: 1, quiet: false, retrying: true });
  const refused = trace.ofType('request').filter((q) => q.verb === 'update' && q.key === 'ConfigMap/default/one');
  t.is(refused.length, 3, 'three refused writes, then the next event');
  for (const q of refused) t.is(trace.ofType('response').find((a) => a.id === q.id)?.status, 409);
  await waitFor("episode 2, the other writer's change", () => trace.events.some((e) => e.type === 'episode' && e.phase === 'start' && e.index === 2), 30_000);
});
