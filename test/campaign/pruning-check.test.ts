import test from 'ava';
import { bugKey, bugsFound, findingsTogether, keptPlansOfBugs, missedBugs, plansToRetry } from '../../src/campaign/pruning-check.js';
import { PLAN_API_VERSION, type Fault, type TestPlan } from '../../src/model/plan.js';
import type { Alarm, PlanResult, Verdict } from '../../src/model/results.js';

const crashAfter = (name: string): Fault =>
  ({ type: 'crash-after-write', trigger: { verb: 'delete', key: `PersistentVolumeClaim/default/${name}`, occurrence: 1 } }) as unknown as Fault;

function plan(name: string, fault: Fault): TestPlan {
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'TestPlan',
    metadata: { name },
    spec: { controller: 'c', workload: 'w', pattern: 'intermediate-state', description: name, faults: [fault] },
  };
}

function result(planName: string, verdict: Verdict, objects: string[], flaky: string[] = []): PlanResult {
  const alarm = (object: string, isFlaky: boolean): Alarm => ({
    oracle: 'end-state',
    object,
    reference: [],
    test: null,
    message: `${object} differs`,
    ...(isFlaky ? { flaky: true } : {}),
  });
  return {
    plan: planName,
    controller: 'c',
    workload: 'w',
    pattern: 'intermediate-state',
    description: planName,
    verdict,
    injected: true,
    alarms: [...objects.map((o) => alarm(o, false)), ...flaky.map((o) => alarm(o, true))],
    durationMs: 1,
    runDir: '/nowhere',
  };
}

test('a run that alarms on two objects found two bugs, not a third combined one', (t) => {
  const unpruned = bugsFound([
    result('a', 'bug', ['PVC/default/data-1', 'PV/pvc-1']),
    result('b', 'bug', ['Pod/default/web-1']),
    result('c', 'bug', ['Pod/default/web-1', 'PVC/default/data-1']),
  ]);
  t.deepEqual(
    [...unpruned],
    [
      ['PV/pvc-1', ['a']],
      ['PVC/default/data-1', ['a', 'c']],
      ['Pod/default/web-1', ['b', 'c']],
    ],
  );
  // A pruned set whose runs showed the symptoms separately found every bug.
  const pruned = bugsFound([result('x', 'bug', ['PVC/default/data-1', 'PV/pvc-1']), result('y', 'bug', ['Pod/default/web-1'])]);
  t.deepEqual(missedBugs(unpruned, pruned), []);
  t.deepEqual(findingsTogether([result('c', 'bug', ['Pod/default/web-1', 'PVC/default/data-1']), result('y', 'bug', ['Pod/default/web-1'])]), [
    'PVC/default/data-1 + Pod/default/web-1',
    'Pod/default/web-1',
  ]);
});

test('only bug verdicts and non-flaky alarms count; generated suffixes fold', (t) => {
  const bugs = bugsFound([
    result('a', 'pass', ['Pod/default/web-1']),
    result('b', 'not-injected', ['Pod/default/web-2']),
    result('c', 'bug', ['Secret/default/tok-7xk2p'], ['ConfigMap/default/flaky']),
    result('d', 'bug', [], ['ConfigMap/default/flaky']),
  ]);
  t.deepEqual([...bugs.keys()], ['Secret/default/tok-*']);
  t.is(bugKey('Pod/default/web-1'), 'Pod/default/web-1');
  t.is(bugKey('Secret/default/tok-aaaaa'), 'Secret/default/tok-aaaaa', 'vowels are not in the API server alphabet');
});

test("a Deployment's ReplicaSets and their pods are one bug whatever pod-template-hash each run gave them", (t) => {
  const bugs = bugsFound([
    result('a', 'bug', ['ReplicaSet/default/mc1-mongos-6d4cf56db6', 'Pod/default/mc1-mongos-6d4cf56db6-7xk2p']),
    result('b', 'bug', ['ReplicaSet/default/mc1-mongos-58b9c7f4d9', 'Pod/default/mc1-mongos-58b9c7f4d9-*']),
  ]);
  t.deepEqual([...bugs.keys()], ['Pod/default/mc1-mongos-*-*', 'ReplicaSet/default/mc1-mongos-*']);
  t.is(bugKey('StatefulSet/default/mc1-rs0-6d4cf56db6'), 'StatefulSet/default/mc1-rs0-6d4cf56db6', 'only ReplicaSets and pods carry the hash');
  t.is(bugKey('ReplicaSet/default/web-rs'), 'ReplicaSet/default/web-rs', 'too short for a hash');
});

test('a bug the pruned runs missed is missed unless a later run found it', (t) => {
  const unpruned = bugsFound([result('a', 'bug', ['Pod/default/web-1']), result('b', 'bug', ['PVC/default/data-1'])]);
  const pruned = bugsFound([result('x', 'bug', ['PVC/default/data-1'])]);
  t.deepEqual(missedBugs(unpruned, pruned), ['Pod/default/web-1']);
  const retry = bugsFound([result('x', 'bug', ['Pod/default/web-1'])]);
  t.deepEqual(missedBugs(unpruned, pruned, retry), []);
});

test('kept plans are matched by their faults, not their names, in the pruned order, and are what a retry runs', (t) => {
  const unprunedPlans = [
    plan('intermediate-0001', crashAfter('data-0')),
    plan('intermediate-0002', crashAfter('data-1')),
    plan('intermediate-0003', crashAfter('data-2')),
  ];
  const prunedPlans = [plan('intermediate-0001', crashAfter('data-2')), plan('intermediate-0002', crashAfter('data-1'))];
  const unprunedBugs = bugsFound([
    result('intermediate-0002', 'bug', ['Pod/default/web-1']),
    result('intermediate-0001', 'bug', ['PVC/default/data-0']),
    result('intermediate-0003', 'bug', ['Pod/default/web-1']),
  ]);
  const kept = keptPlansOfBugs(unprunedBugs, unprunedPlans, prunedPlans);
  t.deepEqual(
    [...kept].map(([bug, plans]) => [bug, plans.map((p) => p.metadata.name)]),
    [
      ['PVC/default/data-0', []],
      ['Pod/default/web-1', ['intermediate-0001', 'intermediate-0002']],
    ],
  );
  t.deepEqual(
    plansToRetry(['Pod/default/web-1', 'PVC/default/data-0'], kept, prunedPlans).map((p) => p.metadata.name),
    ['intermediate-0001', 'intermediate-0002'],
  );
  t.deepEqual(plansToRetry([], kept, prunedPlans), []);
});
