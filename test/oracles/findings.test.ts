/**
 * Findings (oracles/findings.ts) from hand-built results: bug verdicts grouped by what their runs
 * show, the divergence found in hand-built traces, the shortest reproducer, the classification, and
 * the workloads that tested nothing.
 */
import test from 'ava';
import { classifyFinding, findingSignature, firstDivergence, groupFindings, stageThatEmptied, untestedWorkloads } from '../../oracles/findings.js';
import type { Alarm, RecoveryRun, RunArtifacts } from '../../src/model/results.js';
import type { OwnWrite } from '../../src/model/controller-activity.js';
import type { KubeObject } from '../../src/model/object-key.js';
import { configMap, runWith, secret } from './_runs.js';
import { claimGone, deleted, deletesSet, refusedScaleDown, result, rolledBack } from './_results.js';

test('bug verdicts of different plans, patterns and workloads with the same divergence are one finding', (t) => {
  const results = [
    result('stale-0001'),
    result('stale-0002', { alarms: [deleted, claimGone] }),
    result('intermediate-0003', { pattern: 'intermediate-state' }),
    result('stale-0001', { workload: 'scale' }),
    result('stale-0004', { verdict: 'pass', alarms: [], divergence: undefined }),
  ];
  const found = groupFindings(results);
  t.is(found.length, 1);
  t.deepEqual(
    found[0]!.plans.map((p) => `${p.workload}/${p.plan}`),
    ['recreate/stale-0001', 'recreate/stale-0002', 'recreate/intermediate-0003', 'scale/stale-0001'],
  );
  t.is(found[0]!.class, 'bug');
  t.regex(found[0]!.summary, /deletes StatefulSet\/default\/mc1-rs0, which no reference run did/);
});

test('different divergences, and the same divergence in two controllers, are different findings', (t) => {
  const found = groupFindings([
    result('a'),
    result('b', { divergence: { kind: 'missing', verb: 'create', object: 'PersistentVolumeClaim/default/data-0' }, alarms: [claimGone] }),
    result('c', { controller: 'other-op' }),
  ]);
  t.is(found.length, 3);
});

test("the controller's last new error is part of the signature, with numbers folded", (t) => {
  const crash = (n: number): Alarm => ({
    oracle: 'health',
    check: 'crash-log',
    object: '(controller)',
    reference: ['none'],
    test: `panic: index out of range [${n}] with length ${n}`,
    message: 'the controller panicked',
  });
  const found = groupFindings([result('a', { alarms: [crash(3), deleted] }), result('b', { alarms: [crash(4), deleted] }), result('c')]);
  t.is(found.length, 2);
  t.deepEqual(
    found.find((f) => f.signature.lastError)!.plans.map((p) => p.plan),
    ['a', 'b'],
  );
  t.is(found.find((f) => f.signature.lastError)!.signature.lastError, 'crash-log panic: index out of range [N] with length N');
});

test('without a state divergence, the first liveness or health alarm is the signature', (t) => {
  const stuck: Alarm = { oracle: 'liveness', check: 'not-quiet', object: '(controller)', reference: ['quiet'], test: 12, message: 'kept writing' };
  const stuck2 = { ...stuck, test: 30 };
  const found = groupFindings([result('a', { alarms: [stuck], divergence: undefined }), result('b', { alarms: [stuck2], divergence: undefined })]);
  t.is(found.length, 1);
  t.deepEqual(findingSignature(result('a', { alarms: [stuck], divergence: undefined })), { oracle: 'liveness', check: 'not-quiet', object: '(controller)' });
});

test('results written before divergences existed group by their first state alarm as a missing write', (t) => {
  const old = (plan: string) => result(plan, { divergence: undefined, alarms: [claimGone] });
  const found = groupFindings([old('a'), old('b')]);
  t.is(found.length, 1);
  t.deepEqual(found[0]!.signature.divergence, { kind: 'missing', verb: 'create', object: 'PersistentVolumeClaim/default/data-0' });
});

test('the shortest reproducer has the fewest faults, then the fewest workload steps; its command runs it again', (t) => {
  const found = groupFindings([
    result('big', { size: { faults: 3, steps: 4 } }),
    result('long', { size: { faults: 1, steps: 9 } }),
    result('small', { size: { faults: 1, steps: 4 }, planFile: '/my plans/small.yaml' }),
    result('unknown', { size: undefined }),
  ]);
  t.is(found[0]!.reproducer.plan, 'small');
  t.is(found[0]!.command, `kperturb test '/my plans/small.yaml' -c /op/kperturb.yaml`);
});

const pod = (name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', generateName: 'web-', ...extra },
});
const set = (replicas: number): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'mc1-rs0', namespace: 'default' },
  spec: { replicas },
});

test('the first divergence is an extra delete of an alarmed object, not an earlier change elsewhere', (t) => {
  const refs = [
    runWith(
      [],
      [
        ['ADDED', set(1)],
        ['ADDED', configMap('noise', { n: '1' })],
      ],
    ),
  ];
  const run = runWith(
    [],
    [
      ['ADDED', set(1)],
      ['ADDED', configMap('noise', { n: '1' })],
      ['MODIFIED', configMap('noise', { n: '2' })],
      ['ADDED', configMap('only-in-this-run', {})],
      ['DELETED', set(1)],
    ],
  );
  t.deepEqual(firstDivergence(refs, run, [deleted]), deletesSet);
});

