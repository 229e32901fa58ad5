import test from 'ava';
import type { PlannerOutput } from '../../planner/index.js';
import type { HoldUntilFault } from '../../src/model/plan.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, STS, faultsOf, plan, plansOf, stages } from './_helpers.js';

const POD = 'Pod/default/db1-0';
const TS = '2024-01-01T00:00:00Z';

function holds(out: PlannerOutput): string[] {
  return (faultsOf(out, 'unobserved-state') as HoldUntilFault[]).map((f) => {
    const name = (c: HoldUntilFault['from']) =>
      `${c.change}${c.fields ? `[${c.fields.map((x) => `${x.path}=${JSON.stringify(x.after)}`).join(',')}]` : ''} #${c.occurrence}`;
    return `${f.key}: ${name(f.from)} until ${name(f.until)}`;
  });
}

test('a pod the controller reacted to, then deleted: hold from its creation until its deletion', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD, { deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.members': 1 } })
    .episode()
    .external('DELETED', POD, { deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), [`${POD}: create #1 until delete #1`]);
  const p = plansOf(out, 'unobserved-state')[0]!;
  t.deepEqual(p.spec.faults, [
    { type: 'hold-until', key: POD, from: { key: POD, change: 'create', occurrence: 1 }, until: { key: POD, change: 'delete', occurrence: 1 } },
  ]);
  t.is(
    p.spec.description,
    `hide every change of ${POD} from the controller from when ${POD} is created (1st time) until ${POD} is deleted (1st time), then make it relist`,
  );
});

test('a transient deletionTimestamp (the controller cleans up only on seeing it) is planned until the final deletion', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD)
    .external('MODIFIED', POD, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .write('delete', 'PersistentVolumeClaim/default/data-db1-0')
    .external('DELETED', POD, { deliver: true })
    .episode().events;
  t.deepEqual(holds(plan(trace)), [`${POD}: update[metadata.deletionTimestamp="<timestamp>"] #1 until delete #1`]);
});

test('a field changed and changed again: hold from the first change until the second', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { set: { 'status.phase': 'Pending' } })
    .external('MODIFIED', DB, { set: { 'status.phase': 'Failed' }, deliver: true })
    .episode()
    .write('create', 'Event/default/x') // bookkeeping only: not a reaction that counts
    .write('patch', DB, { set: { 'spec.restart': true } })
    .episode()
    .external('MODIFIED', DB, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode().events;
  t.deepEqual(holds(plan(trace)), [`${DB}: update[status.phase="Failed"] #1 until update[status.phase="Running"] #1`]);
});

test('must not: a change that no later change cancels (another field changes, the object lives on)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.version': '14' } })
    .external('MODIFIED', DB, { set: { 'spec.version': '15' }, deliver: true })
    .episode()
    .write('update', 'ConfigMap/default/db1-config')
    .episode()
    .external('MODIFIED', DB, { set: { 'status.phase': 'Ready' }, deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), []);
  t.is(stages(out, 'unobserved-state').baseline, 0);
});

test('must not: a change the controller reacted to with nothing (causality), or with a no-op only (effective writes)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', 'ConfigMap/default/a', { set: { 'data.x': '1' }, deliver: true })
    .episode() // no write in this episode
    .external('ADDED', 'ConfigMap/default/b', { set: { 'data.x': '1' }, deliver: true })
    .episode()
    .write('patch', 'ConfigMap/default/b', { change: 'none' })
    .episode()
    .external('DELETED', 'ConfigMap/default/a', { deliver: true })
    .episode()
    .external('DELETED', 'ConfigMap/default/b', { deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), []);
  t.deepEqual(stages(out, 'unobserved-state'), { baseline: 2, causality: 1, releasable: 1, 'effective-writes': 0, deterministic: 0, deduplicated: 0 });
});

