import test from 'ava';
import { parse } from 'yaml';
import type { PlannerOutput } from '../../planner/index.js';
import { serializePlan, type WriteTrigger } from '../../src/model/plan.js';
import { validatePlan } from '../../src/io/plan-file.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, SECRET, STS, faultsOf, plan, plansOf, stages } from './_helpers.js';

function triggers(out: PlannerOutput): WriteTrigger[] {
  return faultsOf(out, 'intermediate-state').map((f) => {
    if (f.type !== 'crash-after-write') throw new Error(`unexpected fault ${f.type}`);
    return f.after;
  });
}

const stagesOf = (out: PlannerOutput) => stages(out, 'intermediate-state');

test('every effective write of a burst but the last gets a plan, with its own occurrence count', (t) => {
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
  ]);
  t.deepEqual(
    plansOf(out, 'intermediate-state').map((p) => p.metadata.name),
    ['intermediate-0001', 'intermediate-0002', 'intermediate-0003', 'intermediate-0004'],
  );
  t.deepEqual(plansOf(out, 'intermediate-state')[1], {
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
  t.deepEqual(stagesOf(out), { baseline: 5, causality: 4, 'effective-writes': 4, deterministic: 4, deduplicated: 4 });
});

test('a quiet gap alone does not end a reconcile: a controller may wait inside one without a request', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('create', SECRET)
    .wait(1500)
    .write('patch', DB, { subresource: 'status' })
    .wait(1500)
    .write('update', DB)
    .write('patch', DB, { subresource: 'status' }).events;
  const out = plan(trace);
  t.is(triggers(out).length, 4);
  t.deepEqual(stagesOf(out), { baseline: 5, causality: 4, 'effective-writes': 4, deterministic: 4, deduplicated: 4 });
});

test('a change by someone else shown to the controller in a quiet gap ends the reconcile: the last write before it gets no plan', (t) => {
  const trace = new TraceBuilder({ setup: { [CM]: {} } })
    .write('create', DB)
    .write('create', SECRET)
    .wait(1500)
    .external('MODIFIED', CM, { deliver: true })
    .write('patch', DB, { subresource: 'status' })
    .wait(1500)
    .external('MODIFIED', CM, { deliver: true })
    .write('update', DB)
    .write('patch', DB, { subresource: 'status' }).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
  t.deepEqual(stagesOf(out), { baseline: 5, causality: 2, 'effective-writes': 2, deterministic: 2, deduplicated: 2 });
  // Delivered inside a burst (no quiet gap), the same change does not split it.
  t.is(triggers(plan(trace, { quietMs: 5000 })).length, 4);
});

test('rabbitmq-operator #782: a delete, a wait on the cache while only its echoes arrive, then the dependent write: the delete gets a plan', (t) => {
  const PVC = 'PersistentVolumeClaim/default/persistence-db1-0';
  const POD = 'Pod/default/db1-0';
  const build = (interrupt: boolean) => {
    const b = new TraceBuilder({ setup: { [DB]: {}, [PVC]: {}, [CM]: {} } })
      .external('MODIFIED', DB, { deliver: true, set: { 'spec.storage': '15Gi' } })
      .write('create', STS, { owner: DB, deliver: true })
      .external('ADDED', POD, { owner: STS, deliver: true })
      .write('delete', STS, {
        change: 'MODIFIED',
        set: { 'metadata.deletionTimestamp': '2021-01-01T00:00:00Z', 'metadata.finalizers': ['orphan'] },
        deliver: true,
      })
      .wait(1000)
      // The garbage collector orphans the pod and removes the finalizer: echoes of the controller's delete.
      .external('MODIFIED', POD, { deliver: true, set: { 'metadata.ownerReferences': undefined } })
      .external('DELETED', STS, { deliver: true });
    if (interrupt) b.external('MODIFIED', CM, { deliver: true });
    return b.wait(3000).write('update', PVC, { set: { 'spec.resources.requests.storage': '15Gi' } }).events;
  };
  const deleteTrigger = { verb: 'delete', key: STS, occurrence: 1 };
  t.deepEqual(
    triggers(plan(build(false))).filter((w) => w.verb === 'delete'),
    [deleteTrigger],
  );
  // A change the controller did not make, shown in the gap, could have started the PVC update's reconcile.
  t.deepEqual(
    triggers(plan(build(true))).filter((w) => w.verb === 'delete'),
    [],
  );
});