test('an update that sets an alarmed field to a value no reference run wrote is the divergence, with its field', (t) => {
  const refs = [
    runWith(
      [],
      [
        ['ADDED', set(1)],
        ['MODIFIED', set(3)],
      ],
    ),
  ];
  const run = runWith(
    [],
    [
      ['ADDED', set(1)],
      ['MODIFIED', set(3)],
      ['MODIFIED', set(0)],
    ],
  );
  const value: Alarm = {
    oracle: 'end-state',
    check: 'value',
    object: 'StatefulSet/default/mc1-rs0',
    field: 'spec.replicas',
    reference: [3],
    test: 0,
    message: '',
  };
  t.deepEqual(firstDivergence(refs, run, [value]), { kind: 'extra', verb: 'update', object: 'StatefulSet/default/mc1-rs0', field: 'spec.replicas' });
});

test('an update is judged by the fields it changed, counted: a value the references set once, set twice, diverges; a field it carried unchanged does not', (t) => {
  // scale-floor: every reference run scales 3 -> 1 and stays there; a stale view lets the test run
  // go back to 3. The StatefulSet controller's status rides along in the controller's update.
  const sts = (replicas: number, ready: number): KubeObject => ({ ...set(replicas), status: { availableReplicas: ready } });
  const refs = [
    runWith(
      [],
      [
        ['ADDED', sts(3, 0)],
        ['MODIFIED', sts(3, 3)],
        ['MODIFIED', sts(1, 3)],
        ['MODIFIED', sts(1, 1)],
      ],
    ),
  ];
  const run = runWith(
    [],
    [
      ['ADDED', sts(3, 0)],
      ['MODIFIED', sts(3, 3)],
      ['MODIFIED', sts(1, 3)],
      ['MODIFIED', sts(1, 2)],
      ['MODIFIED', sts(3, 2)],
      ['MODIFIED', sts(3, 3)],
    ],
  );
  const value = (field: string, reference: number, test: number): Alarm => ({
    oracle: 'end-state',
    check: 'value',
    object: 'StatefulSet/default/mc1-rs0',
    field,
    reference: [reference],
    test,
    message: '',
  });
  // The controller's writes: the create and the two spec updates (the others are the StatefulSet controller's).
  const alarms = [value('spec.replicas', 1, 3), value('status.availableReplicas', 1, 3)];
  t.deepEqual(firstDivergence([madeBy(refs[0]!, [0, 2])], madeBy(run, [0, 2, 4]), alarms), {
    kind: 'extra',
    verb: 'update',
    object: 'StatefulSet/default/mc1-rs0',
    field: 'spec.replicas',
  });
});

test('objects with generated names are folded: the same extra create in two runs is one divergence', (t) => {
  const refs = [runWith([], [['ADDED', pod('web-x2b4c')]])];
  const extra: Alarm = { oracle: 'end-state', check: 'generated-count', object: 'Pod/default/web-*', reference: [1], test: 2, message: '' };
  const runA = runWith(
    [],
    [
      ['ADDED', pod('web-bcdfg')],
      ['ADDED', pod('web-hjklm')],
    ],
  );
  const runB = runWith(
    [],
    [
      ['ADDED', pod('web-zzzz9')],
      ['ADDED', pod('web-22222')],
    ],
  );
  const a = firstDivergence(refs, runA, [extra]);
  t.deepEqual(a, { kind: 'extra', verb: 'create', object: 'Pod/default/web-*' });
  t.deepEqual(firstDivergence(refs, runB, [extra]), a);
});

/** `run` with the changes at `own` (indexes into its changes) made by the controller: those with an even index answered with their resourceVersion, the others (protobuf answers) found by object. */
function madeBy(run: RunArtifacts, own: number[]): RunArtifacts {
  const ownWrites: OwnWrite[] = own.map((i) => {
    const c = run.clusterChanges[i]!;
    const verb = c.eventType === 'ADDED' ? 'create' : c.eventType === 'DELETED' ? 'delete' : 'update';
    return { verb, key: c.key, seq: c.seq - 1, ...(i % 2 === 0 ? { resourceVersion: c.resourceVersion } : {}) };
  });
  return { ...run, controllerActivity: { apiErrors: [], ownWrites } };
}