test('must not: a change the controller was never shown (it does not watch that kind)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD)
    .write('patch', DB, { set: { 'spec.x': 1 } })
    .external('DELETED', POD).events;
  t.is(stages(plan(trace), 'unobserved-state').baseline, 0);
});

test('must not: an object the controller only reads and never watches (a hold hides watch events only)', (t) => {
  // The controller GETs the pod and reacts, but has no watch on pods: a hold on the pod can never
  // hide anything, and would end not injected after the proxy's maximum hold.
  const trace = new TraceBuilder()
    .external('ADDED', POD)
    .read(POD)
    .write('patch', DB, { set: { 'status.members': 1 } })
    .external('DELETED', POD)
    .read(DB).events;
  const out = plan(trace);
  t.deepEqual(holds(out), []);
  t.is(stages(out, 'unobserved-state').baseline, 0);
});

test('a deletion cancelled by a re-creation: hold from the deletion until the object is back', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD, { deliver: true })
    .episode()
    .external('DELETED', POD, { deliver: true })
    .episode()
    .write('create', 'PersistentVolumeClaim/default/x')
    .episode()
    .external('ADDED', POD, { deliver: true })
    .episode().events;
  // The controller reacted to the deletion (it created a claim): a controller that never saw the pod
  // live may not, so the pod's whole first life is hidden too.
  t.deepEqual(holds(plan(trace)), [`${POD}: create #1 until delete #1`, `${POD}: delete #1 until create #2`]);
});

test('deterministic: a change whose cancelling change happens in one reference run only gets no plan', (t) => {
  const run = (deleted: boolean) => {
    const b = new TraceBuilder()
      .external('ADDED', POD, { deliver: true })
      .episode()
      .write('patch', DB, { set: { 'status.members': 1 } })
      .episode();
    if (deleted) b.external('DELETED', POD, { deliver: true }).episode();
    return b.events;
  };
  const out = plan([run(false), run(true)]);
  t.deepEqual(holds(out), []);
  t.is(stages(out, 'unobserved-state')['effective-writes'], 1);
  t.is(stages(out, 'unobserved-state').deterministic, 0);
  t.is(holds(plan([run(true), run(true)])).length, 1);
});

test('prune: false plans every shown change that a later change cancels', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', 'ConfigMap/default/a', { deliver: true })
    .external('DELETED', 'ConfigMap/default/a', { deliver: true }).events;
  const out = plan(trace, { prune: false });
  t.deepEqual(holds(out), ['ConfigMap/default/a: create #1 until delete #1']);
  t.deepEqual(stages(out, 'unobserved-state'), { baseline: 1, expressible: 1 });
  t.deepEqual(holds(plan(trace)), []);
});

// ---- releasable: a hold that only the controller's own reaction to the held events would release ----

const FINALIZER = { 'metadata.finalizers': ['example.com/cleanup'] };

test('must not: hold a deletionTimestamp until the deletion that the controller makes by removing its finalizer on seeing it', (t) => {
  // The embedded cluster deletes the object in answer to the update that removes its last finalizer.
  const trace = new TraceBuilder()
    .external('ADDED', POD, { set: FINALIZER, deliver: true })
    .episode()
    .write('patch', DB, { set: { 'status.members': 1 } })
    .episode()
    .external('MODIFIED', POD, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .write('delete', 'PersistentVolumeClaim/default/data-db1-0')
    .write('patch', POD, { set: { 'metadata.finalizers': undefined }, change: 'DELETED', deliver: true })
    .episode().events;
  const out = plan(trace);
  // Only the window from the creation until the deletionTimestamp (which the workload makes) is left.
  t.deepEqual(holds(out), [`${POD}: create #1 until update[metadata.deletionTimestamp="<timestamp>"] #1`]);
  t.like(stages(out, 'unobserved-state'), { baseline: 3, causality: 3, releasable: 1 });
  t.is(holds(plan(trace, { prune: false })).length, 3, 'unpruned, all three holds are planned');
});

test('must not: the same when the API server reports the finalizer removal, then the deletion', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD, { set: FINALIZER })
    .external('MODIFIED', POD, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .write('delete', 'PersistentVolumeClaim/default/data-db1-0')
    .write('patch', POD, { set: { 'metadata.finalizers': undefined }, deliver: true })
    .external('DELETED', POD, { deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), []);
  // The finalizer removal's echo is cancelled by the deletion too, but the controller acted on nothing after it.
  t.like(stages(out, 'unobserved-state'), { baseline: 2, causality: 1, releasable: 0 });
});

