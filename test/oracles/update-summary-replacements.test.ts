/**
 * The update-summary oracle and replacements: an object the controller deletes and, with its very
 * next write, creates again with other content (ECK changes a PodDisruptionBudget so) is an update
 * when the run's faults left the controller's view true (faults on the managed system alone), and
 * a deletion plus a creation otherwise (casskop#321: replaced after a stale spec).
 */
import test from 'ava';
import { compareRuns } from '../../oracles/index.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { RunArtifacts } from '../../src/model/results.js';
import type { OwnWrite } from '../../src/model/controller-activity.js';
import { runWith } from './_runs.js';

type Change = ['ADDED' | 'DELETED' | 'MODIFIED', KubeObject];

function budget(minAvailable: number): KubeObject {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'es-default', namespace: 'default' }, spec: { minAvailable } };
}

function claim(volumeName?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-es-default-1', namespace: 'default' },
    spec: { resources: { requests: { storage: '1Gi' } }, ...(volumeName ? { volumeName } : {}) },
  };
}

/** A run of `changes` whose changes at `own` (indices) the controller made, in that order, as its only writes. */
function runOf(changes: Change[], own: number[] = changes.map((_, i) => i)): RunArtifacts {
  const run = runWith([], changes);
  const ownWrites: OwnWrite[] = own.map((i) => {
    const c = run.clusterChanges[i]!;
    const verb = c.eventType === 'ADDED' ? 'create' : c.eventType === 'DELETED' ? 'delete' : 'update';
    return { verb, key: c.key, resourceVersion: c.resourceVersion, seq: i };
  });
  return { ...run, controllerActivity: { apiErrors: [], ownWrites } };
}

/** ECK: a budget replaced for each value of minAvailable in turn (delete, then create). */
function budgetHistory(values: number[]): Change[] {
  const changes: Change[] = [['ADDED', budget(values[0]!)]];
  for (const v of values.slice(1)) changes.push(['DELETED', changes.at(-1)![1]], ['ADDED', budget(v)]);
  return changes;
}

const messages = (refs: RunArtifacts[], test: RunArtifacts, faultsOnManagedSystemOnly: boolean) =>
  compareRuns(refs, test, { faultsOnManagedSystemOnly })
    .filter((a) => a.oracle === 'update-summary')
    .map((a) => a.message);

test('a replacement with other content is an update when the faults were on the managed system alone', (t) => {
  // elastic scaledown-scaleup, managed-0021: the health check failed in the fault's window, so the
  // budget went 1 -> 2 and, once green again, 2 -> 1: two more replacements than the references made.
  const refs = [runOf(budgetHistory([2, 0, 2, 1])), runOf(budgetHistory([2, 0, 2, 1]))];
  const test = runOf(budgetHistory([2, 0, 2, 1, 2, 1]));
  t.deepEqual(messages(refs, test, true), []);
  // Under a stale view the same counts are casskop#321's symptom.
  t.deepEqual(messages(refs, test, false), [
    'PodDisruptionBudget/default/es-default: created 4 time(s) in reference runs, but 6 time(s) in the test run',
    'PodDisruptionBudget/default/es-default: deleted 3 time(s) in reference runs, but 5 time(s) in the test run',
  ]);
});

test('a deletion and a creation that are not one replacement by the controller still count', (t) => {
  const bound = claim('pvc-1');
  const refs = [runOf([['ADDED', bound]])];
  // The controller deleted the claim; the StatefulSet made it again (not the controller's write).
  const recreatedByOthers = runOf(
    [
      ['ADDED', bound],
      ['DELETED', bound],
      ['ADDED', claim()],
    ],
    [1],
  );
  // The controller deleted and created it again with the same content: the data is lost all the same.
  const sameContent = runOf([
    ['ADDED', bound],
    ['DELETED', bound],
    ['ADDED', bound],
  ]);
  // Another write of the controller came between the deletion and the creation.
  const apart = runOf(
    [
      ['ADDED', bound],
      ['DELETED', bound],
      ['ADDED', budget(1)],
      ['ADDED', claim()],
    ],
    [1, 2, 3],
  );
  const expected = [
    'PersistentVolumeClaim/default/data-es-default-1: created 1 time(s) in reference runs, but 2 time(s) in the test run',
    'PersistentVolumeClaim/default/data-es-default-1: deleted 0 time(s) in reference runs, but 1 time(s) in the test run',
  ];
  t.deepEqual(messages(refs, recreatedByOthers, true), expected);
  t.deepEqual(messages(refs, sameContent, true), expected);
  t.deepEqual(
    messages(refs, apart, true).filter((m) => m.startsWith('PersistentVolumeClaim/')),
    expected,
  );
});