test("the garbage collector's cascade is not the divergence: the controller's own extra write is, in whatever order the cascade went", (t) => {
  const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'mc1', namespace: 'default' } };
  const users = secret('mc1-users');
  const created = (object: string): Alarm => ({ oracle: 'update-summary', check: 'created', object, reference: [1], test: 2, message: '' });
  const gone = (object: string): Alarm => ({ oracle: 'update-summary', check: 'deleted', object, reference: [0], test: 1, message: '' });
  const alarms = [gone('StatefulSet/default/mc1-rs0'), gone('Service/default/mc1'), gone('Secret/default/mc1-users'), created('Secret/default/mc1-users')];
  const refs = [
    madeBy(
      runWith(
        [],
        [
          ['ADDED', users],
          ['ADDED', svc],
          ['ADDED', set(1)],
        ],
      ),
      [0, 1, 2],
    ),
  ];
  // The controller re-creates the deleted cluster's Secret under a stale view; the garbage collector
  // deletes everything the old owner had, in one order or another.
  const cascade = (first: KubeObject, second: KubeObject, third: KubeObject) =>
    madeBy(
      runWith(
        [],
        [
          ['ADDED', users],
          ['ADDED', svc],
          ['ADDED', set(1)],
          ['DELETED', first],
          ['DELETED', second],
          ['DELETED', third],
          ['ADDED', users],
        ],
      ),
      [0, 1, 2, 6],
    );
  const createsUsers = { kind: 'extra', verb: 'create', object: 'Secret/default/mc1-users' };
  t.deepEqual(firstDivergence(refs, cascade(set(1), svc, users), alarms), createsUsers);
  t.deepEqual(firstDivergence(refs, cascade(svc, users, set(1)), alarms), createsUsers);
  // Runs without the record of the controller's writes (older summaries) read every change.
  const { controllerActivity: _, ...unrecorded } = cascade(svc, users, set(1));
  t.deepEqual(firstDivergence(refs, unrecorded, alarms), { kind: 'extra', verb: 'delete', object: 'Service/default/mc1' });
});

test('extra creates of children whose owner was already gone are one divergence, named by the owner, whichever child came first', (t) => {
  const owner = (uid: string): KubeObject => ({ apiVersion: 'demo/v1', kind: 'MongoCluster', metadata: { name: 'mc1', namespace: 'default', uid } });
  const child = (kind: string, name: string, uid: string): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'demo/v1', kind: 'MongoCluster', name: 'mc1', uid, controller: true }] },
  });
  const life = (uid: string) => [child('Secret', 'mc1-users', uid), child('Service', 'mc1', uid)];
  const created = (object: string): Alarm => ({ oracle: 'update-summary', check: 'created', object, reference: [2], test: 3, message: '' });
  const alarms = [created('Secret/default/mc1-users'), created('Service/default/mc1')];
  const changes = (resurrected: KubeObject[]): Array<['ADDED' | 'DELETED', KubeObject]> => [
    ['ADDED', owner('old')],
    ...life('old').map((o): ['ADDED', KubeObject] => ['ADDED', o]),
    ['DELETED', owner('old')],
    ...life('old').map((o): ['DELETED', KubeObject] => ['DELETED', o]),
    ['ADDED', owner('new')],
    // Under a stale view of the old cluster, the controller re-creates some of its children ...
    ...resurrected.map((o): ['ADDED', KubeObject] => ['ADDED', o]),
    ...resurrected.map((o): ['DELETED', KubeObject] => ['DELETED', o]),
    // ... and then the new cluster's.
    ...life('new').map((o): ['ADDED', KubeObject] => ['ADDED', o]),
  ];
  const ownIn = (c: Array<['ADDED' | 'DELETED', KubeObject]>) => c.flatMap(([type, o], i) => (type === 'ADDED' && o.kind !== 'MongoCluster' ? [i] : []));
  const refs = [madeBy(runWith([], changes([])), ownIn(changes([])))];
  const secretFirst = changes([child('Secret', 'mc1-users', 'old'), child('Service', 'mc1', 'old')]);
  const serviceOnly = changes([child('Service', 'mc1', 'old')]);
  const a = firstDivergence(refs, madeBy(runWith([], secretFirst), ownIn(secretFirst)), alarms);
  const b = firstDivergence(refs, madeBy(runWith([], serviceOnly), ownIn(serviceOnly)), alarms);
  t.deepEqual(a, { kind: 'extra', verb: 'create', object: 'Secret/default/mc1-users', ownerGone: 'MongoCluster/default/mc1' });
  t.deepEqual(b, { kind: 'extra', verb: 'create', object: 'Service/default/mc1', ownerGone: 'MongoCluster/default/mc1' });
  const found = groupFindings([result('p1', { divergence: a, alarms }), result('p2', { divergence: b, alarms })]);
  t.is(found.length, 1);
  t.regex(found[0]!.summary, /creates children of MongoCluster\/default\/mc1 after it was gone \(Secret\/default\/mc1-users first\)/);
});

test('children created after their owner was gone are one finding whichever oracle alarmed on the first child', (t) => {
  // Which child the controller re-creates first is timing: a Secret only the update summary counts,
  // or a StatefulSet the end state also shows. The owner, not the first child's oracle, names the bug.
  const gone = (object: string) => ({ kind: 'extra' as const, verb: 'create' as const, object, ownerGone: 'MongoCluster/default/mc1' });
  const counted = (object: string): Alarm => ({ oracle: 'update-summary', check: 'created', object, reference: [1], test: 2, message: '' });
  const present = (object: string): Alarm => ({ oracle: 'end-state', check: 'unexpected', object, reference: [], test: 'present', message: '' });
  const secretFirst = result('p1', { divergence: gone('Secret/default/mc1-users'), alarms: [counted('Secret/default/mc1-users')] });
  const setFirst = result('p2', {
    divergence: gone('StatefulSet/default/mc1'),
    alarms: [present('StatefulSet/default/mc1'), counted('Secret/default/mc1-users')],
  });
  t.is(findingSignature(secretFirst).oracle, 'update-summary');
  t.is(findingSignature(setFirst).oracle, 'end-state');
  const found = groupFindings([secretFirst, setFirst]);
  t.is(found.length, 1);
  t.deepEqual(
    found[0]!.plans.map((p) => p.plan),
    ['p1', 'p2'],
  );
});

