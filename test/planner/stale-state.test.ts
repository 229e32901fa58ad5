import test from 'ava';
import type { PlannerOutput } from '../../planner/index.js';
import { staleViewMoment, type StaleRestartFault } from '../../src/model/plan.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, STS, deleteThenRecreate, faultsOf, plan, plansOf, stages } from './_helpers.js';

const TS = '2024-01-01T00:00:00Z';

function stale(out: PlannerOutput): StaleRestartFault[] {
  return faultsOf(out, 'stale-state') as StaleRestartFault[];
}

/** What each plan does, in words short enough to compare: "view after <change> / restart at <change>". */
function summary(out: PlannerOutput): string[] {
  return stale(out).map((f) => {
    const at = 'change' in f.at ? f.at.change : undefined;
    const name = (c: { key: string; change: string; occurrence: number; fields?: Array<{ path: string }> }) =>
      `${c.key} ${c.change}${c.fields ? `[${c.fields.map((x) => x.path).join(',')}]` : ''} #${c.occurrence}`;
    const m = staleViewMoment(f);
    return `view ${m.before ? 'before ' : ''}${name(m.change)} / at ${at ? name(at) : JSON.stringify(f.at)}`;
  });
}

test('a delete re-issued from a stale view after the object was re-created: restart at the re-creation, view from the event that caused the delete', (t) => {
  const out = plan(deleteThenRecreate().events);
  t.deepEqual(summary(out), [
    // The controller's first create of the StatefulSet is undone by its own delete: re-issued, it resurrects it.
    `view ${DB} create #1 / at ${STS} delete #1`,
    // The delete: reacting to the Database being deleted (its episode) or to the StatefulSet's creation
    // (related object, delivered since the controller last wrote it).
    `view ${STS} create #1 / at ${STS} create #2`,
    `view ${DB} update[metadata.deletionTimestamp] #1 / at ${STS} create #2`,
    // The Database's previous life (before its StatefulSet existed), restarted when it is created again.
    `view ${DB} create #1 / at ${DB} create #2`,
  ]);
  const p = plansOf(out, 'stale-state')[2]!;
  t.deepEqual(p.spec.faults, [
    {
      type: 'stale-restart',
      at: { change: { key: STS, change: 'create', occurrence: 2 } },
      viewAfter: { key: DB, change: 'update', fields: [{ path: 'metadata.deletionTimestamp', after: '<timestamp>' }], occurrence: 1 },
      releaseAfterSeconds: 5,
    },
  ]);
  t.regex(
    p.spec.description,
    /^when StatefulSet\/default\/db1 is created \(2nd time\), restart the controller onto a view frozen right after Database\/default\/db1 is updated .*released once it has acted on it and gone quiet or round in a loop, at most 5 s .*deletes StatefulSet\/default\/db1 \(1st time\)/,
  );
  t.notRegex(p.spec.description, /\n/);
});

test('stages: baseline pairs every delivery with every later write; causality keeps the episode and related objects', (t) => {
  const out = plan(deleteThenRecreate().events);
  // Deliveries before each write: create STS 1, delete STS 3, create STS 6 (+ 0 for none) = 10.
  // Causes: create#1 <- DB added; delete <- DB update (episode), STS added (related, since its last write);
  // create#2 <- DB re-added (episode), DB deleted, DB update (related: the owner's deliveries since STS was last written).
  // Deliveries before each write: create#1 1, delete 3, create#2 6.
  // Causes: create#1 <- DB added (episode); delete <- DB updated (episode), STS added (related, delivered since
  // the controller last wrote it); create#2 <- DB re-added (episode), STS deleted (related).
  // Conflicts: create#1 (STS deleted later), delete (STS re-created); create#2 none.
  // Plus (view before the reaction, write) pairs that are no causal pair: create#2 with the view
  // after the Database was deleted (the delivery before its episode); nothing changes the StatefulSet
  // after create#2, so there is no restart point (effective-writes drops it).
  // Plus one previous-life pair: the Database re-created, its StatefulSet created in the new life;
  // the view before the StatefulSet existed (its creation), the restart at its re-creation (the
  // state in which the StatefulSet existed is only the terminating one: no second view).
  t.deepEqual(stages(out, 'stale-state'), { baseline: 10, causality: 7, 'effective-writes': 4, deterministic: 4, deduplicated: 4 });
});

