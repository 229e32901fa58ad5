import test from 'ava';
import { parse } from 'yaml';
import { planTests, type PlannerOutput } from '../../planner/index.js';
import { serializePlan, validatePlan, type WriteTrigger } from '../../src/model/plan.js';
import type { TraceEvent } from '../../src/model/trace.js';
import { TraceBuilder } from './_trace-builder.js';

const DB = 'Database/default/db1';
const SECRET = 'Secret/default/db1-tls';

function plan(trace: Iterable<TraceEvent>): PlannerOutput {
  return planTests({ controller: 'db-operator', workload: 'create-and-scale', trace });
}

function triggers(out: PlannerOutput): WriteTrigger[] {
  return out.plans.map((p) => {
    const fault = p.spec.faults[0]!;
    if (fault.type !== 'crash-after-write') throw new Error(`unexpected fault ${fault.type}`);
    return fault.after;
  });
}

function stages(out: PlannerOutput): Record<string, number> {
  return Object.fromEntries(out.stats[0]!.stages.map((s) => [s.stage, s.plans]));
}

test('create, status patch and update each get a plan with their own occurrence counts', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('create', SECRET)
    .write('update', DB)
    .write('patch', DB, { subresource: 'status' }).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'patch', key: DB, subresource: 'status', occurrence: 1 },
    { verb: 'create', key: SECRET, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
    { verb: 'patch', key: DB, subresource: 'status', occurrence: 2 },
  ]);
  t.deepEqual(
    out.plans.map((p) => p.metadata.name),
    ['intermediate-0001', 'intermediate-0002', 'intermediate-0003', 'intermediate-0004', 'intermediate-0005'],
  );
  const second = out.plans[1]!;
  t.deepEqual(second, {
    apiVersion: 'kperturb.dev/v1',
    kind: 'TestPlan',
    metadata: { name: 'intermediate-0002' },
    spec: {
      controller: 'db-operator',
      workload: 'create-and-scale',
      pattern: 'intermediate-state',
      description: `restart the controller right after it patches ${DB} status (1st time)`,
      faults: [{ type: 'crash-after-write', after: { verb: 'patch', key: DB, subresource: 'status', occurrence: 1 } }],
    },
  });
  t.deepEqual(out.stats, [
    {
      pattern: 'intermediate-state',
      stages: [
        { stage: 'baseline', plans: 5 },
        { stage: 'controller-bookkeeping', plans: 5 },
        { stage: 'identifiable-writes', plans: 5 },
        { stage: 'effective-writes', plans: 5 },
      ],
    },
  ]);
});

test('plans survive a round trip through the plan file format', (t) => {
  const out = plan(new TraceBuilder().write('create', DB).write('patch', DB, { subresource: 'status' }).write('delete', DB).events);
  t.is(out.plans.length, 3);
  for (const p of out.plans) t.deepEqual(validatePlan(parse(serializePlan(p)), 'plan.yaml'), p);
});

test('a no-op update gets no plan but still counts towards later occurrences', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB)
    .write('update', DB, { change: 'none' }) // answered with the RV of the previous change, which happened before it
    .write('update', DB).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 3 },
  ]);
  t.is(stages(out).baseline, 4);
  t.is(stages(out)['effective-writes'], 3);
});

test('a no-op patch whose resourceVersion never appears in the cluster trace gets no plan', (t) => {
  // The object existed before the recorder started: its RV ("1") has no cluster-change.
  const out = plan(new TraceBuilder().write('patch', 'ConfigMap/default/pre-existing', { change: 'none' }).events);
  t.deepEqual(out.plans, []);
  t.is(stages(out).baseline, 1);
  t.is(stages(out)['effective-writes'], 0);
});

test('failed writes produce no plan and are not counted', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB, { status: 409 })
    .write('update', DB)
    .write('create', SECRET, { status: 409 }).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
  t.is(stages(out).baseline, 2);
});