test('a workload step that writes, between two quiet bursts, ends the reconcile', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('create', SECRET)
    .wait(1500)
    .stepStart(1, 'write', [CM])
    .external('ADDED', CM)
    .stepDone(1, { wrote: [CM] })
    .write('update', DB)
    .write('patch', DB, { subresource: 'status' }).events;
  t.deepEqual(triggers(plan(trace)), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
});

test("under serialized delivery, an episode opened by an echo of the controller's own write continues its reconcile; one opened by another change does not", (t) => {
  const echo = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', SECRET, { deliver: true })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Creating' } })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } }).events;
  const out = plan(echo);
  t.is(out.causality, 'serialized-episodes');
  t.deepEqual(triggers(out), [
    { verb: 'create', key: SECRET, occurrence: 1 },
    { verb: 'patch', key: DB, subresource: 'status', occurrence: 1 },
  ]);
  const other = new TraceBuilder({ setup: { [CM]: {} } })
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', SECRET)
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Creating' } })
    .external('MODIFIED', CM, { deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } }).events;
  t.deepEqual(triggers(plan(other)), [{ verb: 'create', key: SECRET, occurrence: 1 }]);
});

test("under serialized delivery, the echo of a create the request did not name (generateName) continues its reconcile: it is the controller's own write", (t) => {
  // snapshot-copy (fixed) on a loaded machine: the controller paused past the quiet window between
  // creating its copy and recording it in status, so the copy's echo opened the next episode.
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', 'ConfigMap/default/db1-x7k2p', { unnamed: true, generateName: 'db1-', deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } }).events;
  t.deepEqual(triggers(plan(trace)), [{ verb: 'create', key: 'ConfigMap/default/db1-*#1', occurrence: 1 }]);
});

test('an episode that ended without the controller going quiet merges into the next', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', SECRET, { deliver: true })
    .episode({ quiet: false })
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } }).events;
  t.deepEqual(triggers(plan(trace)), [{ verb: 'create', key: SECRET, occurrence: 1 }]);
});

test('an episode that ended because the controller kept repeating a refused write does not merge: what follows reacts to the next event', (t) => {
  const trace = (end: { quiet: boolean; retrying?: boolean }) =>
    new TraceBuilder({ setup: { [CM]: {} } })
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', SECRET)
      .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Creating' } })
      .external('MODIFIED', CM, { deliver: true })
      .episode(end)
      .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } }).events;
  // As after a quiet episode: the first status patch ends its burst, so it has no crash point.
  t.deepEqual(triggers(plan(trace({ quiet: false, retrying: true }))), [{ verb: 'create', key: SECRET, occurrence: 1 }]);
  // An episode cut by its time limit merges: the first patch is intermediate.
  t.deepEqual(triggers(plan(trace({ quiet: false }))), [
    { verb: 'create', key: SECRET, occurrence: 1 },
    { verb: 'patch', key: DB, subresource: 'status', occurrence: 1 },
  ]);
});

test('a restart of the controller ends a burst', (t) => {
  const trace = new TraceBuilder().write('create', DB).restart(2).write('create', SECRET, { incarnation: 2 }).write('update', DB, { incarnation: 2 }).events;
  t.deepEqual(triggers(plan(trace)), [{ verb: 'create', key: SECRET, occurrence: 1 }]);
});

test('plans survive a round trip through the plan file format', (t) => {
  const out = plan(new TraceBuilder().write('create', DB).write('patch', DB, { subresource: 'status' }).write('delete', DB).events);
  // Two crash points, and two error-path plans for each of their writes.
  t.is(out.plans.length, 6);
  for (const p of out.plans) t.deepEqual(validatePlan(parse(serializePlan(p)), 'plan.yaml'), p);
});

test('a no-op write gets no plan, still counts towards later occurrences, and does not make the write before it intermediate', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB)
    .write('update', DB, { change: 'none' }) // answered with the RV of the previous change, which happened before it
    .write('update', DB)
    .write('update', DB, { change: 'none' }).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
  // causality keeps all but the last attempt; effectiveness also drops the no-ops and the last effective write.
  t.deepEqual(stagesOf(out), { baseline: 5, causality: 4, 'effective-writes': 2, deterministic: 2, deduplicated: 2 });
});

test('a no-op patch whose resourceVersion never appears in the cluster trace gets no plan', (t) => {
  // The object existed before the recorder started: its RV ("1") has no cluster-change.
  const out = plan(new TraceBuilder().write('patch', 'ConfigMap/default/pre-existing', { change: 'none' }).write('create', DB).events);
  t.deepEqual(triggers(out), []);
  t.is(stagesOf(out).causality, 1);
  t.is(stagesOf(out)['effective-writes'], 0);
});

