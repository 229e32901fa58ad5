/**
 * Confirmation of findings (oracles/confirmation.ts, applied by groupFindings) from hand-built
 * results: a finding is a `bug` only when its shortest reproducer failed again in K of K re-runs with
 * the same signature and the fault-free run did not show it; otherwise `flaky`, with the counts.
 */
import test from 'ava';
import { groupFindings } from '../../oracles/findings.js';
import { decideConfirmation } from '../../oracles/confirmation.js';
import type { Alarm, FindingSignature, Rerun, Reruns } from '../../src/model/results.js';
import { deletesSet, result } from './_results.js';

const signature: FindingSignature = { oracle: 'update-summary', divergence: deletesSet };
const other: FindingSignature = { oracle: 'end-state', divergence: { kind: 'missing', verb: 'create', object: 'Service/default/mc1' } };
const again = (n: number): Rerun => ({ runDir: `/reruns/${n}`, verdict: 'bug', signature });
const passed = (n: number): Rerun => ({ runDir: `/reruns/${n}`, verdict: 'pass' });
const faultFree: Reruns['faultFree'] = { runDir: '/confirm/recreate', alarms: 0 };
const reruns = (runs: Rerun[], ff: Reruns['faultFree'] = faultFree): Reruns => ({ runs, ...(ff ? { faultFree: ff } : {}) });

test('a finding whose reproducer failed again in 3 of 3 re-runs, with the fault-free run passing, is a confirmed bug', (t) => {
  const [f] = groupFindings([result('big', { size: { faults: 2, steps: 7 } }), result('small', { reruns: reruns([again(1), again(2), again(3)]) })]);
  t.is(f!.class, 'bug');
  t.deepEqual(f!.confirmation, {
    failedAgain: 3,
    runs: 3,
    runDirs: ['/reruns/1', '/reruns/2', '/reruns/3'],
    faultFree: { runDir: '/confirm/recreate', passed: true },
    confirmed: true,
  });
  t.regex(f!.why, /confirmed: failed again 3 of 3 re-runs of its reproducer; the fault-free run passed/);
});

test('a finding whose reproducer failed again in fewer than K re-runs is flaky, with the counts', (t) => {
  const [f] = groupFindings([result('a', { reruns: reruns([again(1), passed(2), { runDir: '/reruns/3', verdict: 'not-injected' }]) })]);
  t.is(f!.class, 'flaky');
  t.is(f!.confirmation?.failedAgain, 1);
  t.regex(f!.why, /^not confirmed: failed again 1 of 3 re-runs/);
});

test('a re-run that alarmed with another signature did not fail again', (t) => {
  const c = decideConfirmation('op', [signature], reruns([again(1), { runDir: '/reruns/2', verdict: 'bug', signature: other }]));
  t.is(c.failedAgain, 1);
  t.false(c.confirmed);
  t.true(decideConfirmation('op', [signature], reruns([again(1), again(2)])).confirmed);
});

test("a re-run whose state oracles alarmed on the object of the finding's divergence failed again, whatever diverged first in it", (t) => {
  // A claim leaked in every re-run, but one of them diverged first on a ConfigMap it created.
  const showsIt: Rerun = { runDir: '/reruns/3', verdict: 'bug', signature: other, stateAlarmObjects: ['Service/default/mc1', deletesSet.object] };
  const elsewhere: Rerun = { runDir: '/reruns/3', verdict: 'bug', signature: other, stateAlarmObjects: ['Service/default/mc1'] };
  t.true(decideConfirmation('op', [signature], reruns([again(1), again(2), showsIt])).confirmed);
  t.false(decideConfirmation('op', [signature], reruns([again(1), again(2), elsewhere])).confirmed);
  // A pass that happened to alarm on it (flaky alarms are not kept) is no failure.
  t.false(decideConfirmation('op', [signature], reruns([again(1), again(2), { ...showsIt, verdict: 'pass' }])).confirmed);
});

test('a finding with variants (the same alarms after another first write) is shown again by a re-run with any of their signatures', (t) => {
  // `other` diverges first on a missing Service, with no state alarm on the StatefulSet of `signature`.
  const variant: Rerun = { runDir: '/reruns/3', verdict: 'bug', signature: other, stateAlarmObjects: ['Service/default/mc1'] };
  t.false(decideConfirmation('op', [signature], reruns([again(1), again(2), variant])).confirmed);
  t.true(decideConfirmation('op', [signature, other], reruns([again(1), again(2), variant])).confirmed);
  // The fault-free run showing a variant leaves it flaky.
  t.false(decideConfirmation('op', [signature, other], reruns([again(1), again(2), again(3)], { runDir: '/c', alarms: 1, signature: other })).confirmed);
});

