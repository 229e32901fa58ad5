import test from 'ava';
import { applyConfirmation, judgeTestRun, runAlarms } from '../../oracles/index.js';
import { configMap, runWith } from './_runs.js';
import { record, runWithHealth } from './_health.js';

const refs = [runWith([configMap('a', { k: '1' })]), runWith([configMap('a', { k: '1' })])];
const broken = runWith([configMap('a', { k: '2' })]);

test('a run whose fault never fired is not-injected, never pass, and is not judged', (t) => {
  const d = judgeTestRun(refs, broken, record({ injected: false }));
  t.is(d.verdict, 'not-injected');
  t.deepEqual(d.alarms, []);
  t.regex(d.error!, /never matched/);
});

test('a not-injected verdict says why each fault did not take effect, when the run knows', (t) => {
  const why =
    'hold ConfigMap/default/a from ConfigMap/default/a is created (1st time) until ConfigMap/default/a is deleted (1st time) (the cancelling change did not come in time; the hold was expired anyway)';
  const d = judgeTestRun(refs, broken, record({ injected: false, notInjected: [why] }));
  t.is(d.verdict, 'not-injected');
  t.is(d.error, `nothing was tested: ${why}`);
});

test('a workload that failed before the fault is a verdict of its own', (t) => {
  const d = judgeTestRun(
    refs,
    broken,
    record({ injected: false, workloadOutcome: { ok: false, failedStep: 0, error: 'step 1 (apply db.yaml): connection refused' } }),
  );
  t.is(d.verdict, 'workload-failed');
  t.regex(d.error!, /before the fault fired.*connection refused/);
});

test('a run that could not be carried out is an error', (t) => {
  t.is(judgeTestRun(refs, broken, record({ error: 'the controller exited during start-up' })).verdict, 'error');
});

test('injected: bug when any oracle alarms, pass otherwise', (t) => {
  t.is(judgeTestRun(refs, broken, record()).verdict, 'bug');
  t.is(judgeTestRun(refs, runWith([configMap('a', { k: '1' })]), record()).verdict, 'pass');
  // Health alone is enough.
  const crashed = { ...runWith([configMap('a', { k: '1' })]), controllerLog: '[2] panic: boom\n' };
  t.deepEqual(
    judgeTestRun([{ ...refs[0]!, controllerLog: '' }], crashed, record()).alarms.map((a) => a.oracle),
    ['health'],
  );
});

test('confirmation marks alarms an unperturbed re-run reproduces as flaky; all flaky makes the plan flaky', (t) => {
  const ref = configMap('a', { k: '1', j: 'x' });
  const refRuns = [runWith([ref]), runWith([ref])];
  const tst = runWith([configMap('a', { k: '2', j: 'y' })]);
  const decision = judgeTestRun(refRuns, tst, record());
  t.is(decision.alarms.length, 2);
  // The unperturbed re-run also ended with another j: j is not deterministic, k is.
  const unperturbed = runAlarms(refRuns, runWith([configMap('a', { k: '1', j: 'z' })]), record({ injected: undefined }));
  const confirmed = applyConfirmation(decision, unperturbed);
  t.is(confirmed.verdict, 'bug');
  t.deepEqual(
    confirmed.alarms.map((a) => [a.field, a.flaky === true]),
    [
      ['data.j', true],
      ['data.k', false],
    ],
  );
  const allFlaky = applyConfirmation(judgeTestRun(refRuns, runWith([configMap('a', { k: '1', j: 'y' })]), record()), unperturbed);
  t.is(allFlaky.verdict, 'flaky');
  // A clean re-run confirms everything.
  t.false(applyConfirmation(decision, runAlarms(refRuns, runWith([ref]), record())).alarms.some((a) => a.flaky));
});

test('liveness and health alarms come before state alarms', (t) => {
  const alarms = runAlarms([runWithHealth()], { ...runWith([configMap('x', {})]), controllerLog: 'panic: x\n' }, record({ settled: false }));
  t.deepEqual(
    alarms.map((a) => a.oracle),
    ['liveness', 'health', 'end-state'],
  );
});