test('an update that a later change of the same fields would be undone by is planned (Sieve covers deletes only)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 5 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 5 }, deliver: true })
    .episode().events;
  const out = plan(trace);
  t.true(summary(out).includes(`view ${DB} update[spec.replicas] #1 / at ${STS} update[spec.replicas] #1`), summary(out).join('\n'));
  const f = stale(out).find((x) => x.viewAfter?.key === DB && x.viewAfter.change === 'update')!;
  t.deepEqual(f.viewAfter!.fields, [{ path: 'spec.replicas', before: 1, after: 3 }]);
  t.deepEqual('change' in f.at && f.at.change.fields, [{ path: 'spec.replicas', before: 3, after: 5 }]);
});

test('must not: a patch whose fields no later change touches is never re-issued over newer state', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true, body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db1' }, spec: { replicas: 1 } } })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.paused': true }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.paused': true }, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'status.replicas': 3 }, deliver: true })
    .episode().events;
  const out = plan(trace);
  // No plan re-issues the patch. The one plan is the patch undone: from a view from before the
  // Database was paused (right after the StatefulSet's creation), restarted once the StatefulSet
  // changed after the patch, the controller would unpause it.
  t.deepEqual(summary(out), [`view ${STS} create #1 / at ${STS} update[status.replicas] #1`]);
  t.regex(plansOf(out, 'stale-state')[0]!.spec.description, /it may undo that\)$/);
  t.is(stages(out, 'stale-state')['effective-writes'], 1);
});

test('a no-op write is kept: re-issued after a later change of its fields, it is no longer a no-op', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 1 } })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.x': 1 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 1 }, change: 'none' })
    .episode()
    .external('MODIFIED', STS, { set: { 'spec.replicas': 2 }, deliver: true })
    .episode().events;
  t.true(summary(plan(trace)).includes(`view ${DB} update[spec.x] #1 / at ${STS} update[spec.replicas] #1`), summary(plan(trace)).join('\n'));
});

test('an update (PUT) sends the whole object: any later change of the object conflicts', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.paused': true }, deliver: true })
    .episode()
    .write('update', STS, { set: { 'spec.paused': true }, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'status.replicas': 3 }, deliver: true })
    .episode().events;
  t.true(summary(plan(trace)).includes(`view ${DB} update[spec.paused] #1 / at ${STS} update[status.replicas] #1`), summary(plan(trace)).join('\n'));
});

test('a create that a later deletion cancels is planned (re-issuing it would resurrect the object)', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .external('DELETED', STS, { deliver: true })
    .episode().events;
  t.deepEqual(summary(plan(trace)), [`view ${DB} create #1 / at ${STS} delete #1`]);
});

test('a create re-asserted from a stale view: a later change of a field it set is its conflict, a status update is not', (t) => {
  // The controller creates the StatefulSet for 2 nodes and later scales it to 1; restarted onto a
  // view from before the StatefulSet existed, it creates (or creates-or-updates) it for 2 nodes again.
  const body = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db1' }, spec: { replicas: 2 }, status: {} };
  const trace = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 2 }, body, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'status.replicas': 2 }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode().events;
  const plans = summary(plan(trace));
  t.true(plans.includes(`view ${DB} create #1 / at ${STS} update[spec.replicas] #1`), plans.join('\n'));
  t.false(
    plans.some((p) => p.includes('status.replicas')),
    'the status update is no conflict (an empty status sets nothing)',
  );
});