test('must not: a phase the controller reacts to by deleting the object (its delete is the cancelling change)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', POD, { set: { 'status.phase': 'Running' } })
    .external('MODIFIED', POD, { set: { 'status.phase': 'Failed' }, deliver: true })
    .episode()
    .write('delete', POD, { deliver: true })
    .episode().events;
  t.like(stages(plan(trace), 'unobserved-state'), { baseline: 1, causality: 1, releasable: 0 });
});

test("must: the cancelling change is the controller's write, but one it made in reaction to another object", (t) => {
  // The controller resets db1's status.phase when its pod changes, whatever db1 says: holding db1's
  // events does not stop it, so the hold is released.
  const trace = new TraceBuilder()
    .external('ADDED', DB, { set: { 'status.phase': 'Pending' } })
    .external('ADDED', POD)
    .external('MODIFIED', DB, { set: { 'status.phase': 'Failed' }, deliver: true })
    .episode()
    .write('patch', 'ConfigMap/default/db1-config', { set: { 'data.failed': 'true' } })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Running' } })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), [`${DB}: update[status.phase="Failed"] #1 until update[status.phase="Running"] #1`]);
  t.like(stages(out, 'unobserved-state'), { causality: 1, releasable: 1 });
});

test("must: the controller's cancelling write may react to a read of the object, which a hold does not hide", (t) => {
  // The controller watches the pod, but the deletionTimestamp reaches its reconcile through a GET,
  // in a reconcile another event started: the read shows it even while the hold hides the event.
  const trace = new TraceBuilder()
    .external('ADDED', POD, { set: FINALIZER, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .external('MODIFIED', DB, { set: { 'spec.members': 0 }, deliver: true })
    .episode()
    .read(POD)
    .write('delete', 'PersistentVolumeClaim/default/data-db1-0')
    .write('patch', POD, { set: { 'metadata.finalizers': undefined }, change: 'DELETED' })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(holds(out), [
    `${POD}: create #1 until update[metadata.deletionTimestamp="<timestamp>"] #1`,
    `${POD}: update[metadata.deletionTimestamp="<timestamp>"] #1 until delete #1`,
  ]);
  t.like(stages(out, 'unobserved-state'), { causality: 2, releasable: 2 });
});

// ---- releasable, through the workload and through the controller's other writes ----

/**
 * The workload switches db1's feature off, waits for the controller to report it off, then switches
 * it on again. Held from "off", the controller never reports it, the workload keeps waiting and never
 * switches it on: the hold is never released.
 */
function toggle(opts: { waitPolls: number; reportedBy: 'controller' | 'someone else' }) {
  const b = new TraceBuilder()
    .stepStart(0, 'write', [DB])
    .external('ADDED', DB, { set: { 'spec.enabled': true }, deliver: true })
    .stepDone(0, { wrote: [DB] })
    .episode()
    .write('create', STS, { deliver: true })
    .episode()
    .stepStart(1, 'write', [DB])
    .external('MODIFIED', DB, { set: { 'spec.enabled': false }, deliver: true })
    .stepDone(1, { wrote: [DB] })
    .episode()
    .stepStart(2, 'wait', [DB])
    .write('delete', STS);
  if (opts.reportedBy === 'controller') b.write('patch', DB, { subresource: 'status', set: { 'status.enabled': false } });
  else b.external('MODIFIED', DB, { set: { 'status.enabled': false } });
  return b
    .stepDone(2, { polls: opts.waitPolls, metBy: DB })
    .episode()
    .stepStart(3, 'write', [DB])
    .external('MODIFIED', DB, { set: { 'spec.enabled': true }, deliver: true })
    .stepDone(3, { wrote: [DB] })
    .episode()
    .write('create', STS)
    .episode().events;
}

const OFF_UNTIL_ON = `${DB}: update[spec.enabled=false] #1 until update[spec.enabled=true] #1`;

test('must not: a hold the workload releases only after waiting for the controller to react to what is held', (t) => {
  const out = plan(toggle({ waitPolls: 4, reportedBy: 'controller' }));
  t.false(holds(out).includes(OFF_UNTIL_ON));
  t.true(holds(plan(toggle({ waitPolls: 4, reportedBy: 'controller' }), { prune: false })).includes(OFF_UNTIL_ON), 'unpruned, it is planned');
});

test('must: the same hold when the wait was met before the hold began, or by someone other than the controller', (t) => {
  t.true(holds(plan(toggle({ waitPolls: 1, reportedBy: 'controller' }))).includes(OFF_UNTIL_ON), 'the condition held when the wait began');
  t.true(holds(plan(toggle({ waitPolls: 4, reportedBy: 'someone else' }))).includes(OFF_UNTIL_ON), 'the wait was met without the controller');
});

test('must: the same hold in a trace whose workload steps do not say what they did (recorded before steps did)', (t) => {
  const old = toggle({ waitPolls: 4, reportedBy: 'controller' }).filter((e) => e.type !== 'workload-step');
  t.true(holds(plan(old)).includes(OFF_UNTIL_ON));
});

test('must not: the cancelling write reacts to a change the controller made on seeing the held events', (t) => {
  // The pod's readiness is held; the controller marks db1 ready only on seeing it, and deletes the
  // pod only on seeing db1 ready: neither happens while the pod's events are held.
  const chain = (podReadyPrompts: boolean) =>
    new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Pending' } })
      .write('create', POD)
      .episode()
      .external('MODIFIED', POD, { set: { 'status.ready': true }, deliver: true })
      .external('MODIFIED', CM, { set: { 'data.ready': 'true' }, deliver: !podReadyPrompts })
      .episode()
      .write('patch', DB, { subresource: 'status', set: { 'status.ready': true }, deliver: true })
      .episode()
      .write('delete', POD, { deliver: true })
      .episode().events;
  const podHolds = (out: PlannerOutput) => holds(out).filter((h) => h.startsWith(`${POD}: update`));
  t.deepEqual(podHolds(plan(chain(true))), []);
  t.is(podHolds(plan(chain(true), { prune: false })).length, 1, 'unpruned, it is planned');
  // A change of another object delivered in the same episode may have prompted db1's readiness instead.
  t.is(podHolds(plan(chain(false))).length, 1);
});

// ---- windows that end in a state the controller reacted to (edge-triggered controllers) ----

const MEMBERS = 'ConfigMap/default/db1-members';

/**
 * A pod goes Pending -> scheduled -> initialized -> Running; an edge-triggered controller writes
 * nothing until it sees the pod turn Running, then adds it to the members (serialized delivery).
 */
function joinOnSeenStart(opts: { reactsToCreation?: boolean; reactsToRunning?: boolean } = {}) {
  const b = new TraceBuilder().external('ADDED', POD, { set: { 'status.phase': 'Pending' }, deliver: true }).episode();
  if (opts.reactsToCreation) b.write('patch', DB, { subresource: 'status', set: { 'status.pods': 1 } });
  b.external('MODIFIED', POD, { set: { 'spec.nodeName': 'node-1' }, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.initialized': true }, deliver: true })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode();
  if (opts.reactsToRunning ?? true) b.write('patch', MEMBERS, { set: { 'data.members': 'db1-0' } });
  return b.episode().events;
}

const CREATED_UNTIL_RUNNING = `${POD}: create #1 until update[status.phase="Running"] #1`;

test('edge-triggered: hide a pod from its creation until the state the controller reacted to (it then first sees it Running)', (t) => {
  const out = plan(joinOnSeenStart());
  t.true(holds(out).includes(CREATED_UNTIL_RUNNING), holds(out).join('\n'));
  const p = plansOf(out, 'unobserved-state').find((x) => (x.spec.faults[0] as HoldUntilFault).from.change === 'create')!;
  t.regex(p.spec.description, /is created \(1st time\) until .* then make it relist: it first sees the object in that later state/);
});

test('edge-triggered: a window over several transitions, from after the state last reacted to until the next one', (t) => {
  // The controller reacted to the creation: the window starts after it, hides scheduling and
  // initialization, and ends at Running (neither hidden change is cancelled by a later one).
  const out = plan(joinOnSeenStart({ reactsToCreation: true }));
  t.true(holds(out).includes(`${POD}: update[spec.nodeName="node-1"] #1 until update[status.phase="Running"] #1`), holds(out).join('\n'));
  t.true(holds(out).includes(CREATED_UNTIL_RUNNING));
});

test('must not: a window whose end state the controller did not react to', (t) => {
  const out = plan(joinOnSeenStart({ reactsToRunning: false }));
  t.deepEqual(holds(out), []);
});

test("must not: a creation window that only the controller's reaction to the held creation would end", (t) => {
  // The controller labels the pod it sees created, then reacts to the label: holding the pod from its
  // creation, the label never comes.
  const trace = new TraceBuilder()
    .external('ADDED', POD, { deliver: true })
    .episode()
    .write('patch', POD, { set: { 'metadata.labels.member': 'yes' }, deliver: true })
    .episode()
    .write('patch', MEMBERS, { set: { 'data.members': 'db1-0' } })
    .episode().events;
  const out = plan(trace);
  t.false(
    holds(out).some((h) => h.startsWith(`${POD}: create #1 until`)),
    holds(out).join('\n'),
  );
  t.true(
    holds(plan(trace, { prune: false })).some((h) => h.startsWith(`${POD}: create #1 until`)),
    'unpruned, it is planned',
  );
});

test('effective writes: a hidden state the controller answered with a no-op stays when its reaction to the later state was effective', (t) => {
  // The controller stores what it saw (Pending) and acts on the Running that follows: its write on
  // seeing Pending changed nothing, its write on seeing Running did (issue 21: such holds were dropped).
  const trace = new TraceBuilder()
    .external('ADDED', POD, { set: { 'status.phase': 'Starting' } })
    .external('MODIFIED', POD, { set: { 'status.phase': 'Pending' }, deliver: true })
    .episode()
    .write('patch', MEMBERS, { change: 'none' })
    .episode()
    .external('MODIFIED', POD, { set: { 'status.phase': 'Running' }, deliver: true })
    .episode()
    .write('patch', MEMBERS, { set: { 'data.members': 'db1-0' } })
    .episode().events;
  const out = plan(trace);
  t.true(holds(out).includes(`${POD}: update[status.phase="Pending"] #1 until update[status.phase="Running"] #1`), holds(out).join('\n'));
});

// ---- releasable: writes that cannot succeed, and waits for a summary of the held object ----

/**
 * The controller marks db1 Starting, then Ready on seeing a pod, writing status with the
 * resourceVersion of the copy it has (optimistic concurrency) and reacting to Ready with a ConfigMap.
 */
function statusRun(optimistic: boolean) {
  return new TraceBuilder()
    .external('ADDED', DB, { set: { 'status.phase': 'Pending' }, deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Starting' }, deliver: true })
    .episode()
    .external('ADDED', POD, { deliver: true })
    .episode()
    .write('update', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, basedOnLatest: optimistic, deliver: true })
    .episode()
    .write('patch', CM, { set: { 'data.ready': 'true' } })
    .episode().events;
}

const STARTING_UNTIL_READY = `${DB}: update[status.phase="Starting"] #1 until update[status.phase="Ready"] #1`;

test("must not: a hold ended by the controller's write of the held object based on a held state (409 Conflict while held)", (t) => {
  t.false(holds(plan(statusRun(true))).includes(STARTING_UNTIL_READY), holds(plan(statusRun(true))).join('\n'));
  t.true(holds(plan(statusRun(true), { prune: false })).includes(STARTING_UNTIL_READY), 'unpruned, it is planned');
  // Without a resourceVersion in its body the write succeeds whatever the controller saw.
  t.true(holds(plan(statusRun(false))).includes(STARTING_UNTIL_READY));
});

/**
 * The controller creates db1's StatefulSet and reports db1 Ready once the StatefulSet is; the workload
 * waits for that, then deletes db1, and the controller deletes the StatefulSet.
 */
function summaryRun(readyReportedBy: 'controller' | 'someone else') {
  const b = new TraceBuilder()
    .stepStart(0, 'write', [DB])
    .external('ADDED', DB, { deliver: true })
    .stepDone(0, { wrote: [DB] })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .write('patch', CM, { set: { 'data.sts': 'created' } })
    .stepStart(1, 'wait', [DB])
    .external('MODIFIED', STS, { set: { 'status.readyReplicas': 1 }, deliver: true })
    .external('ADDED', 'ConfigMap/default/other', { deliver: true })
    .episode();
  if (readyReportedBy === 'controller') b.write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } });
  else b.external('MODIFIED', DB, { set: { 'status.phase': 'Ready' } });
  return b
    .stepDone(1, { polls: 4, metBy: DB })
    .episode()
    .stepStart(2, 'write', [DB])
    .external('DELETED', DB, { deliver: true })
    .stepDone(2)
    .episode()
    .write('delete', STS, { deliver: true })
    .episode()
    .write('patch', CM, { set: { 'data.sts': 'deleted' } })
    .episode().events;
}

const STS_LIFE = `${STS}: create #1 until delete #1`;

test("must not: a hold the workload releases only after waiting for the held object's owner to report it", (t) => {
  // db1's Ready is computed from the held StatefulSet: while it is held, db1 is never Ready, the
  // workload never deletes db1, and the controller never deletes the StatefulSet.
  t.false(holds(plan(summaryRun('controller'))).includes(STS_LIFE), holds(plan(summaryRun('controller'))).join('\n'));
  t.true(holds(plan(summaryRun('controller'), { prune: false })).includes(STS_LIFE), 'unpruned, it is planned');
  t.true(holds(plan(summaryRun('someone else'))).includes(STS_LIFE), 'db1 reported Ready by someone else: the wait ends anyway');
});

test('must not: hold a deletion until the controller re-creates the object (its cache still shows it while held)', (t) => {
  // The workload re-creates db1; the controller creates db1's ConfigMap again on seeing db1, once its
  // cache says the ConfigMap is missing, which a hold of the ConfigMap's deletion never lets it say.
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', CM, { owner: DB, deliver: true })
    .episode()
    .external('DELETED', DB, { deliver: true })
    .external('DELETED', CM, { deliver: true })
    .episode()
    .write('patch', STS, { change: 'none' })
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', CM, { owner: DB, deliver: true })
    .episode()
    .write('patch', 'ConfigMap/default/other', { set: { 'data.x': '1' } })
    .episode().events;
  const deletionUntilBack = `${CM}: delete #1 until create #2`;
  t.false(holds(plan(trace)).includes(deletionUntilBack), holds(plan(trace)).join('\n'));
  t.true(holds(plan(trace, { prune: false })).includes(deletionUntilBack), 'unpruned, it is planned');
});

test("must not: a hold ended by the cluster's answer to a workload write the workload makes only once the held object is reported", (t) => {
  // decommission's shape: the workload shrinks db1 once db1 reports its StatefulSet ready (computed
  // from the held StatefulSet), the controller scales the StatefulSet down, and the StatefulSet
  // controller's status change ends the hold: none of it happens while the StatefulSet is held.
  const run = (waitPolls: number) =>
    new TraceBuilder()
      .stepStart(0, 'write', [DB])
      .external('ADDED', DB, { set: { 'spec.nodes': 2 }, deliver: true })
      .stepDone(0, { wrote: [DB] })
      .episode()
      .write('create', STS, { owner: DB, deliver: true })
      .episode()
      .stepStart(1, 'wait', [DB])
      .external('MODIFIED', STS, { set: { 'status.readyReplicas': 2 }, deliver: true })
      .episode()
      .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } })
      .stepDone(1, { polls: waitPolls, metBy: DB })
      .stepStart(2, 'write', [DB])
      .external('MODIFIED', DB, { set: { 'spec.nodes': 1 }, deliver: true })
      .stepDone(2, { wrote: [DB] })
      .episode()
      .write('patch', STS, { set: { 'spec.replicas': 1 }, deliver: true })
      .episode()
      .external('MODIFIED', STS, { set: { 'status.readyReplicas': 1 }, deliver: true })
      .episode()
      .write('patch', CM, { set: { 'data.nodes': '1' } })
      .episode().events;
  const readyUntilShrunk = `${STS}: update[status.readyReplicas=2] #1 until update[status.readyReplicas=1] #1`;
  t.false(holds(plan(run(4))).includes(readyUntilShrunk), holds(plan(run(4))).join('\n'));
  t.true(holds(plan(run(4), { prune: false })).includes(readyUntilShrunk), 'unpruned, it is planned');
  t.true(holds(plan(run(1))).includes(readyUntilShrunk), 'the wait was met when it began: the workload shrinks db1 anyway');
});

