/**
 * The planner and the proxy count a controller's writes under the same key, so a plan's
 * `create X, n-th time` fires at the write it was planned for. A create whose request names no object
 * (a protobuf or YAML body the proxy cannot read, or generateName) is counted under the key of the
 * object the answer returns, by both.
 */
import test from 'ava';
import { stringify } from 'yaml';
import { analyzeRun } from '../../planner/index.js';
import { completedWrite } from '../../proxy/write-triggers.js';
import { WriteOccurrenceCounter, countedWriteKey } from '../../src/model/controller-write.js';
import type { WriteTrigger } from '../../src/model/plan.js';
import type { RequestEvent, TraceEvent } from '../../src/model/trace.js';
import { TriggerEvaluator } from '../../src/model/trigger-eval.js';
import { rawRequest, startRecordedProxy, waitFor } from '../proxy/helpers.js';
import { TraceBuilder } from './_trace-builder.js';
import { DB } from './_helpers.js';

const CM = 'ConfigMap/default/settings';

/** Each successful write request of a trace with the trigger the planner gave it (undefined: none). */
function plannedTriggers(events: TraceEvent[]): Array<{ requestId: number; trigger: WriteTrigger | undefined }> {
  const run = analyzeRun(events, { quietMs: 1000, stateHashes: false });
  return run.writes.filter((w) => w.status !== undefined && w.status < 300).map((w) => ({ requestId: w.id, trigger: w.trigger }));
}

/** Replays a trace's answers as the proxy counts them; returns, per trigger, the request at which it fires. */
function firesAt(events: TraceEvent[], triggers: WriteTrigger[]): Array<number | undefined> {
  const counter = new WriteOccurrenceCounter();
  const evaluators = triggers.map((t) => new TriggerEvaluator({ write: t }));
  const fired: Array<number | undefined> = triggers.map(() => undefined);
  const requests = new Map<number, RequestEvent>();
  for (const e of events) {
    if (e.type === 'request') requests.set(e.id, e);
    if (e.type !== 'response' || !requests.has(e.id)) continue;
    const write = completedWrite(e.id, requests.get(e.id)!, e.status, e.object);
    if (!write) continue;
    const n = counter.record(write);
    evaluators.forEach((ev, i) => {
      if (ev.write(write, n)) fired[i] = e.id;
    });
  }
  return fired;
}

test('a create the request does not name counts under the answer key, so a later named create of the same object is its 2nd', (t) => {
  const events = new TraceBuilder()
    .write('create', CM, { unnamed: true }) // a protobuf body: the proxy could not read the name
    .write('delete', CM)
    .write('create', CM) // a JSON body naming the object
    .write('patch', DB).events;
  const planned = plannedTriggers(events);
  t.deepEqual(
    planned.map((p) => p.trigger),
    [
      { verb: 'create', key: CM, occurrence: 1 },
      { verb: 'delete', key: CM, occurrence: 1 },
      { verb: 'create', key: CM, occurrence: 2 },
      { verb: 'patch', key: DB, occurrence: 1 },
    ],
  );
  // Replayed as the proxy counts, each trigger fires at the very request it was planned for.
  t.deepEqual(
    firesAt(
      events,
      planned.map((p) => p.trigger!),
    ),
    planned.map((p) => p.requestId),
  );
});

test('reference runs that plans do not come from count the same way (determinism checks agree)', (t) => {
  const run = () => new TraceBuilder().write('create', CM, { unnamed: true }).write('delete', CM).write('create', CM).write('patch', DB).events;
  const other = analyzeRun(run(), { quietMs: 1000, stateHashes: false, detail: 'triggers' });
  t.is(other.writeCount({ verb: 'create', key: CM }), 2);
  t.is(other.writeCount({ verb: 'delete', key: CM }), 1);
});

test('generated names: the create is counted under the folded key of the object the answer returns', (t) => {
  const events = new TraceBuilder()
    .write('create', 'Pod/default/web-x7k2p', { unnamed: true, generateName: 'web-' })
    .write('patch', 'Pod/default/web-x7k2p')
    .write('patch', DB).events;
  t.deepEqual(
    plannedTriggers(events).map((p) => p.trigger),
    [
      { verb: 'create', key: 'Pod/default/web-*#1', occurrence: 1 },
      { verb: 'patch', key: 'Pod/default/web-*#1', occurrence: 1 },
      { verb: 'patch', key: DB, occurrence: 1 },
    ],
  );
});