test('failed writes produce no plan, are not counted, but are part of the baseline', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB, { status: 409 })
    .write('update', DB)
    .write('create', SECRET, { status: 409 })
    .write('create', SECRET).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
  t.is(stagesOf(out).baseline, 5);
});

test('leader-election leases and events produce no plan and do not extend a burst', (t) => {
  const lease = 'Lease/kube-system/db-operator-leader';
  const trace = new TraceBuilder()
    .write('create', lease)
    .write('update', lease)
    .write('create', 'Event/default/db1.17a2')
    .write('update', 'ConfigMap/kube-system/old-style-lock', { body: { metadata: { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } } } })
    .write('create', DB)
    .write('create', SECRET)
    .write('update', lease).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [{ verb: 'create', key: DB, occurrence: 1 }]);
  t.deepEqual(stagesOf(out), { baseline: 7, causality: 5, 'effective-writes': 5, deterministic: 1, deduplicated: 1 });
});

test('leader-election renewals in a quiet gap do not bridge it: the gap still ends the burst', (t) => {
  const lease = 'Lease/rabbitmq-system/op-leader';
  const lock = 'ConfigMap/rabbitmq-system/op-leader';
  const leader = { 'metadata.annotations': { 'control-plane.alpha.kubernetes.io/leader': '{"holderIdentity":"me"}' } };
  const b = new TraceBuilder({ setup: { [CM]: {}, [lock]: leader, [lease]: {} } }).write('create', DB).write('create', SECRET);
  for (let i = 0; i < 6; i++) {
    b.wait(500)
      .read(lock)
      .write('update', lock, { body: { metadata: { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } } } })
      .read(lease)
      .write('update', lease);
    if (i === 3) b.external('MODIFIED', CM, { deliver: true });
  }
  const trace = b.wait(500).write('patch', DB, { subresource: 'status' }).events;
  // The gap (3.5 s of renewals) ends the burst and the change shown in it ends the reconcile.
  t.deepEqual(triggers(plan(trace)), [{ verb: 'create', key: DB, occurrence: 1 }]);
});

test('dry-run writes produce no plan and are not counted', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('update', DB, { query: { dryRun: 'All' } })
    .write('update', DB)
    .write('update', DB).events;
  t.deepEqual(triggers(plan(trace)), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'update', key: DB, occurrence: 1 },
  ]);
});

test('deletecollection produces no plan; a create the request does not name is named by the object its answer returns', (t) => {
  const trace = new TraceBuilder()
    .write('deletecollection', 'Pod/default/x')
    .write('create', 'Pod/default/web-7xk2p', { unnamed: true, generateName: 'web-' })
    .write('create', 'ConfigMap/default/from-protobuf', { unnamed: true })
    .write('create', DB).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: 'Pod/default/web-*#1', occurrence: 1 },
    { verb: 'create', key: 'ConfigMap/default/from-protobuf', occurrence: 1 },
  ]);
  t.deepEqual(stagesOf(out), { baseline: 4, causality: 3, 'effective-writes': 3, deterministic: 2, deduplicated: 2 });
});

test('a delete is effective when the cluster shows the deletion (or the deletionTimestamp)', (t) => {
  const trace = new TraceBuilder()
    .write('create', SECRET)
    .write('delete', SECRET)
    .write('create', DB)
    .write('delete', DB, { change: 'MODIFIED', set: { 'metadata.deletionTimestamp': '2024-01-01T00:00:00Z' } }) // finalizer
    .write('delete', DB, { change: 'none' }) // already terminating: nothing changes
    .write('create', CM_LAST).events;
  t.deepEqual(triggers(plan(trace)), [
    { verb: 'create', key: SECRET, occurrence: 1 },
    { verb: 'delete', key: SECRET, occurrence: 1 },
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'delete', key: DB, occurrence: 1 },
  ]);
});
const CM_LAST = 'ConfigMap/default/last';

test('a create on a subresource counts only if the object changed', (t) => {
  const trace = new TraceBuilder()
    .write('create', 'Pod/default/web-0')
    .write('create', 'ServiceAccount/default/sa', { subresource: 'token', change: 'none' })
    .write('create', 'Pod/default/web-0', { subresource: 'eviction', change: 'DELETED' })
    .write('create', CM_LAST).events;
  t.deepEqual(triggers(plan(trace)), [
    { verb: 'create', key: 'Pod/default/web-0', occurrence: 1 },
    { verb: 'create', key: 'Pod/default/web-0', subresource: 'eviction', occurrence: 1 },
  ]);
});