test('a cluster-scoped child of a live cluster-scoped owner is an extra create, not one after its owner was gone', (t) => {
  const owner: KubeObject = { apiVersion: 'demo/v1', kind: 'Tenant', metadata: { name: 't1', uid: 'u1' } };
  const role: KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 't1-reader', ownerReferences: [{ apiVersion: 'demo/v1', kind: 'Tenant', name: 't1', uid: 'u1', controller: true }] },
  };
  const alarms: Alarm[] = [{ oracle: 'update-summary', check: 'created', object: 'ClusterRole/t1-reader', reference: [0], test: 1, message: '' }];
  const refs = [madeBy(runWith([], [['ADDED', owner]]), [])];
  const test = madeBy(
    runWith(
      [],
      [
        ['ADDED', owner],
        ['ADDED', role],
      ],
    ),
    [1],
  );
  // The owner's key has no namespace part (Tenant/t1), as the trace's keys of cluster-scoped objects.
  t.deepEqual(firstDivergence(refs, test, alarms), { kind: 'extra', verb: 'create', object: 'ClusterRole/t1-reader' });
});

test('a write the test run never made is a missing divergence; without state alarms there is none', (t) => {
  const refs = [runWith([], [['ADDED', configMap('data-0', {})]])];
  const run = runWith([], []);
  t.deepEqual(firstDivergence(refs, run, [claimGone]), { kind: 'missing', verb: 'create', object: 'PersistentVolumeClaim/default/data-0' });
  const stuck: Alarm = { oracle: 'liveness', check: 'not-quiet', object: '(controller)', reference: [], test: 1, message: '' };
  t.is(firstDivergence(refs, run, [stuck]), undefined);
});

test('classification: flaky, beyond-contract, rejected-input, environment, misoperation, bug', (t) => {
  const sig = findingSignature(result('a'));
  t.is(classifyFinding([result('a', { verdict: 'flaky' }), result('b', { verdict: 'flaky' })], sig).class, 'flaky');
  t.is(classifyFinding([result('a', { verdict: 'flaky' }), result('b')], sig).class, 'bug');
  const beyond = { beyondContract: ['a consistent read answered from a stale view'] };
  t.is(classifyFinding([result('a', beyond), result('b', beyond)], sig).class, 'beyond-contract');
  t.is(classifyFinding([result('a', beyond), result('b')], sig).class, 'bug');
  const refused: Alarm = {
    oracle: 'liveness',
    check: 'workload-failed',
    object: '(workload)',
    reference: ['completed'],
    test: 'step 3 (apply cr.yaml): 422 Invalid: spec.replicas: must be >= 0',
    message: '',
  };
  t.is(classifyFinding([result('a', { alarms: [refused] })], sig).class, 'rejected-input');
  const timedOut = { ...refused, test: 'step 3 (waitFor Ready): timed out after 30 s' };
  t.is(classifyFinding([result('a', { alarms: [timedOut] })], sig).class, 'bug');
  const gap: Alarm = {
    oracle: 'health',
    check: 'api-error',
    object: 'Pod/default/p',
    reference: [],
    test: '501 NotImplemented',
    message: 'the controller got 501',
  };
  t.is(classifyFinding([result('a', { alarms: [deleted, gap] })], sig).class, 'environment');
  const explored = { explored: true as const, size: { faults: 0, steps: 2 } };
  const live = { oracle: 'liveness' as const };
  t.is(classifyFinding([result('a', explored)], live).class, 'misoperation');
  t.is(classifyFinding([result('a', { ...explored, size: { faults: 1, steps: 2 } })], live).class, 'bug');
  t.is(classifyFinding([result('a', explored)], sig).class, 'bug');
});

test('findings come bugs first, then by how many plans found them', (t) => {
  const flakyOne = {
    verdict: 'flaky' as const,
    divergence: { kind: 'extra' as const, verb: 'update' as const, object: 'ConfigMap/default/x', field: 'data.t' },
    alarms: [
      { oracle: 'end-state' as const, check: 'value' as const, object: 'ConfigMap/default/x', field: 'data.t', reference: ['1'], test: '2', message: '' },
    ],
  };
  const other = {
    divergence: { kind: 'extra' as const, verb: 'create' as const, object: 'Pod/default/p' },
    alarms: [{ oracle: 'update-summary' as const, check: 'created' as const, object: 'Pod/default/p', reference: [1], test: 2, message: '' }],
  };
  const found = groupFindings([result('f1', flakyOne), result('f2', flakyOne), result('o1', other), result('a'), result('b')]);
  t.deepEqual(
    found.map((f) => [f.class, f.plans.length]),
    [
      ['bug', 2],
      ['bug', 1],
      ['flaky', 2],
    ],
  );
});

