import test from 'ava';
import type { PlannerOutput } from '../../planner/index.js';
import { staleViewMoment, type CrashAfterWriteFault, type StaleRestartFault } from '../../src/model/plan.js';
import { TraceBuilder } from './_trace-builder.js';
import { CM, DB, STS, deleteThenRecreate, plan, plansOf, stages } from './_helpers.js';

const view = (out: PlannerOutput) =>
  plansOf(out, 'stale-state').map((p) => {
    const f = p.spec.faults[0] as StaleRestartFault;
    const m = staleViewMoment(f);
    return `${p.metadata.name}: view ${m.before ? 'before ' : ''}${m.change.key} ${m.change.change}${m.change.fields ? `[${m.change.fields.map((x) => x.path).join(',')}]` : ''}`;
  });

test('selection keeps one stale plan per kind of write re-issued; for a delete, the view right after the deletion that set it off', (t) => {
  const all = plan(deleteThenRecreate({ statusReport: true }).events);
  const selected = plan(deleteThenRecreate({ statusReport: true }).events, { select: true });
  // The whole set has both views of the delete (and the plans of the two creates).
  t.true(
    view(all).some((v) => v.endsWith(`view ${STS} update[status.replicas]`)),
    view(all).join('\n'),
  );
  t.true(
    view(all).some((v) => v.endsWith(`view ${DB} update[metadata.deletionTimestamp]`)),
    view(all).join('\n'),
  );
  // One plan per group: the delete of the StatefulSet, from the view of the Database being deleted
  // (not the later status report, though it is nearer the delete); the creates of the StatefulSet.
  const deletes = plansOf(selected, 'stale-state').filter((p) => (p.spec.description ?? '').includes('deletes StatefulSet'));
  t.is(deletes.length, 1);
  const kept = deletes[0]!.spec.faults[0] as StaleRestartFault;
  t.deepEqual(kept.viewAfter, { key: DB, change: 'update', fields: [{ path: 'metadata.deletionTimestamp', after: '<timestamp>' }], occurrence: 1 });
  t.deepEqual(kept.at, { change: { key: STS, change: 'create', occurrence: 2 } });
  t.is(plansOf(selected, 'stale-state').length, 2, view(selected).join('\n'));
  // Kept plans have the names they have in the whole set; the stage says how many were kept.
  const names = new Set(plansOf(all, 'stale-state').map((p) => p.metadata.name));
  t.true(plansOf(selected, 'stale-state').every((p) => names.has(p.metadata.name)));
  t.is(stages(selected, 'stale-state').selected, 2);
  t.is(stages(selected, 'stale-state').deduplicated, plansOf(all, 'stale-state').length);
  t.is(stages(all, 'stale-state').selected, undefined);
});

/** The Database creates its StatefulSet and ConfigMap in one reconcile, in each of its two lives. */
function twoLives(): TraceBuilder {
  const b = new TraceBuilder().external('ADDED', DB, { deliver: true }).episode();
  b.write('create', STS, { owner: DB, deliver: true }).write('create', CM, { owner: DB, deliver: true }).episode();
  b.external('DELETED', STS, { deliver: true }).external('DELETED', CM, { deliver: true }).episode();
  b.write('create', STS, { owner: DB, deliver: true }).write('create', CM, { owner: DB, deliver: true }).episode();
  return b;
}

test('selection keeps the first crash after a write of an object, and one api-error plan per verb', (t) => {
  const crashes = (out: PlannerOutput) =>
    plansOf(out, 'intermediate-state').map((p) => {
      const f = p.spec.faults[0] as CrashAfterWriteFault;
      return `${p.metadata.name} ${f.after.verb} ${f.after.key} #${f.after.occurrence}`;
    });
  const errors = (out: PlannerOutput) =>
    plansOf(out, 'error-path').flatMap((p) => {
      const f = p.spec.faults[0]!;
      return f.type === 'api-error' ? [`${p.metadata.name} ${f.on.verb} ${f.on.key} #${f.on.occurrence} ${f.answer}`] : [];
    });
  const all = plan(twoLives().events);
  t.deepEqual(crashes(all), [`intermediate-0001 create ${STS} #1`, `intermediate-0002 create ${CM} #1`, `intermediate-0003 create ${STS} #2`]);
  const selected = plan(twoLives().events, { select: true });
  t.deepEqual(crashes(selected), [`intermediate-0001 create ${STS} #1`, `intermediate-0002 create ${CM} #1`]);
  t.is(errors(all).length, 6);
  t.deepEqual(errors(selected), [`error-0001 create ${STS} #1 lost-response`]);
});

/**
 * The workload creates the Database, the controller its StatefulSet and two annotations, then deletes
 * the StatefulSet; the workload changes the Database's spec and the controller creates the StatefulSet
 * again. `lateAnnotation`: the second annotation comes after that re-creation (another run's timing).
 */
function annotatedThenRecreated(lateAnnotation: boolean): TraceBuilder {
  const b = new TraceBuilder()
    .stepStart(0, 'write', [DB])
    .external('ADDED', DB, { set: { 'spec.replicas': 1 }, deliver: true })
    .stepDone(0, { wrote: [DB] });
  b.episode().write('create', STS, { owner: DB, deliver: true }).episode();
  b.external('MODIFIED', DB, { set: { 'metadata.annotations.first': 'x' }, deliver: true });
  if (!lateAnnotation) b.external('MODIFIED', DB, { set: { 'metadata.annotations.second': 'y' }, deliver: true });
  b.episode().write('delete', STS, { deliver: true }).episode();
  b.stepStart(1, 'write', [DB]).external('MODIFIED', DB, { set: { 'spec.replicas': 2 }, deliver: true });
  b.episode().write('create', STS, { owner: DB, deliver: true }).episode();
  if (lateAnnotation) b.external('MODIFIED', DB, { set: { 'metadata.annotations.second': 'y' }, deliver: true }).episode();
  return b.stepDone(1, { wrote: [DB] });
}

test('selection keeps a view that comes before the restart, and shows the old spec, in every reference run', (t) => {
  const runs = [annotatedThenRecreated(true).events, annotatedThenRecreated(false).events];
  const annotation = (f: StaleRestartFault) =>
    staleViewMoment(f)
      .change.fields?.map((x) => x.path)
      .join(',');
  const deleteViews = (out: PlannerOutput) =>
    plansOf(out, 'stale-state')
      .filter((p) => p.spec.description.includes('deletes StatefulSet'))
      .map((p) => `${(p.spec.faults[0] as StaleRestartFault).kinds ? 'scoped' : 'whole'} ${annotation(p.spec.faults[0] as StaleRestartFault) ?? 'no fields'}`);
  // The run plans come from has both annotations before the delete: both views are planned.
  const all = deleteViews(plan(runs));
  t.true(all.includes('whole metadata.annotations.second') && all.includes('whole metadata.annotations'), all.join('\n'));
  // The later one comes after the restart in the other run: the earlier one is kept, in each scope.
  t.deepEqual(deleteViews(plan(runs, { select: true })).sort(), ['scoped metadata.annotations', 'whole metadata.annotations']);
  // With the other run's timing like this one's, the later view is kept.
  const same = [annotatedThenRecreated(false).events, annotatedThenRecreated(false).events];
  t.true(
    deleteViews(plan(same, { select: true })).every((v) => v.endsWith('metadata.annotations.second')),
    deleteViews(plan(same, { select: true })).join('\n'),
  );
});