test("must not: a hold ended by the cluster's answer to the controller's write of the held object based on a held state", (t) => {
  // volume-resize's shape: the claim is bound (held from here), the controller asks for more storage
  // by patching the claim with the resourceVersion of the copy it has (refused with 409 Conflict
  // while the claim is held), and the cluster's resizer answers that request by growing the
  // capacity, the change that would end the hold: none of it happens while the claim is held.
  const PVC = 'PersistentVolumeClaim/default/data-db1-0';
  const run = (optimistic: boolean) =>
    new TraceBuilder()
      .external('ADDED', PVC, { set: { 'spec.storage': '1Gi', 'status.phase': 'Pending' }, deliver: true })
      .episode()
      .external('MODIFIED', PVC, { set: { 'status.phase': 'Bound', 'status.capacity': '1Gi' }, deliver: true })
      .episode()
      .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' } })
      .external('MODIFIED', DB, { set: { 'spec.storage': '2Gi' }, deliver: true })
      .episode()
      .write('patch', PVC, { set: { 'spec.storage': '2Gi' }, basedOnLatest: optimistic, deliver: true })
      .episode()
      .external('MODIFIED', PVC, { set: { 'status.capacity': '2Gi' }, deliver: true })
      .episode()
      .write('patch', DB, { subresource: 'status', set: { 'status.storage': '2Gi' } })
      .episode().events;
  const boundUntilGrown = `${PVC}: update[status.capacity="1Gi",status.phase="Bound"] #1 until update[status.capacity="2Gi"] #1`;
  t.false(holds(plan(run(true))).includes(boundUntilGrown), holds(plan(run(true))).join('\n'));
  t.true(holds(plan(run(true), { prune: false })).includes(boundUntilGrown), holds(plan(run(true), { prune: false })).join('\n'));
  // Without a resourceVersion in its body the patch succeeds whatever the controller saw, and the resizer answers it.
  t.true(holds(plan(run(false))).includes(boundUntilGrown), holds(plan(run(false))).join('\n'));
});