test('a workload whose plans were all pruned, or all not injected, is untested with the reason and what to do', (t) => {
  const planned = [
    { controller: 'op', workload: 'pruned', plans: 0, emptiedBy: 'deterministic', referenceRuns: 2 },
    { controller: 'op', workload: 'quiet', plans: 2 },
    { controller: 'op', workload: 'tested', plans: 2 },
    { controller: 'op', workload: 'not-yet', plans: 3 },
  ];
  const notInjected = (plan: string, workload: string) => result(plan, { workload, verdict: 'not-injected', injected: false, alarms: [] });
  const results = [
    notInjected('a', 'quiet'),
    result('b', { workload: 'quiet', verdict: 'workload-failed', injected: false, alarms: [] }),
    notInjected('a', 'tested'),
    result('b', { workload: 'tested', verdict: 'pass', alarms: [] }),
  ];
  const untested = untestedWorkloads(planned, results);
  t.deepEqual(
    untested.map((u) => [u.workload, u.reason]),
    [
      ['pruned', 'no-plans'],
      ['quiet', 'not-injected'],
    ],
  );
  t.regex(untested[0]!.detail, /2 reference runs disagreed/);
  t.regex(untested[0]!.advice, /referenceRuns: 3/);
  t.regex(untested[0]!.advice, /--serialize/);
  t.regex(untested[1]!.detail, /1 not injected, 1 with the workload failing first/);
});

test('the stage that emptied every pattern is named only when it is the same for all', (t) => {
  const p = (...counts: Array<[string, number]>) => ({ stages: counts.map(([stage, plans]) => ({ stage, plans })) });
  const intermediate = p(['baseline', 6], ['causality', 6], ['deterministic', 0], ['deduplicated', 0]);
  const stale = p(['baseline', 8], ['deterministic', 0], ['deduplicated', 0]);
  const none = p(['baseline', 0], ['deterministic', 0]);
  t.is(stageThatEmptied([intermediate, stale, none]), 'deterministic');
  t.is(stageThatEmptied([intermediate, p(['baseline', 3], ['causality', 0])]), undefined);
});

test("a delete answered with a Status (no resourceVersion) is the controller's DELETED change, not a status update someone else made in between", (t) => {
  const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'c1', namespace: 'default' } };
  const alarms: Alarm[] = [
    { oracle: 'update-summary', check: 'deleted', object: 'StatefulSet/default/mc1-rs0', reference: [0], test: 1, message: '' },
    { oracle: 'update-summary', check: 'deleted', object: 'Service/default/c1', reference: [0], test: 1, message: '' },
  ];
  const created: Array<['ADDED' | 'DELETED' | 'MODIFIED', KubeObject]> = [
    ['ADDED', set(1)],
    ['ADDED', svc],
  ];
  const reference = madeBy(runWith([], created), [0, 1]);
  // The operator deletes both; the StatefulSet controller updates the set's status in between its
  // delete and the deletion, and the delete's answer is a Status, which names no resourceVersion.
  const run = runWith([], [...created, ['MODIFIED', { ...set(1), status: { replicas: 1 } }], ['DELETED', set(1)], ['DELETED', svc]]);
  const [addSet, addSvc, , delSet, delSvc] = run.clusterChanges;
  const ownWrites: OwnWrite[] = [
    { verb: 'create', key: addSet!.key, seq: addSet!.seq - 1, resourceVersion: addSet!.resourceVersion },
    { verb: 'create', key: addSvc!.key, seq: addSvc!.seq - 1, resourceVersion: addSvc!.resourceVersion },
    { verb: 'delete', key: delSet!.key, seq: addSvc!.seq },
    { verb: 'delete', key: delSvc!.key, seq: delSvc!.seq - 1, resourceVersion: delSvc!.resourceVersion },
  ];
  const deletes = { ...run, controllerActivity: { apiErrors: [], ownWrites } };
  t.deepEqual(firstDivergence([reference], deletes, alarms), { kind: 'extra', verb: 'delete', object: 'StatefulSet/default/mc1-rs0' });
});

test("an object another controller made more often than in every reference run (pods of a rollout the controller caused) is an extra create, not 'never created'", (t) => {
  const created = (test: number): Alarm => ({ oracle: 'update-summary', check: 'created', object: 'Pod/default/cache1-0', reference: [2], test, message: '' });
  const run = runWith([], []);
  t.deepEqual(firstDivergence([run], run, [created(4)]), { kind: 'extra', verb: 'create', object: 'Pod/default/cache1-0' });
  t.deepEqual(firstDivergence([run], run, [created(1)]), { kind: 'missing', verb: 'create', object: 'Pod/default/cache1-0' });
});