test('leader-election leases and events produce no plan', (t) => {
  const lease = 'Lease/kube-system/db-operator-leader';
  const trace = new TraceBuilder()
    .write('create', lease)
    .write('update', lease)
    .write('create', 'Event/default/db1.17a2')
    .write('update', 'ConfigMap/kube-system/old-style-lock', { body: { metadata: { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } } } })
    .write('create', DB).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [{ verb: 'create', key: DB, occurrence: 1 }]);
  t.deepEqual(stages(out), { baseline: 5, 'controller-bookkeeping': 1, 'identifiable-writes': 1, 'effective-writes': 1 });
});

test('dry-run writes produce no plan and are not counted', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB, { query: { dryRun: 'All' } })
    .write('update', DB).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
  t.is(stages(out).baseline, 2);
});

test('reads, deletecollection and unnamed creates produce no plan', (t) => {
  const trace = new TraceBuilder()
    .write('get', DB)
    .write('list', DB)
    .write('deletecollection', 'Pod/default/x')
    .write('create', 'Pod/default/web-7xk2p', { unnamed: true }).events;
  const out = plan(trace);
  t.deepEqual(out.plans, []);
  t.deepEqual(stages(out), { baseline: 1, 'controller-bookkeeping': 1, 'identifiable-writes': 0, 'effective-writes': 0 });
});

test('a delete is effective when the cluster shows the deletion (or the deletionTimestamp)', (t) => {
  const trace = new TraceBuilder()
    .write('create', SECRET)
    .write('delete', SECRET)
    .write('create', DB)
    .write('delete', DB, { change: 'MODIFIED' }) // finalizer: deletionTimestamp set
    .write('delete', DB, { change: 'none' }).events; // already terminating: nothing changes
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: SECRET, occurrence: 1 },
    { verb: 'delete', key: SECRET, occurrence: 1 },
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'delete', key: DB, occurrence: 1 },
  ]);
});

test('a create on a subresource counts only if the object changed', (t) => {
  const trace = new TraceBuilder()
    .write('create', 'ServiceAccount/default/sa', { subresource: 'token', change: 'none' })
    .write('create', 'Pod/default/web-0', { subresource: 'eviction', change: 'DELETED' }).events;
  t.deepEqual(triggers(plan(trace)), [{ verb: 'create', key: 'Pod/default/web-0', subresource: 'eviction', occurrence: 1 }]);
});

test('a controller trace alone (no cluster trace) keeps every write', (t) => {
  const trace = new TraceBuilder({ clusterTrace: false }).write('create', DB).write('update', DB, { change: 'none' }).events;
  const withoutCluster = trace.filter((e) => e.type !== 'cluster-change');
  t.is(plan(withoutCluster).plans.length, 2);
});

test('occurrences count per subresource and verb separately', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('update', DB, { subresource: 'status' })
    .write('patch', DB).events;
  t.deepEqual(
    triggers(plan(trace)).map((tr) => `${tr.verb}/${tr.subresource ?? ''}/${tr.occurrence}`),
    ['create//1', 'patch//1', 'patch/status/1', 'update/status/1', 'patch//2'],
  );
});

test('planning is deterministic and independent of input order', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('update', DB, { change: 'none' })
    .write('create', SECRET)
    .write('update', DB).events;
  const first = plan(trace);
  const again = plan(trace);
  t.deepEqual(first, again);
  const shuffled = [...trace].reverse();
  shuffled.push(shuffled.shift()!);
  const fromShuffled = plan(shuffled);
  t.deepEqual(fromShuffled, first);
  t.is(fromShuffled.plans.map(serializePlan).join('---\n'), first.plans.map(serializePlan).join('---\n'));
  t.is(first.plans.length, 4);
});

test('a generator input is accepted', (t) => {
  const events = new TraceBuilder().write('create', DB).events;
  function* gen() {
    yield* events;
  }
  t.is(plan(gen()).plans.length, 1);
});
