/**
 * explore's findings (oracles/explore/findings.ts) from hand-built judgements: alarms grouped by the
 * oracle and the property their step changed, rollback runs' alarms mapped to their sequence's step,
 * the shortest reproducer and its command, and `environment` kept apart.
 */
import test from 'ava';
import { alarmStep, groupExploreFindings } from '../../oracles/explore/findings.js';
import type { ExploreAlarm, SequenceJudgement, StepJudgement } from '../../oracles/explore/judge.js';

const step = (n: number, property: string): StepJudgement => ({
  step: n,
  operation: 'map-add-then-remove',
  kind: 'primitive',
  property,
  path: property.replace('*', 'kpm-1'),
  verdict: 'ok',
  notes: [],
});

const sequence = (name: string, properties: string[], alarms: ExploreAlarm[]): SequenceJudgement => ({
  sequence: name,
  steps: properties.map((p, i) => step(i + 1, p)),
  alarms,
});

const labelKept = (sequence: string, stepNo: number, object: string): ExploreAlarm => ({
  oracle: 'consistency',
  sequence,
  step: stepNo,
  object,
  field: 'metadata.labels["kpm-1"]',
  message: `spec.labels no longer holds kpm-1, but ${object} metadata.labels["kpm-1"] still does`,
});

test('one property never propagated, on two objects and in two sequences, is one finding whose reproducer takes the fewest steps', (t) => {
  const judged = [
    sequence(
      'explore-x-3',
      ['spec.image', 'spec.replicas', 'spec.labels.*'],
      [labelKept('explore-x-3', 3, 'StatefulSet/default/x'), labelKept('explore-x-3', 3, 'Service/default/x')],
    ),
    sequence('explore-x-7', ['spec.labels.*'], [labelKept('explore-x-7', 1, 'StatefulSet/default/x')]),
    sequence('explore-x-9', ['spec.image'], []),
  ];
  const found = groupExploreFindings(judged, { file: '/op/kperturb.yaml', seed: 1, steps: 5 });
  t.is(found.length, 1);
  const [f] = found;
  t.is(f!.class, 'bug');
  t.is(f!.property, 'spec.labels.*');
  t.is(f!.alarms.length, 3);
  t.deepEqual(f!.objects, ['Service/default/x metadata.labels["kpm-1"]', 'StatefulSet/default/x metadata.labels["kpm-1"]']);
  t.deepEqual({ sequence: f!.reproducer.sequence, step: f!.reproducer.step }, { sequence: 'explore-x-7', step: 1 });
  t.is(f!.command, 'kperturb explore -c /op/kperturb.yaml --seed 1 --steps 5 --sequence explore-x-7');
  t.regex(f!.summary, /^\[consistency\] a change of spec\.labels\.\* \(Service/);
});

test('other properties, or the same property judged by another oracle, are other findings', (t) => {
  const judged = [
    sequence(
      'explore-x-1',
      ['spec.labels.*'],
      [
        labelKept('explore-x-1', 1, 'StatefulSet/default/x'),
        { ...labelKept('explore-x-1', 1, 'StatefulSet/default/x'), oracle: 'differential', message: 'ends differently from scratch' },
      ],
    ),
    sequence('explore-x-2', ['spec.annotations.*'], [{ ...labelKept('explore-x-2', 1, 'StatefulSet/default/x'), field: 'metadata.annotations["kpm-1"]' }]),
  ];
  const found = groupExploreFindings(judged);
  t.deepEqual(found.map((f) => `${f.oracle} ${f.property}`).sort(), [
    'consistency spec.annotations.*',
    'consistency spec.labels.*',
    'differential spec.labels.*',
  ]);
  t.true(found.every((f) => f.command === undefined));
});

test("an alarm of a rollback run counts as its sequence's step, and groups with that step's alarms", (t) => {
  // explore-x-4-rollback-2 replays steps 1-2, rolls step 2 back (its step 3), and goes on: its step 4 is the sequence's step 3.
  const judged = [
    sequence('explore-x-4', ['spec.image', 'spec.replicas', 'spec.labels.*'], [labelKept('explore-x-4-rollback-2', 4, 'StatefulSet/default/x')]),
    sequence('explore-x-5', ['spec.image', 'spec.image', 'spec.image', 'spec.labels.*'], [labelKept('explore-x-5', 4, 'StatefulSet/default/x')]),
  ];
  const bySequence = new Map(judged.map((j) => [j.sequence, j]));
  t.deepEqual(alarmStep(bySequence, 'explore-x-4-rollback-2', 4), { sequence: 'explore-x-4', step: 3, judged: judged[0]!.steps[2]! });
  t.is(alarmStep(bySequence, 'explore-x-4-rollback-2', 3), undefined, 'the rollback step itself is no step of the sequence');
  const found = groupExploreFindings(judged);
  t.is(found.length, 1);
  t.deepEqual({ sequence: found[0]!.reproducer.sequence, step: found[0]!.reproducer.step }, { sequence: 'explore-x-4', step: 3 });
});

test('alarms at a sequence end are grouped by the objects they name, generated names and list indices folded; environment alarms apart, bugs first', (t) => {
  const notReady = (sequence: string, pod: string, i: number): ExploreAlarm => ({
    oracle: 'health',
    sequence,
    object: `Pod/default/${pod}`,
    field: `status.containerStatuses[${i}].ready`,
    message: `Pod/default/${pod} is not ready at the sequence's end`,
  });
  const environment: ExploreAlarm = {
    oracle: 'consistency',
    sequence: 'explore-x-1',
    step: 1,
    object: 'StatefulSet/default/x',
    field: 'spec.replicas',
    message: 'spec.replicas changed but the StatefulSet keeps 3',
    class: 'environment',
    why: 'the controller waited on its application',
  };
  const judged = [
    sequence('explore-x-1', ['spec.replicas'], [environment, notReady('explore-x-1', 'web-7c9b8d5f6d-x2k4q', 0)]),
    sequence('explore-x-2', ['spec.image'], [notReady('explore-x-2', 'web-7c9b8d5f6d-z9mbt', 1), labelKept('explore-x-2', 1, 'Service/default/x')]),
  ];
  const found = groupExploreFindings(judged);
  t.deepEqual(
    found.map((f) => [f.class, f.oracle, f.alarms.length]),
    [
      ['bug', 'health', 2],
      ['bug', 'consistency', 1],
      ['environment', 'consistency', 1],
    ],
  );
  t.deepEqual(found[0]!.objects, ['Pod/default/web-*-* status.containerStatuses[*].ready']);
  t.is(found[0]!.property, undefined);
  t.is(found[0]!.summary, '[health] at the sequence end (Pod/default/web-*-* status.containerStatuses[*].ready)');
});

test('alarms after the first alarmed step of their sequence join its finding unless their signature shows first somewhere', (t) => {
  // version-rollback's shape: a bad value the operator never recovers from (rollback alarm at step 2),
  // after which it propagates nothing (step 3's image, judged in the rollback run as its step 4).
  const rollback = (sequence: string, stepNo: number): ExploreAlarm => ({
    oracle: 'rollback',
    sequence,
    step: stepNo,
    object: 'StatefulSet/default/db',
    field: 'spec.template.metadata.annotations["cr-version"]',
    message: 're-applying the CR before the step did not bring back the state before it',
  });
  const imageKept = (sequence: string, stepNo: number): ExploreAlarm => ({
    oracle: 'consistency',
    sequence,
    step: stepNo,
    object: 'StatefulSet/default/db',
    field: 'spec.template.spec.containers[0].image',
    message: 'spec.image changed but the StatefulSet keeps the old image',
  });
  const stuck = [
    sequence('explore-db-1', ['spec.replicas', 'spec.crVersion', 'spec.image'], [rollback('explore-db-1', 2), imageKept('explore-db-1-rollback-2', 4)]),
    sequence('explore-db-2', ['spec.crVersion', 'spec.logLevel'], [rollback('explore-db-2', 1)]),
  ];
  const found = groupExploreFindings(stuck);
  t.is(found.length, 1, 'the image never propagated after the stuck version is the version bug');
  t.is(found[0]!.oracle, 'rollback');
  t.deepEqual({ sequence: found[0]!.reproducer.sequence, step: found[0]!.reproducer.step }, { sequence: 'explore-db-2', step: 1 });
  t.deepEqual(
    found[0]!.alarms.map((a) => [a.sequence, a.step, a.followOn ?? false]),
    [
      ['explore-db-2', 1, false],
      ['explore-db-1', 2, false],
      ['explore-db-1', 3, true],
    ],
  );
  // The image change alarming first in a sequence of its own is a bug of its own; its follow-on alarm stays with it.
  const alone = [...stuck, sequence('explore-db-3', ['spec.image'], [imageKept('explore-db-3', 1)])];
  t.deepEqual(
    groupExploreFindings(alone).map((f) => [f.oracle, f.alarms.length, f.alarms.filter((a) => a.followOn).length]),
    [
      ['rollback', 2, 0],
      ['consistency', 2, 0],
    ],
  );
});

test('a property and one inside it with an object field in common are one finding; with no field in common, two', (t) => {
  // exporter-toggle's shape: the exporter deleted whole or turned off, the Service keeps its port either way.
  const keptPort = (sequence: string, field = 'spec.ports[name=metrics].name'): ExploreAlarm => ({
    oracle: 'differential',
    sequence,
    step: 1,
    object: 'Service/default/kv1',
    field,
    message: 'the CR after this step, created with that spec on a fresh cluster, ends differently',
  });
  const judged = [
    sequence('explore-kv-1', ['spec.exporter'], [keptPort('explore-kv-1')]),
    sequence('explore-kv-2', ['spec.exporter.enabled'], [keptPort('explore-kv-2')]),
    sequence('explore-kv-3', ['spec.exporter.port'], [keptPort('explore-kv-3', 'spec.ports[name=metrics].port')]),
    sequence('explore-kv-4', ['spec.exporterImage'], [keptPort('explore-kv-4')]),
  ];
  const found = groupExploreFindings(judged);
  t.deepEqual(found.map((f) => f.properties).sort(), [['spec.exporter', 'spec.exporter.enabled'], ['spec.exporter.port'], ['spec.exporterImage']]);
  t.regex(found.find((f) => f.properties.length === 2)!.summary, /a change of spec\.exporter or spec\.exporter\.enabled/);
});

test('an alarm on a step judged a misoperation (input the system cannot honour) is a finding of class misoperation, apart from the bug on the same property', (t) => {
  const shrink = sequence('explore-x-1', ['spec.storage'], [labelKept('explore-x-1', 1, 'StatefulSet/default/x')]);
  shrink.steps[0]!.verdict = 'misoperation';
  const grow = sequence('explore-x-2', ['spec.storage'], [labelKept('explore-x-2', 1, 'StatefulSet/default/x')]);
  t.deepEqual(
    groupExploreFindings([shrink, grow]).map((f) => [f.class, f.alarms.map((a) => a.sequence)]),
    [
      ['bug', ['explore-x-2']],
      ['misoperation', ['explore-x-1']],
    ],
  );
});
