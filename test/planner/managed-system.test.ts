/**
 * The managed-system rule (planner/rules/managed-system.ts): an app-unavailable plan on each call of
 * the controller to its application that a write of the controller followed, from that call until
 * the controller calls the address again; calls the application failed, and calls after which the
 * controller wrote nothing before the workload's next step, get none.
 */
import test from 'ava';
import { TraceBuilder } from './_trace-builder.js';
import { plan, plansOf, stages } from './_helpers.js';

const KV = 'KVStore/default/kv1';
const POD = 'Pod/default/kv1-0';

/** `callsAfterChange: false`: the same run, but the controller does not call its application again after the change. */
function upgradeTrace(callsAfterChange = true): TraceBuilder {
  const b = new TraceBuilder()
    .stepStart(0, 'write', [KV])
    .external('ADDED', KV, { deliver: true })
    .stepDone(0)
    .external('ADDED', POD)
    .appCall('kv', POD, 'POST', '/upgrade?force=1')
    .appCall('kv', POD, 'GET', '/version')
    .write('patch', KV, { subresource: 'status', set: { 'status.version': 'v1' } })
    .wait(2000)
    // A health check the application failed, and one after which nothing was written.
    .appCall('kv', POD, 'GET', '/health', 503)
    .appCall('kv', POD, 'GET', '/health')
    .stepStart(1, 'write', [KV])
    .external('MODIFIED', KV, { deliver: true, set: { 'spec.version': 'v2' } })
    .stepDone(1);
  if (callsAfterChange) b.appCall('kv', POD, 'POST', '/upgrade').appCall('kv', POD, 'GET', '/version');
  return b.write('patch', KV, { subresource: 'status', set: { 'status.version': 'v2' } });
}

test('each call a write followed gets a plan that fails it and the address until the next call', (t) => {
  const out = plan(upgradeTrace().events);
  const plans = plansOf(out, 'managed-system').filter((p) => p.spec.faults[0]!.type === 'app-unavailable');
  t.deepEqual(
    plans.map((p) => p.spec.faults[0]),
    [
      ['POST', '/upgrade', 1, 1],
      ['GET', '/version', 1, 2],
      ['POST', '/upgrade', 2, 5],
      ['GET', '/version', 2, 6],
    ].map(([operation, path, occurrence, ofKey]) => ({
      type: 'app-unavailable',
      application: 'kv',
      key: POD,
      answer: 'service-unavailable',
      at: { call: { application: 'kv', key: POD, operation, path, occurrence } },
      until: { call: { application: 'kv', key: POD, occurrence: (ofKey as number) + 1 } },
      forSeconds: 5,
    })),
  );
  t.is(
    plans[2]!.spec.description,
    `make kv on ${POD} answer 503 Service Unavailable when the controller calls kv on ${POD} (POST /upgrade) (2nd time), healed until the controller calls kv on ${POD} (6th time) or for 5 s, before the controller patches ${KV} status (2nd time)`,
  );
  t.deepEqual(
    plans.map((p) => p.metadata.name),
    ['managed-0001', 'managed-0002', 'managed-0003', 'managed-0004'],
  );
  // Five answered calls, four followed by a write, and the one pod-crash of OAT's schedule (below).
  t.deepEqual(stages(out, 'managed-system'), { baseline: 6, causality: 5, 'effective-writes': 5, deterministic: 5, deduplicated: 5 });
});

test("OAT's schedule: the pods the controller called after a workload change crash-loop from that change for a few seconds; pods created later are left out", (t) => {
  const crashes = plansOf(plan(upgradeTrace().events), 'managed-system').filter((p) => p.spec.faults[0]!.type === 'pod-crash');
  t.deepEqual(
    crashes.map((p) => p.spec.faults[0]),
    [
      {
        type: 'pod-crash',
        pod: POD,
        mode: 'crash-loop',
        at: { change: { key: KV, change: 'update', fields: [{ path: 'spec.version', after: 'v2' }], occurrence: 1 } },
        forSeconds: 3,
      },
    ],
  );
  t.regex(
    crashes[0]!.spec.description,
    /^crash-loop the containers of Pod\/default\/kv1-0 when KVStore\/default\/kv1 is updated .* healed for 3 s, while the controller acts on the workload's change \(OAT's schedule\)$/,
  );
});

test("OAT's schedule: a call recorded before the workload's change (the recorder's watch behind the stub, as on the real control plane) still makes its pod crash from that change", (t) => {
  const trace = new TraceBuilder()
    .stepStart(0, 'write', [KV])
    .external('ADDED', KV, { deliver: true })
    .stepDone(0)
    .external('ADDED', POD)
    .appCall('kv', POD, 'POST', '/upgrade')
    .write('patch', KV, { subresource: 'status', set: { 'status.version': 'v1' } })
    .wait(2000)
    .stepStart(1, 'write', [KV])
    // The controller called its application on the change before the recorder saw the change.
    .appCall('kv', POD, 'POST', '/upgrade')
    .external('MODIFIED', KV, { deliver: true, set: { 'spec.version': 'v2' } })
    .stepDone(1)
    .write('patch', KV, { subresource: 'status', set: { 'status.version': 'v2' } });
  const crashes = plansOf(plan(trace.events), 'managed-system').flatMap((p) => p.spec.faults.filter((f) => f.type === 'pod-crash'));
  t.deepEqual(
    crashes.map((f) => [f.pod, 'change' in f.at ? f.at.change.fields : undefined]),
    [[POD, [{ path: 'spec.version', after: 'v2' }]]],
  );
});