test('a controller trace alone (no cluster trace) keeps every write', (t) => {
  const trace = new TraceBuilder({ clusterTrace: false }).write('create', DB).write('update', DB, { change: 'none' }).write('create', SECRET).events;
  const withoutCluster = trace.filter((e) => e.type !== 'cluster-change');
  t.is(triggers(plan(withoutCluster)).length, 2);
});

test('occurrences count per subresource and verb separately', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('update', DB, { subresource: 'status' })
    .write('patch', DB)
    .write('create', CM_LAST).events;
  t.deepEqual(
    triggers(plan(trace)).map((tr) => `${tr.verb}/${tr.subresource ?? ''}/${tr.occurrence}`),
    ['create//1', 'patch//1', 'patch/status/1', 'update/status/1', 'patch//2'],
  );
});

test('dedup: two crash points that expose the same cluster state become one plan (the later)', (t) => {
  const trace = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB, { set: { 'spec.paused': true } })
    .write('patch', DB, { set: { 'spec.paused': false } })
    .write('patch', DB, { set: { 'spec.paused': true } }) // same state as after the 1st patch
    .write('create', SECRET).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'patch', key: DB, occurrence: 2 },
    { verb: 'patch', key: DB, occurrence: 3 },
  ]);
  t.deepEqual(stagesOf(out), { baseline: 5, causality: 4, 'effective-writes': 4, deterministic: 4, deduplicated: 3 });
});

test('dedup: a state holding another life of an object (another uid) is another state, even with the same fields', (t) => {
  // The controller builds the Database, its Secret and its StatefulSet; all three are deleted, and it
  // builds them again with the same fields. After the second Database's create the cluster holds a
  // new object (its Secret will carry the new uid in ownerReferences): a crash there is another test.
  const build = (b: TraceBuilder) => b.write('create', DB).write('create', SECRET, { owner: DB }).write('create', STS, { owner: DB });
  const trace = build(
    build(new TraceBuilder())
      .wait(5000)
      .external('DELETED', STS, { deliver: true })
      .external('DELETED', SECRET, { deliver: true })
      .external('DELETED', DB, { deliver: true })
      .wait(5000),
  ).events;
  const out = plan(trace);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'create', key: SECRET, occurrence: 1 },
    // The whole first build: its deletions are echoes of what the reconcile wrote, so one reconcile.
    { verb: 'create', key: STS, occurrence: 1 },
    { verb: 'create', key: DB, occurrence: 2 },
    { verb: 'create', key: SECRET, occurrence: 2 },
  ]);
  t.is(stagesOf(out).deduplicated, 5);
});

test('deterministic: a write that only the last reference run made gets no plan', (t) => {
  const first = new TraceBuilder().write('create', DB).write('patch', DB, { subresource: 'status' }).write('create', SECRET).events;
  const last = new TraceBuilder()
    .write('create', DB)
    .write('patch', DB, { subresource: 'status' })
    .write('patch', DB, { subresource: 'status' })
    .write('create', SECRET).events;
  const out = plan([first, last]);
  t.deepEqual(triggers(out), [
    { verb: 'create', key: DB, occurrence: 1 },
    { verb: 'patch', key: DB, subresource: 'status', occurrence: 1 },
  ]);
  t.deepEqual(stagesOf(out), { baseline: 4, causality: 3, 'effective-writes': 3, deterministic: 2, deduplicated: 2 });
  t.is(triggers(plan([last])).length, 3);
});

test('prune: false plans a crash after every successful named write, including no-ops, bookkeeping and the last of a burst', (t) => {
  const trace = new TraceBuilder()
    .write('create', 'Lease/kube-system/leader')
    .write('create', DB)
    .write('update', DB, { change: 'none' })
    .write('update', DB, { status: 409 })
    .write('create', SECRET).events;
  const out = plan(trace, { prune: false });
  t.deepEqual(
    triggers(out).map((tr) => `${tr.verb} ${tr.key} ${tr.occurrence}`),
    ['create Lease/kube-system/leader 1', `create ${DB} 1`, `update ${DB} 1`, `create ${SECRET} 1`],
  );
  t.deepEqual(stagesOf(out), { baseline: 5, expressible: 4 });
});
