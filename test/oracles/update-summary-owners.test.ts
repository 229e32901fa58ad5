/**
 * The update-summary oracle and the garbage collector: a child's life that ended with its owner is
 * the controller reaching that child before its owner went, or not (timing), while its owner lived
 * as in the reference runs; when the owner itself lived differently, its children's lives still count.
 */
import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { runWith } from './_runs.js';

type Change = ['ADDED' | 'DELETED' | 'MODIFIED', KubeObject];

const owner = (o: KubeObject) => ({ apiVersion: 'apps/v1', kind: o.kind!, name: o.metadata!.name!, uid: o.metadata!.uid!, controller: true });

function statefulSet(uid: string): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db-cfg', namespace: 'default', uid }, spec: { replicas: 3 } };
}

/** The budget the operator makes for a StatefulSet it finds (owned by it, so collected with it). */
function budget(of: KubeObject, uid: string): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'db-cfg-cfg', namespace: 'default', uid, ownerReferences: [owner(of)] },
    spec: { maxUnavailable: 1 },
  };
}

function pod(of: KubeObject, uid: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db-cfg-0', namespace: 'default', uid, ownerReferences: [owner(of)] }, spec: {} };
}

const updateSummary = (refs: Change[][], test: Change[]) =>
  compareRuns(
    refs.map((r) => runWith([], r)),
    runWith([], test),
  )
    .filter((a) => a.oracle === 'update-summary')
    .map((a) => a.message);

test("a child made in an owner's life the references also had, and collected with it, is timing: not counted", (t) => {
  // mongodb disable-enable-shard: the config servers' StatefulSet is created, deleted (sharding
  // disabled) and created again; the operator makes its budget only in a reconcile that finds the
  // StatefulSet. The references' first StatefulSet went before a second reconcile reached it.
  const first = statefulSet('sts-1');
  const second = statefulSet('sts-2');
  const reference: Change[] = [
    ['ADDED', first],
    ['DELETED', first],
    ['ADDED', second],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  const earlyBudget = budget(first, 'pdb-1');
  const test: Change[] = [
    ['ADDED', first],
    ['ADDED', earlyBudget],
    ['DELETED', first],
    ['DELETED', earlyBudget],
    ['ADDED', second],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  t.deepEqual(updateSummary([reference, reference], test), []);
  // The other way round too: the references made it early, the test run did not.
  t.deepEqual(updateSummary([test, test], reference), []);
});

test('a child the controller deleted while its owner lived is counted', (t) => {
  const sts = statefulSet('sts-1');
  const reference: Change[] = [
    ['ADDED', sts],
    ['ADDED', budget(sts, 'pdb-1')],
  ];
  const test: Change[] = [
    ['ADDED', sts],
    ['ADDED', budget(sts, 'pdb-1')],
    ['DELETED', budget(sts, 'pdb-1')],
    ['ADDED', budget(sts, 'pdb-2')],
  ];
  t.deepEqual(updateSummary([reference], test), [
    'PodDisruptionBudget/default/db-cfg-cfg: created 1 time(s) in reference runs, but 2 time(s) in the test run',
    'PodDisruptionBudget/default/db-cfg-cfg: deleted 0 time(s) in reference runs, but 1 time(s) in the test run',
  ]);
});

test('children collected with an owner life the references lack still count (K8SPSMDB-433: the config servers deleted again)', (t) => {
  // The references: the StatefulSet and its pod created, both gone when sharding is disabled, both
  // created again. K8SPSMDB-433's test run: the restarted operator deletes the new StatefulSet once
  // more, and creates it again; the garbage collector takes its pod each time.
  const lives = (n: number): Change[] =>
    Array.from({ length: n }, (_, i) => {
      const sts = statefulSet(`sts-${i}`);
      const p = pod(sts, `pod-${i}`);
      const life: Change[] = [
        ['ADDED', sts],
        ['ADDED', p],
      ];
      return i < n - 1 ? [...life, ['DELETED', sts] as Change, ['DELETED', p] as Change] : life;
    }).flat();
  t.deepEqual(updateSummary([lives(2), lives(2)], lives(3)), [
    'Pod/default/db-cfg-0: created 2 time(s) in reference runs, but 3 time(s) in the test run',
    'Pod/default/db-cfg-0: deleted 1 time(s) in reference runs, but 2 time(s) in the test run',
    'StatefulSet/default/db-cfg: created 2 time(s) in reference runs, but 3 time(s) in the test run',
    'StatefulSet/default/db-cfg: deleted 1 time(s) in reference runs, but 2 time(s) in the test run',
  ]);
});

test('an owner being deleted (foreground: deletionTimestamp set) counts as gone for its children', (t) => {
  const first = statefulSet('sts-1');
  const going = { ...first, metadata: { ...first.metadata, deletionTimestamp: '2024-05-01T10:00:00Z' } };
  const second = statefulSet('sts-2');
  const earlyBudget = budget(first, 'pdb-1');
  const reference: Change[] = [
    ['ADDED', first],
    ['MODIFIED', going],
    ['DELETED', going],
    ['ADDED', second],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  const test: Change[] = [
    ['ADDED', first],
    ['ADDED', earlyBudget],
    ['MODIFIED', going],
    ['DELETED', earlyBudget],
    ['DELETED', going],
    ['ADDED', second],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  t.deepEqual(updateSummary([reference], test), []);
});

test('a child created after its owner was gone, then collected, is counted: a stale view made it again', (t) => {
  // stale-deletion: restarted onto a view from before the cluster's deletion, the controller makes
  // the deleted cluster's StatefulSet again (owned by the old uid); the garbage collector takes it.
  const first = statefulSet('sts-1');
  const second = statefulSet('sts-2');
  const reference: Change[] = [
    ['ADDED', first],
    ['DELETED', first],
    ['ADDED', second],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  const resurrected = budget(first, 'pdb-1');
  const test: Change[] = [
    ['ADDED', first],
    ['DELETED', first],
    ['ADDED', second],
    ['ADDED', resurrected],
    ['DELETED', resurrected],
    ['ADDED', budget(second, 'pdb-2')],
  ];
  t.deepEqual(updateSummary([reference, reference], test), [
    'PodDisruptionBudget/default/db-cfg-cfg: created 1 time(s) in reference runs, but 2 time(s) in the test run',
    'PodDisruptionBudget/default/db-cfg-cfg: deleted 0 time(s) in reference runs, but 1 time(s) in the test run',
  ]);
});