test('a call that does not come with the same rank in the other reference runs gets no plan (deterministic stage)', (t) => {
  const out = plan([upgradeTrace(false).events, upgradeTrace().events]);
  const calls = plansOf(out, 'managed-system')
    .map((p) => p.spec.faults[0]!)
    .flatMap((f) => (f.type === 'app-unavailable' && 'call' in f.at ? [[f.at.call.operation, f.at.call.path, f.at.call.occurrence]] : []));
  t.deepEqual(calls, [
    ['POST', '/upgrade', 1],
    ['GET', '/version', 1],
  ]);
  t.like(stages(out, 'managed-system'), { 'effective-writes': 5, deterministic: 3 });
});

test('without calls to an application there are no managed-system plans; unpruned, every answered call gets one', (t) => {
  const none = new TraceBuilder().external('ADDED', KV, { deliver: true }).write('patch', KV, { subresource: 'status', set: { 'status.version': 'v1' } });
  t.deepEqual(plansOf(plan(none.events), 'managed-system'), []);
  t.is(plansOf(plan(upgradeTrace().events, { prune: false }), 'managed-system').length, 6);
});

const SET = 'StatefulSet/default/kv1';
const CLAIM = 'PersistentVolumeClaim/default/data-kv1-0';

/** A controller that creates a StatefulSet for its CR and, on a later CR change, grows the claim of its pod. */
function statefulTrace(): TraceBuilder {
  return new TraceBuilder()
    .stepStart(0, 'write', [KV])
    .external('ADDED', KV, { deliver: true })
    .stepDone(0)
    .write('create', SET)
    .external('ADDED', CLAIM)
    .external('ADDED', POD, { owner: SET })
    .external('MODIFIED', POD, { set: { 'spec.nodeName': 'node-1' } })
    .write('patch', KV, { subresource: 'status', set: { 'status.ready': true } })
    .wait(2000)
    .stepStart(1, 'write', [KV])
    .external('MODIFIED', KV, { deliver: true, set: { 'spec.storage': '2Gi' } })
    .stepDone(1)
    .write('patch', CLAIM, { set: { 'spec.resources.requests.storage': '2Gi' } })
    .write('patch', KV, { subresource: 'status', set: { 'status.storage': '2Gi' } });
}

test("OAT's schedule on what the workload runs on: the controller's StatefulSet pod evicted and its node not-ready at each later CR change, the claim it resized refused; its claim created during the change held Pending", (t) => {
  const out = plan(statefulTrace().events);
  const faults = plansOf(out, 'managed-system').map((p) => p.spec.faults[0]!);
  const second = { change: { key: KV, change: 'update', fields: [{ path: 'spec.storage', after: '2Gi' }], occurrence: 1 } };
  t.deepEqual(faults, [
    { type: 'pvc-fault', claim: CLAIM, mode: 'pending', at: { change: { key: CLAIM, change: 'create', occurrence: 1 } }, forSeconds: 3 },
    { type: 'pod-evict', pod: POD, how: 'evict', at: second },
    { type: 'node-not-ready', node: 'Node/node-1', mode: 'not-ready', evictAfterSeconds: 1, at: second, forSeconds: 3 },
    { type: 'pvc-fault', claim: CLAIM, mode: 'resize-refused', at: second, forSeconds: 3 },
  ]);
  t.regex(
    plansOf(out, 'managed-system')[1]!.spec.description,
    /^evict Pod\/default\/kv1-0 \(someone else\) when KVStore\/default\/kv1 is updated .*\(OAT's schedule\)$/,
  );
  t.deepEqual(stages(out, 'managed-system'), { baseline: 4, causality: 4, 'effective-writes': 4, deterministic: 4, deduplicated: 4 });
});

test('pods, claims and nodes the controller did not bring (no StatefulSet of its own, no pod it created) get no such plans', (t) => {
  const foreign = new TraceBuilder()
    .stepStart(0, 'write', [KV])
    .external('ADDED', KV, { deliver: true })
    .stepDone(0)
    .external('ADDED', SET)
    .external('ADDED', POD, { owner: SET })
    .external('MODIFIED', POD, { set: { 'spec.nodeName': 'node-1' } })
    .write('patch', KV, { subresource: 'status', set: { 'status.ready': true } })
    .stepStart(1, 'write', [KV])
    .external('MODIFIED', KV, { deliver: true, set: { 'spec.storage': '2Gi' } })
    .stepDone(1)
    .write('patch', KV, { subresource: 'status', set: { 'status.storage': '2Gi' } });
  t.deepEqual(plansOf(plan(foreign.events), 'managed-system'), []);
});

test("OAT's schedule on a pod the controller created with a generated name names it by its folded key, which a test run resolves to the pod it creates in its place", (t) => {
  const generated = 'Pod/default/kv1-node-x7k2p';
  const trace = new TraceBuilder()
    .stepStart(0, 'write', [KV])
    .external('ADDED', KV, { deliver: true })
    .stepDone(0)
    .write('create', generated, { unnamed: true, generateName: 'kv1-node-' })
    .external('MODIFIED', generated, { set: { 'spec.nodeName': 'node-1' } })
    .write('patch', KV, { subresource: 'status', set: { 'status.ready': true } })
    .wait(2000)
    .stepStart(1, 'write', [KV])
    .external('MODIFIED', KV, { deliver: true, set: { 'spec.storage': '2Gi' } })
    .stepDone(1)
    .write('patch', KV, { subresource: 'status', set: { 'status.storage': '2Gi' } });
  const faults = plansOf(plan(trace.events), 'managed-system').map((p) => p.spec.faults[0]!);
  t.deepEqual(
    faults.map((f) => (f.type === 'pod-evict' ? f.pod : f.type)),
    ['Pod/default/kv1-node-*#1', 'node-not-ready'],
  );
});