test('must not: failed and no-op writes, and writes nothing undoes later', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('delete', STS, { status: 404 }) // failed
    .write('patch', DB, { change: 'none' }) // no-op
    .write('create', STS, { owner: DB, deliver: true }) // never deleted later
    .episode()
    .external('ADDED', 'StatefulSet/default/other', { deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(stale(out), []);
  t.is(stages(out, 'stale-state').causality, 3);
  t.is(stages(out, 'stale-state')['effective-writes'], 0);
});

test('causality: an event of an unrelated object delivered in an earlier episode is not a cause', (t) => {
  const other = 'ConfigMap/default/unrelated';
  const trace = new TraceBuilder()
    .external('ADDED', other, { deliver: true })
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .external('DELETED', STS, { deliver: true })
    .episode().events;
  const out = plan(trace);
  t.deepEqual(summary(out), [`view ${DB} create #1 / at ${STS} delete #1`]);
  const s = stages(out, 'stale-state');
  t.is(s.baseline, 2);
  // The ConfigMap's creation is no cause; it is the view from before the reaction (the other pair
  // counted), dropped because the StatefulSet does not exist in that view.
  t.is(s.causality, 2);
  t.is(s['effective-writes'], 1);
});

test('deterministic: a view whose change differs between reference runs is named by its stable fields only, or dropped', (t) => {
  const run = (token: string, extraUpdate: boolean) => {
    const b = new TraceBuilder()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', STS, { owner: DB, deliver: true })
      .episode()
      .external('MODIFIED', DB, { set: { 'metadata.deletionTimestamp': TS, 'status.token': token }, deliver: true })
      .episode()
      .write('delete', STS, { deliver: true })
      .episode();
    if (extraUpdate) b.external('MODIFIED', STS, { set: { 'status.x': 1 } });
    return b
      .external('DELETED', DB, { deliver: true })
      .episode()
      .external('ADDED', DB, { deliver: true })
      .episode()
      .write('create', STS, { owner: DB, deliver: true })
      .episode().events;
  };
  const out = plan([run('a1b2', false), run('c3d4', false)]);
  const f = stale(out).find((x) => x.viewAfter?.key === DB && x.viewAfter.change === 'update')!;
  // status.token differs between the runs: the trigger names the deletionTimestamp only.
  t.deepEqual(f.viewAfter!.fields, [{ path: 'metadata.deletionTimestamp', after: '<timestamp>' }]);
  t.is(stale(plan([run('a1b2', false)])).find((x) => x.viewAfter?.key === DB && x.viewAfter.change === 'update')!.viewAfter!.fields?.length, 2);
  // A change the other run does not have at all (an extra update of the StatefulSet) cannot be a trigger.
  const extra = plan([run('a1b2', false), run('a1b2', true)]);
  t.false(stale(extra).some((x) => 'change' in x.at && x.at.change.key === STS && x.at.change.change === 'update'));
});

test('dedup: writes that share the event they react to and the change that undoes them give one plan', (t) => {
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .external('ADDED', STS, { deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.a': 1 } })
    .write('patch', STS, { set: { 'spec.b': 1 } })
    .episode()
    .external('MODIFIED', STS, { set: { 'spec.a': 2, 'spec.b': 2 }, deliver: true })
    .episode().events;
  const out = plan(trace);
  // Both patches react to the StatefulSet's creation and are undone by the same later update.
  t.deepEqual(summary(out), [`view ${STS} create #1 / at ${STS} update[spec.a,spec.b] #1`]);
  const s = stages(out, 'stale-state');
  t.is(s.deterministic, 2);
  t.is(s.deduplicated, 1);
});

test('dedup: states that differ only in which life of an object they hold (its uid) are different states, two plans', (t) => {
  // The Database is deleted and created again with the same spec; in each life the controller
  // updates the ConfigMap and the workload resets it. The view after the first creation and the view
  // after the second hold the same fields, but another Database (another uid, which a controller
  // writes into ownerReferences): two views, two plans.
  const trace = new TraceBuilder({ setup: { [CM]: { 'data.v': '0' } } })
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('update', CM, { set: { 'data.v': 'a' } })
    .external('MODIFIED', CM, { set: { 'data.v': '0' } })
    .external('DELETED', DB, { deliver: true })
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('update', CM, { set: { 'data.v': 'a' } })
    .external('MODIFIED', CM, { set: { 'data.v': '0' } }).events;
  const out = plan(trace);
  // The resets are the updates of data.v from 'a' to '0', its 1st and 2nd.
  t.deepEqual(summary(out), [
    `view ${DB} create #1 / at ${CM} update[data.v] #1`,
    `view ${DB} create #2 / at ${CM} update[data.v] #2`,
    // Undoing its own reaction: the second update from the view before the Database came back.
    `view ${DB} delete #1 / at ${CM} update[data.v] #2`,
  ]);
});

test('dedup: views that differ only in kinds the controller neither lists nor watches show it the same, one plan', (t) => {
  // The controller watches Databases and StatefulSets and reads the claim with a GET, which a stale
  // view does not freeze: the view after the Database's creation and the view after the claim's read
  // (the claim created in between) serve it the same lists and watches.
  const PVC = 'PersistentVolumeClaim/default/data-db1-0';
  const trace = (watched: string[]) => {
    const b = new TraceBuilder({ setup: { [STS]: { 'spec.replicas': 3 } } });
    for (const kind of watched) b.watch(kind);
    return b
      .external('ADDED', DB, { deliver: true })
      .episode()
      .external('ADDED', PVC)
      .read(PVC)
      .write('patch', STS, { set: { 'spec.replicas': 1 } })
      .external('MODIFIED', STS, { set: { 'spec.replicas': 2 } }).events;
  };
  const at = `at ${STS} update[spec.replicas] #1`;
  t.deepEqual(summary(plan(trace(['Database', 'StatefulSet']))), [`view ${DB} create #1 / ${at}`]);
  // Must not: claims watched too, the second view shows one more claim.
  t.deepEqual(summary(plan(trace(['Database', 'StatefulSet', 'PersistentVolumeClaim']))), [`view ${DB} create #1 / ${at}`, `view ${PVC} create #1 / ${at}`]);
});

test('bookkeeping writes (leader election) are never stale-state writes', (t) => {
  const lease = 'Lease/kube-system/leader';
  const trace = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', lease)
    .write('update', lease)
    .write('update', lease).events;
  const out = plan(trace);
  t.deepEqual(stale(out), []);
  t.true((stages(out, 'stale-state')['effective-writes'] ?? 0) > 0);
  t.is(stages(out, 'stale-state').deterministic, 0);
});

test('prune: false pairs every delivered change with every later successful write', (t) => {
  const out = plan(deleteThenRecreate().events, { prune: false });
  const s = stages(out, 'stale-state');
  t.deepEqual(Object.keys(s), ['baseline', 'expressible']);
  t.is(s.baseline, 10);
  t.is(s.expressible, 10);
  t.is(stale(out).length, 10);
  t.true(summary(out).includes(`view ${DB} update[metadata.deletionTimestamp] #1 / at ${STS} create #2`));
});

/**
 * The controller undoing its own reaction: it scaled the StatefulSet down because the Database asked
 * for fewer replicas; restarted onto a view from before that request, after the StatefulSet reported
 * the scale-down, it scales it back up (the decommission example's DataCenter left at status.nodes 2).
 * The view is no cause of the patch, and nothing later changes spec.replicas (no conflict).
 */
function scaleDown(opts: { patchChange?: 'none'; statusAfter?: boolean; related?: boolean; between?: boolean } = {}): TraceBuilder {
  const b = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'status.readyReplicas': 2 }, deliver: true })
    .episode()
    .write('patch', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode();
  // Something else changes between the controller's status echo and the Database's scale-down.
  if (opts.between) b.external('ADDED', CM);
  b.external('MODIFIED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    .write('patch', STS, { set: { 'spec.replicas': 1 }, deliver: true, ...(opts.patchChange ? { change: opts.patchChange } : {}) })
    .episode();
  if (opts.statusAfter ?? true) b.external('MODIFIED', STS, { set: { 'status.readyReplicas': 1 }, deliver: true }).episode();
  return b;
}

const undoPlans = (out: PlannerOutput) => plansOf(out, 'stale-state').filter((p) => p.spec.description.includes('it may undo that'));

test('undoing its own reaction: a view from before the event the write reacted to, restarted when the world reacted to the write', (t) => {
  const out = plan(scaleDown().events);
  const undo = undoPlans(out).filter((p) => p.spec.description.includes('patches StatefulSet'));
  t.is(undo.length, 1, summary(out).join('\n'));
  const f = undo[0]!.spec.faults[0] as StaleRestartFault;
  // The view: the last delivery before the Database's spec change (the controller's own status echo).
  t.deepEqual(f.viewAfter, { key: DB, change: 'update', fields: [{ path: 'status.phase', after: 'Ready' }], occurrence: 1 });
  // The restart: the StatefulSet's first change after the patch (no later change conflicts with it).
  t.deepEqual(f.at, { change: { key: STS, change: 'update', fields: [{ path: 'status.readyReplicas', before: 2, after: 1 }], occurrence: 1 } });
  t.regex(undo[0]!.spec.description, /a view from before what made it patches StatefulSet\/default\/db1 \(1st time\): it may undo that/);
  // The causal rule alone has no plan for the patch: nothing conflicts with it.
  t.false(summary(out).some((p) => p.startsWith(`view ${DB} update[spec.replicas]`)));
});

test('undoing its own reaction: a reference run with a change between B and the event adds a view right before the event, which the selection keeps', (t) => {
  // scaleDown's run, and one where something else changes between the controller's status echo (B)
  // and the Database's scale-down (the event the patch reacted to): there "right after B" is not
  // "right before the event", and only a view named by the event itself is the same in both runs.
  const run = (between: boolean) => scaleDown({ between }).events;
  // The views of the plans from the patch of the StatefulSet (the write whose reaction they undo).
  const undoViews = (out: PlannerOutput) => {
    const all = summary(out);
    return plansOf(out, 'stale-state').flatMap((p, i) => (p.spec.description.includes('patches StatefulSet') ? [all[i]!] : []));
  };
  const afterB = `view ${DB} update[status.phase] #1 / at ${STS} update[status.readyReplicas] #1`;
  const beforeEvent = `view before ${DB} update[spec.replicas] #1 / at ${STS} update[status.readyReplicas] #1`;
  t.deepEqual(undoViews(plan([run(false), run(false)])), [afterB], 'the same in every run: one view');
  t.deepEqual(undoViews(plan([run(false), run(true)])), [afterB, beforeEvent]);
  const f = stale(plan([run(false), run(true)])).find((x) => x.viewBefore !== undefined)!;
  t.deepEqual(f.viewBefore, { key: DB, change: 'update', fields: [{ path: 'spec.replicas', before: 2, after: 1 }], occurrence: 1 });
  t.regex(
    plansOf(plan([run(false), run(true)]), 'stale-state').find((p) => (p.spec.faults[0] as StaleRestartFault).viewBefore)!.spec.description,
    /onto a view frozen right before Database\/default\/db1 is updated \(spec\.replicas: 2 -> 1\)/,
  );
  // The selection keeps the latest view of the group: the one right before the event, also when the
  // run plans come from (the last) has nothing between B and the event (the same state there).
  for (const runs of [
    [run(false), run(true)],
    [run(true), run(false)],
  ]) {
    const selected = plansOf(plan(runs, { select: true }), 'stale-state').filter((p) => p.spec.description.includes('patches StatefulSet'));
    t.deepEqual(
      selected.map((p) => staleViewMoment(p.spec.faults[0] as StaleRestartFault).before),
      [true],
    );
  }
});

test('undoing its own reaction, must not: a no-op reaction, a write nothing changes after, or a view without the object', (t) => {
  // The patch changed nothing: there is no reaction to undo.
  t.false(undoPlans(plan(scaleDown({ patchChange: 'none' }).events)).some((p) => p.spec.description.includes('patches StatefulSet')));
  // Nothing changes the StatefulSet after the patch: no moment to restart at.
  t.false(undoPlans(plan(scaleDown({ statusAfter: false }).events)).some((p) => p.spec.description.includes('patches StatefulSet')));
  // The create of the StatefulSet: the view before its reaction (none here, it reacts to the first
  // delivery) and, generally, a view without the object is left to the create's own pairs.
  t.false(undoPlans(plan(scaleDown().events)).some((p) => p.spec.description.includes('creates StatefulSet')));
  const other = 'ConfigMap/default/unrelated';
  const trace = new TraceBuilder()
    .external('ADDED', other, { deliver: true })
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'status.x': 1 }, deliver: true })
    .episode().events;
  t.deepEqual(undoPlans(plan(trace)), [], 'the view before the Database existed has no StatefulSet to undo');
});

