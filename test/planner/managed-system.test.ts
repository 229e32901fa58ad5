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

function upgradeTrace(): TraceBuilder {
  return (
    new TraceBuilder()
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
      .stepDone(1)
      .appCall('kv', POD, 'POST', '/upgrade')
      .appCall('kv', POD, 'GET', '/version')
      .write('patch', KV, { subresource: 'status', set: { 'status.version': 'v2' } })
  );
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

test('without calls to an application there are no managed-system plans; unpruned, every answered call gets one', (t) => {
  const none = new TraceBuilder().external('ADDED', KV, { deliver: true }).write('patch', KV, { subresource: 'status', set: { 'status.version': 'v1' } });
  t.deepEqual(plansOf(plan(none.events), 'managed-system'), []);
  t.is(plansOf(plan(upgradeTrace().events, { prune: false }), 'managed-system').length, 6);
});