test("runs that diverge on a Deployment's ReplicaSet or its pods under another pod-template-hash are one finding, named with the hash folded", (t) => {
  const rs = (hash: string) => `ReplicaSet/default/mc1-mongos-${hash}`;
  const alarm = (object: string): Alarm => ({
    oracle: 'end-state',
    check: 'generated-count',
    object,
    reference: [1],
    test: 2,
    message: `${object}: 2 objects`,
  });
  const found = groupFindings([
    result('a', { divergence: { kind: 'extra', verb: 'create', object: rs('6d4cf56db6') }, alarms: [alarm(rs('6d4cf56db6'))] }),
    result('b', { divergence: { kind: 'extra', verb: 'create', object: rs('58b9c7f4d9') }, alarms: [alarm(rs('58b9c7f4d9'))] }),
    result('c', { divergence: { kind: 'extra', verb: 'create', object: 'Pod/default/mc1-mongos-6d4cf56db6-*' }, alarms: [] }),
    result('d', { divergence: { kind: 'extra', verb: 'create', object: 'Pod/default/mc1-mongos-58b9c7f4d9-7xk2p' }, alarms: [] }),
    result('e', { divergence: undefined, alarms: [{ ...alarm(rs('7c5f9d8b4b')), oracle: 'liveness', check: 'endless-writes' }] }),
    result('f', { divergence: undefined, alarms: [{ ...alarm(rs('6d4cf56db6')), oracle: 'liveness', check: 'endless-writes' }] }),
  ]);
  t.deepEqual(found.map((f) => [f.plans.map((p) => p.plan).join(','), f.summary.replace(/^\[[\w-]+\] /, '')]).sort(), [
    ['a,b', 'creates ReplicaSet/default/mc1-mongos-*, which no reference run did'],
    ['c,d', 'creates Pod/default/mc1-mongos-*-*, which no reference run did'],
    ['e,f', 'endless-writes on ReplicaSet/default/mc1-mongos-*'],
  ]);
  t.is(
    findingSignature(result('g', { divergence: { kind: 'missing', verb: 'create', object: 'Pod/default/mc1-rs0-2' } })).divergence?.object,
    'Pod/default/mc1-rs0-2',
    'a StatefulSet pod keeps its name',
  );
});

/** A claim with the pvc-protection finalizer; `deleting`: marked for deletion, held by it (a pod still mounts it). */
const claim = (uid: string, deleting = false, finalizers = ['kubernetes.io/pvc-protection']): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: {
    name: 'data-1',
    namespace: 'default',
    uid,
    finalizers,
    ...(deleting ? { deletionTimestamp: '2026-11-30T10:00:00Z', deletionGracePeriodSeconds: 0 } : {}),
  },
});

test('a claim deleted once more than in the references is one finding whether it ends terminating (end state) or deleted and made again (update summary)', (t) => {
  type Change = ['ADDED' | 'DELETED' | 'MODIFIED', KubeObject];
  // The scale-down deletes claim c1 (the controller's delete marks it, the protection controller's
  // finalizer removal ends it); the scale-up makes c2.
  const scale: Change[] = [
    ['ADDED', claim('c1')],
    ['MODIFIED', claim('c1', true)],
    ['DELETED', claim('c1', true)],
    ['ADDED', claim('c2')],
  ];
  const refs = [madeBy(runWith([], scale), [1])];
  // A restart onto a stale view of the scale-down deletes c2 as well: its pod still mounts it ...
  const held: Change[] = [...scale, ['MODIFIED', claim('c2', true)]];
  const endState: Alarm[] = ['metadata.deletionTimestamp', 'metadata.deletionGracePeriodSeconds'].map((field) => ({
    oracle: 'end-state',
    check: 'value',
    object: 'PersistentVolumeClaim/default/data-1',
    field,
    reference: ['<absent>'],
    test: 'x',
    message: '',
  }));
  // ... or its pod was gone too, and the claim went and was made again.
  const gone: Change[] = [...held, ['DELETED', claim('c2', true)], ['ADDED', claim('c3')]];
  const history = (check: 'created' | 'deleted'): Alarm => ({
    oracle: 'update-summary',
    check,
    object: 'PersistentVolumeClaim/default/data-1',
    reference: [check === 'created' ? 2 : 1],
    test: check === 'created' ? 3 : 2,
    message: '',
  });
  const deletesClaim = { kind: 'extra', verb: 'delete', object: 'PersistentVolumeClaim/default/data-1' };
  const a = firstDivergence(refs, madeBy(runWith([], held), [1, 4]), endState);
  const b = firstDivergence(refs, madeBy(runWith([], gone), [1, 4]), [history('created'), history('deleted')]);
  t.deepEqual(a, deletesClaim);
  t.deepEqual(b, deletesClaim);
  const found = groupFindings([
    result('held', { divergence: a, alarms: endState }),
    result('gone', { divergence: b, alarms: [history('created'), history('deleted')] }),
  ]);
  t.is(found.length, 1, JSON.stringify(found.map((f) => f.summary)));
  t.regex(found[0]!.summary, /deletes PersistentVolumeClaim\/default\/data-1, which no reference run did/);
});