test('countedWriteKey: the answer names a create of a whole object; everything else the request', (t) => {
  const answer = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns' } };
  const cm = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' };
  t.is(countedWriteKey({ verb: 'create', resource: cm }, answer), 'ConfigMap/ns/a');
  t.is(
    countedWriteKey({ verb: 'create', resource: cm }, { apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns' } }),
    'ConfigMap/ns/a',
    'kind from the request',
  );
  t.is(countedWriteKey({ verb: 'create', key: 'ConfigMap/ns/a', resource: cm }, { kind: 'Status' }), 'ConfigMap/ns/a');
  t.is(countedWriteKey({ verb: 'create', resource: cm }, undefined), undefined);
  const eviction = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', subresource: 'eviction' };
  t.is(countedWriteKey({ verb: 'create', key: 'Pod/ns/p', resource: eviction }, { kind: 'Eviction', metadata: { name: 'p', namespace: 'ns' } }), 'Pod/ns/p');
  t.is(countedWriteKey({ verb: 'patch', key: 'ConfigMap/ns/a', resource: cm }, { ...answer, metadata: { name: 'b', namespace: 'ns' } }), 'ConfigMap/ns/a');
});

/**
 * Through the real proxy: the trace of a YAML create (the proxy records no key for it), a delete and
 * a JSON create of the same ConfigMap gives the JSON create the planner trigger `create #2`; armed in
 * a second run, the proxy fires it at the JSON create, not at the YAML one.
 */
test('through the proxy: the planner names the write at which the proxy fires', async (t) => {
  const sequence = async (url: string, token: string): Promise<{ yamlCreate: Promise<unknown>; jsonCreate: () => Promise<unknown> }> => {
    const path = '/api/v1/namespaces/default/configmaps';
    const auth = { authorization: `Bearer ${token}` };
    const yamlCreate = rawRequest(url, {
      method: 'POST',
      path,
      headers: { ...auth, 'content-type': 'application/yaml' },
      body: stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { v: '1' } }),
    });
    return {
      yamlCreate,
      jsonCreate: async () => {
        await yamlCreate;
        await rawRequest(url, { method: 'DELETE', path: `${path}/settings`, headers: auth });
        return rawRequest(url, {
          method: 'POST',
          path,
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { v: '2' } }),
        });
      },
    };
  };

  // Reference run: record, then plan.
  const ref = await startRecordedProxy(t);
  const first = await sequence(ref.proxy.url, ref.proxy.controllerToken);
  const answered = (await first.jsonCreate()) as { status: number };
  t.is(answered.status, 201);
  await waitFor(
    'the recorder to see both creations',
    () => ref.trace.ofType('cluster-change').filter((c) => c.key === CM && c.eventType === 'ADDED').length === 2,
  );
  const events = [...ref.trace.events].sort((a, b) => a.seq - b.seq);
  const creates = ref.trace.ofType('request').filter((r) => r.verb === 'create');
  t.is(creates.length, 2);
  t.is(creates[0]!.key, undefined, 'the proxy could not read the YAML body: the request names no object');
  t.is(creates[1]!.key, CM);
  const trigger = plannedTriggers(events).find((p) => p.requestId === creates[1]!.id)?.trigger;
  t.deepEqual(trigger, { verb: 'create', key: CM, occurrence: 2 });

  // Test run: the proxy fires that trigger at the JSON create.
  const run = await startRecordedProxy(t);
  let firedAt: number | undefined;
  run.proxy.primitives.holdAfterWrite(trigger!, (info) => (firedAt = info.requestId));
  const second = await sequence(run.proxy.url, run.proxy.controllerToken);
  await second.yamlCreate;
  t.is(firedAt, undefined, 'not at the YAML create');
  void second.jsonCreate().catch(() => undefined); // its answer is held by the crash
  await waitFor('the trigger', () => firedAt !== undefined);
  const jsonCreate = run.trace.ofType('request').filter((r) => r.verb === 'create')[1]!;
  t.is(firedAt, jsonCreate.id);
});

test('generated names: an answer seen before the creation is folded as the creation would be', (t) => {
  // The proxy often gets the create's answer before the recorder hears of the object: the planner
  // folds at the answer too, so the write is `create web-*#1` whichever order the trace has.
  const pod = 'Pod/default/web-x7k2p';
  const events = new TraceBuilder().write('create', pod, { unnamed: true, generateName: 'web-' }).write('patch', pod).events;
  const i = events.findIndex((e) => e.type === 'cluster-change');
  const answer = events.findIndex((e) => e.type === 'response');
  // Move the cluster change after the answer (seq order is what the analysis reads).
  const [change] = events.splice(i, 1);
  events.splice(answer, 0, change!);
  events.forEach((e, n) => (e.seq = n));
  t.deepEqual(
    plannedTriggers(events).map((p) => p.trigger),
    [
      { verb: 'create', key: 'Pod/default/web-*#1', occurrence: 1 },
      { verb: 'patch', key: 'Pod/default/web-*#1', occurrence: 1 },
    ],
  );
});

