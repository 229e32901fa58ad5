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
  t.deepEqual(firesAt(events, planned.map((p) => p.trigger!)), planned.map((p) => p.requestId));
});

test('reference runs that plans do not come from count the same way (determinism checks agree)', (t) => {
  const run = () =>
    new TraceBuilder()
      .write('create', CM, { unnamed: true })
      .write('delete', CM)
      .write('create', CM)
      .write('patch', DB).events;
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
  t.is(countedWriteKey({ verb: 'create', resource: cm }, { apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns' } }), 'ConfigMap/ns/a', 'kind from the request');
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
  await waitFor('the recorder to see both creations', () => ref.trace.ofType('cluster-change').filter((c) => c.key === CM && c.eventType === 'ADDED').length === 2);
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
  run.proxy.armCrashAfterWrite(trigger!, (info) => (firedAt = info.requestId));
  const second = await sequence(run.proxy.url, run.proxy.controllerToken);
  await second.yamlCreate;
  t.is(firedAt, undefined, 'not at the YAML create');
  void second.jsonCreate().catch(() => undefined); // its answer is held by the crash
  await waitFor('the trigger', () => firedAt !== undefined);
  const jsonCreate = run.trace.ofType('request').filter((r) => r.verb === 'create')[1]!;
  t.is(firedAt, jsonCreate.id);
});