test('a delete that orphans its dependents is another write than one that takes them along', (t) => {
  const sts = (uid: string, finalizers?: string[], deleting = false): KubeObject => ({
    ...set(1),
    metadata: {
      name: 'mc1-rs0',
      namespace: 'default',
      uid,
      ...(finalizers ? { finalizers } : {}),
      ...(deleting ? { deletionTimestamp: '2026-11-30T10:00:00Z' } : {}),
    },
  });
  const refs = [madeBy(runWith([], [['ADDED', sts('s1')]]), [0])];
  // Deleted with propagationPolicy Orphan (to be made again with a new volume size): the API
  // server gives it the orphan finalizer first. Deleted in the background: it is gone at once.
  const orphaned = madeBy(
    runWith(
      [],
      [
        ['ADDED', sts('s1')],
        ['MODIFIED', sts('s1', ['orphan'], true)],
        ['DELETED', sts('s1', [], true)],
        ['ADDED', sts('s2')],
      ],
    ),
    [0, 1, 3],
  );
  const background = madeBy(
    runWith(
      [],
      [
        ['ADDED', sts('s1')],
        ['DELETED', sts('s1')],
        ['ADDED', sts('s2')],
      ],
    ),
    [0, 1, 2],
  );
  const alarms: Alarm[] = [deleted];
  const o = firstDivergence(refs, orphaned, alarms);
  const b = firstDivergence(refs, background, alarms);
  t.deepEqual(o, { ...deletesSet, propagation: 'Orphan' });
  t.deepEqual(b, deletesSet);
  const found = groupFindings([result('orphan', { divergence: o }), result('background', { divergence: b, alarms: [deleted, claimGone] })]);
  t.deepEqual(found.map((f) => f.summary).sort(), [
    '[update-summary] deletes StatefulSet/default/mc1-rs0 (orphaning its dependents), which no reference run did',
    '[update-summary] deletes StatefulSet/default/mc1-rs0, which no reference run did',
  ]);
});

test('runs with the same alarms are one finding whichever write diverged first; the other first writes are its variants', (t) => {
  const status = (field: string): Alarm => ({
    oracle: 'end-state',
    check: 'value',
    object: 'CassandraCluster/default/cc',
    field,
    reference: ['Done'],
    test: 'ToDo',
    message: '',
  });
  const alarms = [status('status.lastAction.status'), status('status.podLastOperation.status'), claimGone];
  // A crash right after the scale-down writes a podLastOperation no reference run wrote; stale views
  // of it never write the last action's Done: one wrong end state, two first divergences.
  const crash = result('intermediate-0010', {
    pattern: 'intermediate-state',
    alarms,
    divergence: { kind: 'extra', verb: 'update', object: 'CassandraCluster/default/cc', field: 'status.podLastOperation.status' },
  });
  const stale = (plan: string) =>
    result(plan, {
      alarms: [...alarms].reverse(),
      divergence: { kind: 'missing', verb: 'update', object: 'CassandraCluster/default/cc', field: 'status.lastAction.status' },
    });
  const found = groupFindings([crash, stale('stale-0069'), stale('stale-0070')]);
  t.is(found.length, 1);
  t.deepEqual(found[0]!.plans.map((p) => p.plan).sort(), ['intermediate-0010', 'stale-0069', 'stale-0070']);
  t.regex(found[0]!.summary, /never updated CassandraCluster\/default\/cc \(status\.lastAction\.status\)/);
  t.is(found[0]!.variants?.length, 1);
  t.regex(
    found[0]!.why,
    /the same alarms also came after another first write: \[end-state\] updates CassandraCluster\/default\/cc \(status\.podLastOperation\.status\)/,
  );
  // One alarm more or less is another symptom: two findings.
  t.is(groupFindings([crash, result('stale-0069', { alarms: alarms.slice(1), divergence: stale('x').divergence })]).length, 2);
  // A resurrection is a bug of its own: the same alarms after a create whose owner was gone stay apart.
  const resurrection = result('stale-0049', {
    alarms,
    divergence: { kind: 'extra', verb: 'create', object: 'StatefulSet/default/cc-rack1', ownerGone: 'CassandraCluster/default/cc' },
  });
  t.is(groupFindings([crash, resurrection]).length, 2);
  // A flaky alarm does not count, nor does the order of the alarms.
  const flakyToo = result('stale-0071', { alarms: [...alarms, { ...claimGone, object: 'Pod/default/x', flaky: true }], divergence: stale('x').divergence });
  t.is(groupFindings([crash, flakyToo]).length, 1);
});

test("a run whose alarms are some of another finding's run's, diverging first on an extra delete that run counts too, is part of that finding", (t) => {
  // component-toggle: a stale `enabled: false` deletes the HAProxy StatefulSet, then its Service; a
  // view frozen after the StatefulSet's deletion deletes the Service alone.
  const counted = (kind: string, check: 'created' | 'deleted'): Alarm => ({
    oracle: 'update-summary',
    check,
    object: `${kind}/default/c1-haproxy`,
    reference: [1],
    test: 2,
    message: '',
  });
  const service = [counted('Service', 'created'), counted('Service', 'deleted'), counted('Endpoints', 'created'), counted('Endpoints', 'deleted')];
  const whole = [...service, counted('StatefulSet', 'created'), counted('StatefulSet', 'deleted')];
  const deletes = (kind: string) => ({ kind: 'extra' as const, verb: 'delete' as const, object: `${kind}/default/c1-haproxy` });
  const both = (plan: string) => result(plan, { alarms: whole, divergence: deletes('StatefulSet') });
  const serviceOnly = (plan: string, extra: Parameters<typeof result>[1] = {}) => result(plan, { alarms: service, divergence: deletes('Service'), ...extra });
  const found = groupFindings([both('stale-0002'), both('stale-0003'), serviceOnly('stale-0027')]);
  t.is(found.length, 1);
  t.regex(found[0]!.summary, /deletes StatefulSet\/default\/c1-haproxy/);
  t.deepEqual(found[0]!.variants, [{ oracle: 'update-summary', divergence: deletes('Service') }]);
  t.deepEqual(
    found[0]!.plans.map((p) => p.plan),
    ['stale-0002', 'stale-0003', 'stale-0027'],
  );
  // Not when the smaller one's first write says more: an orphaning delete, a resurrection.
  t.is(groupFindings([both('a'), serviceOnly('b', { divergence: { ...deletes('Service'), propagation: 'Orphan' } })]).length, 2);
  // Nor when the fuller run did not make that write, nor when two fuller findings would take it.
  t.is(groupFindings([result('a', { alarms: [...whole.slice(2), claimGone], divergence: deletes('StatefulSet') }), serviceOnly('b')]).length, 2);
  // Nor into a finding of another kind of write: casskop#321's budget deleted by name shows inside
  // the runs that re-create a deleted cluster's children (the garbage collector deletes them again).
  const resurrects = result('d', {
    alarms: whole,
    divergence: { kind: 'extra', verb: 'create', object: 'Service/default/c1-haproxy', ownerGone: 'SQLCluster/default/c1' },
  });
  t.is(groupFindings([resurrects, serviceOnly('b')]).length, 2);
  const other = result('c', { alarms: [...service, claimGone], divergence: deletes('Endpoints') });
  t.is(groupFindings([both('a'), other, serviceOnly('b')]).length, 3);
});