/**
 * Through the real proxy: objects created with generateName (by the controller through the proxy,
 * and by someone else straight on the cluster) get new names in every run. The planner names them
 * `ConfigMap/default/cfg-*#<n>`; armed in a second run, the proxy fires write and change triggers
 * naming `cfg-*#3` at the third such object's write and change, not at the others'.
 */
test('through the proxy: write and change triggers naming a generated name fire at the n-th object with that prefix', async (t) => {
  const path = '/api/v1/namespaces/default/configmaps';
  const json = (token: string | undefined) => ({ ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' });
  const createVia = async (url: string, token: string | undefined): Promise<string> => {
    const res = await rawRequest(url, {
      method: 'POST',
      path,
      headers: json(token),
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'cfg-' }, data: { v: '1' } }),
    });
    t.is(res.status, 201);
    return (JSON.parse(res.body.toString()) as { metadata: { name: string } }).metadata.name;
  };
  const patchVia = async (url: string, token: string, name: string): Promise<void> => {
    const res = await rawRequest(url, {
      method: 'PATCH',
      path: `${path}/${name}`,
      headers: { ...json(token), 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { v: '2' } }),
    });
    t.is(res.status, 200);
  };
  /** The controller creates cfg-*#1, the workload cfg-*#2 (not through the proxy), the controller cfg-*#3; then patches #3 and #1. */
  const sequence = async (env: Awaited<ReturnType<typeof startRecordedProxy>>): Promise<string[]> => {
    const { proxy, cluster, recorder } = env;
    const seen = (name: string) => waitFor(`the recorder to see ${name}`, () => recorder.pastChanges().some((c) => c.key === `ConfigMap/default/${name}`));
    const first = await createVia(proxy.url, proxy.controllerToken);
    await seen(first);
    const second = await createVia(cluster.url, cluster.token); // straight on the cluster: the proxy sees it only as a change
    await seen(second);
    const third = await createVia(proxy.url, proxy.controllerToken);
    await patchVia(proxy.url, proxy.controllerToken, third);
    await patchVia(proxy.url, proxy.controllerToken, first);
    await waitFor(
      'the recorder to see both patches',
      () => recorder.pastChanges().filter((c) => c.type === 'MODIFIED' && c.key.startsWith('ConfigMap/default/cfg-')).length === 2,
    );
    return [first, second, third];
  };

  // Reference run: what the planner names.
  const ref = await startRecordedProxy(t);
  const refNames = await sequence(ref);
  const events = [...ref.trace.events].sort((a, b) => a.seq - b.seq);
  const planned = plannedTriggers(events).map((p) => p.trigger);
  t.deepEqual(planned, [
    { verb: 'create', key: 'ConfigMap/default/cfg-*#1', occurrence: 1 },
    { verb: 'create', key: 'ConfigMap/default/cfg-*#3', occurrence: 1 },
    { verb: 'patch', key: 'ConfigMap/default/cfg-*#3', occurrence: 1 },
    { verb: 'patch', key: 'ConfigMap/default/cfg-*#1', occurrence: 1 },
  ]);
  const run = analyzeRun(events, { quietMs: 1000, stateHashes: false });
  const updates = run.changes.filter((c) => c.eventType === 'MODIFIED' && c.key.includes('cfg-'));
  t.deepEqual(
    updates.map((c) => c.key),
    ['ConfigMap/default/cfg-*#3', 'ConfigMap/default/cfg-*#1'],
  );

  // Test run: new random names, the same triggers.
  const test2 = await startRecordedProxy(t);
  const fired: Record<string, string | undefined> = {};
  const arm = (label: string, trigger: Parameters<typeof test2.proxy.primitives.triggers.arm>[0]) =>
    test2.proxy.primitives.triggers.arm(trigger, (info) => (fired[label] = info.key));
  arm('create #3', { write: { verb: 'create', key: 'ConfigMap/default/cfg-*#3', occurrence: 1 } });
  arm('patch #3', { write: { verb: 'patch', key: 'ConfigMap/default/cfg-*#3', occurrence: 1 } });
  arm('update #1', { change: { key: 'ConfigMap/default/cfg-*#1', change: 'update', occurrence: 1 } });
  arm('create #2', { change: { key: 'ConfigMap/default/cfg-*#2', change: 'create', occurrence: 1 } });
  const names = await sequence(test2);
  t.notDeepEqual(names, refNames, 'generated names differ between runs');
  await waitFor('every trigger', () => Object.keys(fired).length === 4);
  t.deepEqual(fired, {
    'create #3': `ConfigMap/default/${names[2]}`,
    'patch #3': `ConfigMap/default/${names[2]}`,
    'update #1': `ConfigMap/default/${names[0]}`,
    'create #2': `ConfigMap/default/${names[1]}`,
  });
});