test('the fault-free run must not show the finding: showing it, or not running, leaves the finding flaky; an unrelated difference does not', (t) => {
  const all = [again(1), again(2), again(3)];
  t.false(decideConfirmation('op', [signature], reruns(all, { runDir: '/c', alarms: 2, signature })).confirmed);
  t.false(decideConfirmation('op', [signature], reruns(all, { runDir: '/c', alarms: 0, error: 'the cluster did not start' })).confirmed);
  t.false(decideConfirmation('op', [signature], { runs: all }).confirmed);
  t.true(decideConfirmation('op', [signature], reruns(all, { runDir: '/c', alarms: 1, signature: other })).confirmed);
  const [f] = groupFindings([result('a', { reruns: reruns(all, { runDir: '/c', alarms: 1, signature }) })]);
  t.is(f!.class, 'flaky');
  t.regex(f!.why, /the fault-free run showed it too/);
});

test('zero re-runs confirm nothing; without re-runs (K = 0, older results) a bug stays a bug, unconfirmed', (t) => {
  t.false(decideConfirmation('op', [signature], reruns([])).confirmed);
  const [f] = groupFindings([result('a')]);
  t.is(f!.class, 'bug');
  t.is(f!.confirmation, undefined);
});

test('re-runs kept on another plan of the finding (a shorter plan came from another shard) still decide it', (t) => {
  const [f] = groupFindings([result('shorter', { size: { faults: 1, steps: 3 } }), result('rerun', { reruns: reruns([again(1), passed(2)]) })]);
  t.is(f!.reproducer.plan, 'shorter');
  t.is(f!.class, 'flaky');
  t.is(f!.confirmation?.runs, 2);
});

test('only bug findings are confirmed: a beyond-contract finding keeps its mark whatever its re-runs', (t) => {
  const alarm: Alarm = result('x').alarms[0]!;
  const [f] = groupFindings([result('a', { alarms: [alarm], beyondContract: ['a stale view answered a consistent read'], reruns: reruns([passed(1)]) })]);
  t.is(f!.class, 'beyond-contract');
  t.is(f!.confirmation, undefined);
});

test('a finding whose shortest reproducer failed again 1 of 3 times but whose next plan failed again 3 of 3 is a bug, reproduced by that plan', (t) => {
  const [f] = groupFindings([
    result('short', { size: { faults: 1, steps: 5 }, reruns: reruns([again(1), passed(2), passed(3)]) }),
    result('next', { size: { faults: 1, steps: 7 }, reruns: reruns([again(4), again(5), again(6)]) }),
    result('long', { size: { faults: 2, steps: 7 } }),
  ]);
  t.is(f!.class, 'bug');
  t.is(f!.reproducer.plan, 'next');
  t.is(f!.command, 'kperturb test /plans/next.yaml -c /op/kperturb.yaml');
  t.deepEqual(f!.confirmation?.runDirs, ['/reruns/4', '/reruns/5', '/reruns/6']);
  t.regex(f!.why, /confirmed: failed again 3 of 3 re-runs of its reproducer; the fault-free run passed; short failed again 1 of 3$/);
});

test('a finding none of whose re-run plans failed again every time is flaky, with the shortest reproducer and its counts', (t) => {
  const [f] = groupFindings([
    result('short', { size: { faults: 1, steps: 5 }, reruns: reruns([again(1), passed(2), passed(3)]) }),
    result('next', { size: { faults: 1, steps: 7 }, reruns: reruns([again(4), again(5), passed(6)]) }),
  ]);
  t.is(f!.class, 'flaky');
  t.is(f!.reproducer.plan, 'short');
  t.regex(f!.why, /^not confirmed: failed again 1 of 3 re-runs/);
});

test('re-runs that show the finding on another ReplicaSet of the same Deployment (a pod-template-hash differing per run) failed again', (t) => {
  // K8SPSMDB-578: the mongos template carries the TLS Secret's digest, so every run names another ReplicaSet.
  const onRs = (hash: string): FindingSignature => ({
    oracle: 'end-state',
    divergence: { kind: 'extra', verb: 'create', object: `ReplicaSet/default/mc1-mongos-${hash}` },
  });
  const [f] = groupFindings([result('a', { alarms: [], divergence: onRs('6d4cf56db6').divergence })]);
  t.is(f!.signature.divergence?.object, 'ReplicaSet/default/mc1-mongos-*', 'the finding names the ReplicaSet folded');
  const rerun = (n: number, hash: string, objects?: string[]): Rerun => ({
    runDir: `/reruns/${n}`,
    verdict: 'bug',
    signature: onRs(hash),
    ...(objects ? { stateAlarmObjects: objects } : {}),
  });
  const c = decideConfirmation('op', [onRs('6d4cf56db6')], reruns([rerun(1, '58b9c7f4d9'), rerun(2, '7c5f9d8b4b')]));
  t.is(c.failedAgain, 2);
  t.true(c.confirmed);
  // a re-run that diverged first elsewhere but alarmed on that Deployment's ReplicaSet (stored unfolded) showed it too
  const elsewhere: Rerun = { ...rerun(3, 'x'), signature: other, stateAlarmObjects: ['ReplicaSet/default/mc1-mongos-9f8b7c6d5d'] };
  t.is(decideConfirmation('op', [onRs('6d4cf56db6')], reruns([elsewhere])).failedAgain, 1);
});
