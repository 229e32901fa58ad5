/** explore's selections of steps and sequences (the differential oracle's, `--perturb`'s), how many plans of each pattern, and coverage as properties x patterns. */
import test from 'ava';
import {
  differentialInput,
  differentialSteps,
  passingSequences,
  perturbationCoverage,
  plansPerPattern,
  sequenceRunsConfig,
} from '../../src/campaign/explore.js';
import type { ControllerUnderTest } from '../../src/config/config.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { SequenceJudgement, StepJudgement } from '../../oracles/explore/index.js';
import type { Pattern, TestPlan } from '../../src/model/plan.js';

const stepOf = (property: string, verdict: StepJudgement['verdict']): StepJudgement => ({
  step: 1,
  operation: 'op',
  kind: 'primitive',
  property,
  path: property,
  verdict,
  notes: [],
});
const judged = (sequence: string, steps: StepJudgement[], alarms = 0): SequenceJudgement => ({
  sequence,
  steps,
  alarms: Array.from({ length: alarms }, () => ({ oracle: 'consistency' as const, sequence, message: 'x' })),
});

test('only the sequences whose every step passed its own oracles (ok, or rejected input) and that alarmed nowhere are perturbed', (t) => {
  const all = [
    judged('clean', [stepOf('spec.a', 'ok'), stepOf('spec.b', 'rejected')]),
    judged('alarmed', [stepOf('spec.a', 'alarm')], 1),
    judged('unfinished', [stepOf('spec.a', 'ok'), stepOf('spec.b', 'not-run')]),
    judged('refused-only', [stepOf('spec.a', 'rejected')]),
  ];
  t.deepEqual(passingSequences(all), ['clean']);
});

test('at most n plans of each pattern, spread over the ones planned', (t) => {
  const plan = (name: string, pattern: Pattern): TestPlan =>
    ({
      apiVersion: 'kperturb.dev/v1',
      kind: 'TestPlan',
      metadata: { name },
      spec: { controller: 'c', workload: 'w', pattern, description: '', faults: [] },
    }) as TestPlan;
  const plans = [...['i1', 'i2', 'i3', 'i4'].map((n) => plan(n, 'intermediate-state')), plan('s1', 'stale-state')];
  t.deepEqual(
    plansPerPattern(plans, 2).map((p) => p.metadata.name),
    ['i1', 'i3', 's1'],
  );
});

test('coverage as properties x patterns: the plans of each pattern tested on a sequence whose accepted steps changed the property, and their bugs', (t) => {
  const seqs = [judged('s1', [stepOf('spec.a', 'ok'), stepOf('spec.b', 'ok')]), judged('s2', [stepOf('spec.b', 'ok'), stepOf('spec.c', 'rejected')])];
  const coverage = perturbationCoverage(seqs, [
    { workload: 's1', pattern: 'stale-state', verdict: 'pass' },
    { workload: 's1', pattern: 'stale-state', verdict: 'bug' },
    { workload: 's2', pattern: 'error-path', verdict: 'pass' },
  ]);
  t.deepEqual(
    coverage.properties.map((p) => p.property),
    ['spec.a', 'spec.b'],
  );
  t.deepEqual(coverage.properties[0]!.byPattern['stale-state'], { tested: 2, bugs: 1 });
  t.deepEqual(coverage.properties[0]!.byPattern['error-path'], { tested: 0, bugs: 0 });
  t.deepEqual(coverage.properties[1]!.byPattern['error-path'], { tested: 1, bugs: 0 });
  t.deepEqual(coverage.properties[1]!.byPattern['stale-state'], { tested: 2, bugs: 1 });
});

test('the differential oracle takes accepted steps of the sequence run itself: not input the controller refused, nor steps judged in a rollback run', (t) => {
  const steps: StepJudgement[] = [
    stepOf('spec.a', 'ok'),
    { ...stepOf('spec.v', 'alarm'), rejectedBy: 'controller' },
    { ...stepOf('spec.b', 'ok'), ranIn: 'explore-x-1-rollback-2' },
    { ...stepOf('spec.c', 'ok'), setup: true },
    stepOf('spec.d', 'alarm'),
  ];
  t.deepEqual(
    differentialSteps(judged('s', steps)).map((s) => s.property),
    ['spec.a', 'spec.d'],
  );
});

test("the sequences run once each (explore judges the first run alone) unless --perturb plans from them with the config's reference runs", (t) => {
  const config = { name: 'c', referenceRuns: 3 } as unknown as ControllerUnderTest;
  t.is(sequenceRunsConfig(config, undefined).referenceRuns, 1);
  t.is(sequenceRunsConfig(config, 2).referenceRuns, 3);
  t.is(config.referenceRuns, 3);
});

test('the differential creates what the user wrote after the step, not the CR the controller filled in; after a refused step, the CR the cluster stored', (t) => {
  const seed = { apiVersion: 'x/v1', kind: 'Z', metadata: { name: 'z' }, spec: {} };
  const written = { ...seed, spec: { probes: { livenessProbe: { failureThreshold: 1 } } } };
  const sequence = {
    name: 's',
    seed,
    steps: [{ operation: 'integer-up', kind: 'primitive' as const, property: 'p', path: ['spec'], value: 1, patch: {}, cr: written }],
  };
  const stored = { ...seed, spec: { probes: { livenessProbe: { failureThreshold: 1, periodSeconds: 10, initialDelaySeconds: 10 } } } } as unknown as KubeObject;
  t.deepEqual(differentialInput(sequence, judged('s', [stepOf('p', 'ok')]), 1, stored)?.spec, written.spec);
  t.deepEqual(differentialInput(sequence, judged('s', [stepOf('p', 'rejected')]), 1, stored)?.spec, stored.spec);
});