test('undoing its own reaction: every such plan is one the unpruned set has too, and the same two states give one plan', (t) => {
  const out = plan(scaleDown().events);
  const unpruned = new Set(plan(scaleDown().events, { prune: false }).plans.map((p) => JSON.stringify(p.spec.faults)));
  const undo = undoPlans(out);
  t.true(undo.length >= 1);
  for (const p of undo) t.true(unpruned.has(JSON.stringify(p.spec.faults)), p.spec.description);
  // The same write from the same view to the same restart, twice in a run (the patch repeated as a
  // no-op right after): still one plan.
  const twice = scaleDown({ statusAfter: false })
    .write('patch', STS, { set: { 'spec.replicas': 1 }, change: 'none' })
    .external('MODIFIED', STS, { set: { 'status.readyReplicas': 1 }, deliver: true })
    .episode().events;
  const faults = undoPlans(plan(twice)).map((p) => JSON.stringify(p.spec.faults));
  t.is(new Set(faults).size, faults.length);
});

/** An owner deleted and created again; the controller creates its Secret, Service and StatefulSet in each life. */
function ownerTwoLives(opts: { secondLifeChildren?: boolean; statusInitializing?: boolean } = {}): TraceBuilder {
  const SECRET = 'Secret/default/db1-users';
  const SVC = 'Service/default/db1';
  const b = new TraceBuilder().external('ADDED', DB, { deliver: true }).episode();
  const children = (b2: TraceBuilder) =>
    b2
      .write('create', SECRET, { owner: DB, deliver: true })
      .write('create', SVC, { owner: DB, deliver: true })
      .write('create', STS, { owner: DB, deliver: true });
  children(b);
  if (opts.statusInitializing !== false) b.write('update', DB, { subresource: 'status', set: { 'status.phase': 'Initializing' }, deliver: true });
  b.episode()
    .external('MODIFIED', DB, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .episode()
    .external('DELETED', STS, { deliver: true })
    .external('DELETED', SVC, { deliver: true })
    .external('DELETED', SECRET, { deliver: true })
    .external('DELETED', DB, { deliver: true })
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode();
  if (opts.secondLifeChildren !== false) children(b);
  return b.episode();
}

test('previous life: an owner created again; views from its previous life, restarted at its re-creation and after each child create but the last', (t) => {
  const out = plan(ownerTwoLives().events);
  const previousLife = plansOf(out, 'stale-state').filter((p) => /previous life/.test(p.spec.description));
  t.deepEqual(
    previousLife.map((p) => p.spec.description.replace(/, released once.*/, '')),
    [
      // The view before any child existed: the Database's creation (its only state before them). The
      // restart at its re-creation is planned already, as the status write re-issued onto the new
      // Database (below).
      `right after it creates Secret/default/db1-users (2nd time), restart the controller onto a view frozen right after ${DB} is created (1st time)`,
      `right after it creates Service/default/db1 (2nd time), restart the controller onto a view frozen right after ${DB} is created (1st time)`,
      // The earliest state with every child there: the status update after they were created.
      `when ${DB} is created (2nd time), restart the controller onto a view frozen right after ${DB} is updated (status.phase: undefined -> "Initializing") (1st time)`,
      `right after it creates Secret/default/db1-users (2nd time), restart the controller onto a view frozen right after ${DB} is updated (status.phase: undefined -> "Initializing") (1st time)`,
      `right after it creates Service/default/db1 (2nd time), restart the controller onto a view frozen right after ${DB} is updated (status.phase: undefined -> "Initializing") (1st time)`,
    ],
  );
  t.true(summary(out).includes(`view ${DB} create #1 / at ${DB} create #2`), summary(out).join('\n'));
  // Faults as the proxy runs them: the write trigger names the 2nd create (the new life's first).
  const f = previousLife[3]!.spec.faults[0] as StaleRestartFault;
  t.deepEqual(f.at, { write: { verb: 'create', key: 'Secret/default/db1-users', occurrence: 2 } });
  t.deepEqual(f.viewAfter, { key: DB, change: 'update', fields: [{ path: 'status.phase', after: 'Initializing' }], occurrence: 1 });
});

test('previous life, must not: no child created in the new life, or no state of the previous life both shown and not terminating', (t) => {
  const none = (b: TraceBuilder) => plansOf(plan(b.events), 'stale-state').filter((p) => /previous life/.test(p.spec.description));
  // The controller creates nothing owned by the Database after it came back.
  t.deepEqual(none(ownerTwoLives({ secondLifeChildren: false })), []);
  // Created once only: no previous life.
  const oneLife = new TraceBuilder().external('ADDED', DB, { deliver: true }).episode().write('create', STS, { owner: DB, deliver: true }).episode();
  t.deepEqual(none(oneLife), []);
  // The previous life's states were never shown to the controller: no view a plan can freeze.
  const unseen = new TraceBuilder()
    .external('ADDED', DB)
    .external('DELETED', DB)
    .episode()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode();
  t.deepEqual(none(unseen), []);
});

/** deleteThenRecreate with the Database written by workload steps, as `kperturb learn` records them. */
function deleteThenRecreateByWorkload(): TraceBuilder {
  return new TraceBuilder()
    .stepStart(1, 'write', [DB])
    .external('ADDED', DB, { deliver: true })
    .stepDone(1, { wrote: [DB] })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode()
    .stepStart(2, 'write', [DB])
    .external('MODIFIED', DB, { set: { 'metadata.deletionTimestamp': TS }, deliver: true })
    .stepDone(2)
    .episode()
    .write('delete', STS, { deliver: true })
    .episode()
    .external('DELETED', DB, { deliver: true })
    .episode()
    .stepStart(3, 'write', [DB])
    .external('ADDED', DB, { deliver: true })
    .stepDone(3, { wrote: [DB] })
    .episode()
    .write('create', STS, { owner: DB, deliver: true })
    .episode();
}

test("scoped twins: each plan's view again, frozen for the workload's kinds only, when their state differs at the restart", (t) => {
  const out = plan(deleteThenRecreateByWorkload().events);
  const faults = stale(out);
  const whole = faults.filter((f) => f.kinds === undefined);
  const scoped = faults.filter((f) => f.kinds !== undefined);
  // The whole-view plans are those of the trace without workload steps, but those whose twin shows
  // the same (only the Database changed between the view and the restart): the twin is kept instead.
  const pair = ({ at, viewAfter }: StaleRestartFault) => JSON.stringify({ at, viewAfter });
  const withoutSteps = stale(plan(deleteThenRecreate().events)).map(pair);
  t.deepEqual(
    whole.map(pair),
    withoutSteps.filter((p) => !scoped.map(pair).includes(p) || whole.map(pair).includes(p)),
  );
  t.true(
    withoutSteps.every((p) => whole.map(pair).includes(p) || scoped.map(pair).includes(p)),
    'every whole-view plan is kept, or its twin',
  );
  t.true(
    scoped.every((f) => f.kinds!.length === 1 && f.kinds![0] === 'Database'),
    'the kind the workload writes',
  );
  // Sieve's zookeeper-operator#314 / rabbitmq-operator#648 shape: the Database being deleted, every
  // child of its new life current.
  const sieve = plansOf(out, 'stale-state').find((p) => {
    const f = p.spec.faults[0] as StaleRestartFault;
    return (
      f.kinds !== undefined &&
      f.viewAfter?.fields?.[0]?.path === 'metadata.deletionTimestamp' &&
      'change' in f.at &&
      f.at.change.key === STS &&
      f.at.change.occurrence === 2
    );
  });
  t.truthy(sieve, summary(out).join('\n'));
  t.regex(sieve!.spec.description, /onto a view of Database frozen \(every other kind live\) right after Database\/default\/db1 is updated/);
  // Every scoped view differs from the Database's state at the restart (its previous life does: another
  // uid); each whole plan has at most one twin, and twins that show the same (the Database's state in the
  // view, the rest at the restart) are one. Four: the views after the Database's creation, its deletion
  // mark and the StatefulSet's first creation, each with the rest as at its restart, and the previous life's.
  t.is(scoped.length, 4, summary(out).join('\n'));
  t.is(stages(out, 'stale-state').deduplicated, faults.length);
});

test('scoped twins, must not: none when the workload kinds look the same in the view as at the restart', (t) => {
  // The Database never changes after its creation: a view frozen for it alone is no stale view.
  const b = new TraceBuilder()
    .stepStart(1, 'write', [DB])
    .external('ADDED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
    .stepDone(1, { wrote: [DB] })
    .episode()
    .write('create', STS, { owner: DB, set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'spec.replicas': 3 }, deliver: true })
    .episode()
    .write('update', STS, { set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .external('MODIFIED', STS, { set: { 'spec.replicas': 4 }, deliver: true })
    .episode();
  const faults = stale(plan(b.events));
  t.true(faults.length > 0);
  t.deepEqual(
    faults.filter((f) => f.kinds !== undefined),
    [],
  );
});

test('a write to the status subresource can revert only the status: a later change of the spec or metadata is no conflict', (t) => {
  const b = new TraceBuilder()
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .episode()
    // PUT .../status sends the whole object, but the API server keeps only its status.
    .write('update', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
    .episode()
    .external('MODIFIED', DB, { set: { 'metadata.labels.team': 'b' }, deliver: true })
    .episode();
  t.deepEqual(summary(plan(b.events)), [], 'nothing changes the status after the write: re-issuing it reverts nothing');
  // A later status change someone else made is one.
  b.external('MODIFIED', DB, { set: { 'status.phase': 'Scaling' }, deliver: true }).episode();
  t.true(
    summary(plan(b.events)).some((s) => s.endsWith(`at ${DB} update[status.phase] #1`)),
    summary(plan(b.events)).join('\n'),
  );
});

test('scoped twins: a twin that shows the controller what its whole-view plan shows is one plan, the twin', (t) => {
  // Nothing but the Database changes between the view and the restart: freezing the Database alone or
  // every kind gives the restarted controller the same view.
  const b = new TraceBuilder()
    .stepStart(1, 'write', [DB])
    .external('ADDED', DB, { set: { 'spec.replicas': 2 }, deliver: true })
    .stepDone(1, { wrote: [DB] })
    .episode()
    .write('patch', DB, { set: { 'metadata.labels.owner': 'op' }, deliver: true })
    .episode()
    .stepStart(2, 'write', [DB])
    .external('MODIFIED', DB, { set: { 'metadata.labels.owner': 'user' }, deliver: true })
    .stepDone(2, { wrote: [DB] })
    .episode();
  const faults = stale(plan(b.events));
  t.is(faults.length, 1, summary(plan(b.events)).join('\n'));
  t.deepEqual(faults[0]!.kinds, ['Database']);
  t.is(faults[0]!.viewAfter?.change, 'create');
});

test("a status report conflicts with a status change someone else made, not with the controller's own later report", (t) => {
  const b = new TraceBuilder()
    .external('ADDED', DB, { deliver: true })
    .episode()
    .write('update', DB, { subresource: 'status', set: { 'status.phase': 'Creating' }, deliver: true })
    .episode()
    .external('ADDED', STS, { deliver: true })
    .episode()
    .write('update', DB, { subresource: 'status', set: { 'status.phase': 'Ready' }, deliver: true })
    .episode();
  // Re-issuing the first report over the second reverts what the controller itself reported, to a
  // report it had made, from a view older than both: no plan restarts at its own report.
  t.deepEqual(summary(plan(b.events)), []);
  // Someone else changes the status afterwards: that is what both reports, re-issued, would undo.
  b.external('MODIFIED', DB, { set: { 'status.phase': 'Degraded' }, deliver: true }).episode();
  const out = plan(b.events);
  t.deepEqual(summary(out), [
    `view ${DB} create #1 / at ${DB} update[status.phase] #1`,
    `view ${DB} update[status.phase] #1 / at ${DB} update[status.phase] #1`,
    `view ${STS} create #1 / at ${DB} update[status.phase] #1`,
  ]);
  t.true(stale(out).every((f) => 'change' in f.at && f.at.change.fields?.[0]?.after === 'Degraded'));
});