test('a confirmed bug finding whose every alarm is on the end state and that recovered with time alone is transient', (t) => {
  const condition: Alarm = {
    oracle: 'end-state',
    check: 'value',
    object: 'RabbitmqCluster/default/r',
    field: 'status.conditions[type=ClusterAvailable].status',
    reference: ['True'],
    test: 'False',
    message: '',
  };
  const divergence = {
    kind: 'missing' as const,
    verb: 'update' as const,
    object: 'RabbitmqCluster/default/r',
    field: 'status.conditions[type=ClusterAvailable].status',
  };
  const recovered = (before: number, attempts: RecoveryRun['attempts'] = []): RecoveryRun => ({ runDir: '/recovery/a', before, attempts });
  const finding = (extra: Parameters<typeof result>[1]) => groupFindings([result('a', { alarms: [condition], divergence, ...extra })])[0]!;
  const byTime = finding({ recovery: recovered(0) });
  t.is(byTime.class, 'transient');
  t.is(byTime.recovery, 'time');
  t.regex(byTime.why, /the run ended before the controller had finished/);
  t.is(finding({ recovery: recovered(1, [{ strategy: 'time', alarms: 0 }]) }).class, 'transient');
  // A recovery run that never showed the finding (its end state the references' and its verdict not
  // the finding's) says nothing of recovery: a bug, its recovery not known.
  const notShown = finding({ recovery: { ...recovered(0), shown: false } });
  t.is(notShown.class, 'bug');
  t.is(notShown.recovery, undefined);
  // Recovered only by a restart, or not at all: a bug.
  t.is(
    finding({
      recovery: recovered(1, [
        { strategy: 'time', alarms: 1 },
        { strategy: 'restart', alarms: 0 },
      ]),
    }).class,
    'bug',
  );
  t.is(finding({ recovery: recovered(1, [{ strategy: 'time', alarms: 1 }]) }).recovery, 'none');
  t.is(finding({ recovery: recovered(1, [{ strategy: 'time', alarms: 1 }]) }).class, 'bug');
  // A write the update summary saw (a delete that happened) stays a bug however it recovered.
  t.is(finding({ alarms: [condition, deleted], recovery: recovered(0) }).class, 'bug');
  // Recovery not tried yet: a bug.
  t.is(finding({}).class, 'bug');
});

test('a confirmed bug finding on the end state only, in a workload whose input the controller refuses, that rolling the input back healed is a misoperation', (t) => {
  const marker: Alarm = {
    oracle: 'end-state',
    check: 'value',
    object: 'StatefulSet/default/r-server',
    field: 'metadata.annotations["rabbitmq.com/createdAt"]',
    reference: ['<absent>'],
    test: '2026-11-30T17:46:43Z',
    message: '',
  };
  const divergence = { kind: 'extra' as const, verb: 'update' as const, object: 'StatefulSet/default/r-server', field: marker.field! };
  const refusedInput = refusedScaleDown;
  const finding = (extra: Parameters<typeof result>[1]) => groupFindings([result('a', { alarms: [marker], divergence, ...extra })])[0]!;
  const held = finding({ refusedInput, recovery: rolledBack });
  t.is(held.class, 'misoperation');
  t.is(held.recovery, 'rollback');
  t.regex(held.why, /the controller refusing the workload's input \(RabbitmqCluster\/default\/r: ReconcileSuccess False \(UnsupportedOperation/);
  // No refusal in the references, no recovery, or a write the update summary saw: a bug.
  t.is(finding({ recovery: rolledBack }).class, 'bug');
  t.is(finding({ refusedInput, recovery: { ...rolledBack, attempts: rolledBack.attempts.map((a) => ({ ...a, alarms: 1 })) } }).class, 'bug');
  t.is(finding({ refusedInput, recovery: rolledBack, alarms: [marker, deleted] }).class, 'bug');
});
