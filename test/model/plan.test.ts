import test from 'ava';
import { parse } from 'yaml';
import { serializePlan, describeTrigger, type TestPlan } from '../../src/model/plan.js';
import { validatePlan } from '../../src/io/plan-file.js';
import { UserInputError } from '../../src/model/errors.js';

const base = (faults: unknown[]) => ({
  apiVersion: 'kperturb.dev/v1',
  kind: 'TestPlan',
  metadata: { name: 'p' },
  spec: { controller: 'c', workload: 'w', pattern: 'stale-state', description: 'd', faults },
});

test('every fault type round-trips through YAML unchanged', (t) => {
  const plan = base([
    { type: 'crash-after-write', after: { verb: 'patch', key: 'Database/default/db1', subresource: 'status', occurrence: 2 } },
    {
      type: 'stale-restart',
      at: {
        sequence: [
          { change: { key: 'Database/default/db1', change: 'delete', occurrence: 1 } },
          { change: { key: 'Database/default/db1', change: 'create', occurrence: 2 } },
        ],
      },
      viewAfter: { key: 'Database/default/db1', change: 'update', fields: [{ path: 'metadata.deletionTimestamp', after: '<set>' }], occurrence: 1 },
      releaseAfterSeconds: 5,
    },
    {
      type: 'stale-restart',
      at: { change: { key: 'StatefulSet/default/db1', change: 'create', occurrence: 2 } },
      viewAfter: { key: 'Database/default/db1', change: 'create', occurrence: 1 },
      releaseAfterSeconds: 5,
      kinds: ['Database'],
    },
    {
      type: 'hold-until',
      key: 'Pod/default/web-0',
      from: { key: 'Pod/default/web-0', change: 'update', fields: [{ path: 'metadata.deletionTimestamp', before: null }], occurrence: 1 },
      until: { key: 'Pod/default/web-0', change: 'delete', occurrence: 1 },
    },
  ]);
  const validated = validatePlan(plan, 'p.yaml');
  t.deepEqual(validated, plan as unknown as TestPlan);
  t.deepEqual(validatePlan(parse(serializePlan(validated)), 'p.yaml'), validated);
});

function failsAt(t: import('ava').ExecutionContext, faults: unknown[], at: string) {
  const err = t.throws(() => validatePlan(base(faults), 'plan.yaml'), { instanceOf: UserInputError });
  t.is(err!.at, at, err!.message);
}

test('hand-edited plans are rejected at the exact path', (t) => {
  failsAt(t, [{ type: 'teleport' }], 'spec.faults[0].type');
  failsAt(
    t,
    [{ type: 'stale-restart', at: { write: { verb: 'create', key: 'A/b/c', occurrence: 1 }, change: {} }, viewAfter: {}, releaseAfterSeconds: 1 }],
    'spec.faults[0].at',
  );
  failsAt(t, [{ type: 'stale-restart', at: { sequence: [] }, viewAfter: {}, releaseAfterSeconds: 1 }], 'spec.faults[0].at.sequence');
  failsAt(t, [{ type: 'hold-until', key: 'A/b/c', from: { key: 'A/b/c', change: 'explode', occurrence: 1 }, until: {} }], 'spec.faults[0].from.change');
  failsAt(t, [{ type: 'hold-until', key: 'not a key', from: {}, until: {} }], 'spec.faults[0].key');
  const view = { key: 'A/b/c', change: 'create', occurrence: 1 };
  failsAt(t, [{ type: 'stale-restart', at: { change: view }, viewAfter: view, releaseAfterSeconds: 1, kinds: [] }], 'spec.faults[0].kinds');
  failsAt(
    t,
    [{ type: 'stale-restart', at: { change: view }, viewAfter: view, releaseAfterSeconds: 1, kinds: ['Database', 'statefulsets'] }],
    'spec.faults[0].kinds[1]',
  );
  failsAt(t, [{ type: 'crash-after-write', after: { verb: 'create', key: 'A/b/c', occurrence: 1, extra: 1 } }], 'spec.faults[0].after.extra');
});

test('releaseAfterSeconds is a bounded duration; a config given as a plan is told the kind a plan has', (t) => {
  const view = { key: 'A/b/c', change: 'create', occurrence: 1 };
  for (const seconds of [1e9, -1, Infinity])
    failsAt(t, [{ type: 'stale-restart', at: { change: view }, viewAfter: view, releaseAfterSeconds: seconds }], 'spec.faults[0].releaseAfterSeconds');
  const config = { apiVersion: 'kperturb.dev/v1', kind: 'ControllerUnderTest', metadata: { name: 'x' }, controller: { command: 'c' }, workloads: {} };
  const err = t.throws(() => validatePlan(config, 'kperturb.yaml'), { instanceOf: UserInputError });
  t.is(err!.message, 'kperturb.yaml at kind: "TestPlan" (got "ControllerUnderTest")');
});

test('triggers describe themselves in words', (t) => {
  t.is(
    describeTrigger({
      sequence: [
        { change: { key: 'Database/default/db1', change: 'delete', occurrence: 1 } },
        { write: { verb: 'delete', key: 'StatefulSet/default/web', occurrence: 1 } },
      ],
    }),
    'Database/default/db1 is deleted (1st time), then the controller deletes StatefulSet/default/web (1st time)',
  );
});

test('error-path faults round-trip, and bad ones are rejected at the exact path', (t) => {
  const faults = [
    { type: 'api-error', on: { verb: 'create', key: 'ConfigMap/default/s1-*#1', occurrence: 1 }, answer: 'lost-response' },
    { type: 'api-error', on: { verb: 'patch', key: 'Snapshot/default/s1', subresource: 'status', occurrence: 2 }, answer: 'slow', slowSeconds: 40 },
    { type: 'watch-end', kind: 'ConfigMap', at: { write: { verb: 'create', key: 'ConfigMap/default/a', occurrence: 1 } }, mode: 'reset', expire: true },
  ];
  const plan = { ...base(faults), spec: { ...base(faults).spec, pattern: 'error-path' } };
  const validated = validatePlan(plan, 'p.yaml');
  t.deepEqual(validated, plan as unknown as TestPlan);
  t.deepEqual(validatePlan(parse(serializePlan(validated)), 'p.yaml'), validated);
  const on = { verb: 'update', key: 'A/b/c', occurrence: 1 };
  failsAt(t, [{ type: 'api-error', on, answer: 'teapot' }], 'spec.faults[0].answer');
  failsAt(t, [{ type: 'api-error', on: { ...on, verb: 'create' }, answer: 'conflict' }], 'spec.faults[0].answer');
  failsAt(t, [{ type: 'api-error', on, answer: 'conflict', slowSeconds: 5 }], 'spec.faults[0].slowSeconds');
  failsAt(t, [{ type: 'api-error', on, answer: 'slow', slowSeconds: 100000 }], 'spec.faults[0].slowSeconds');
  failsAt(t, [{ type: 'api-error', on: { ...on, occurrence: 0 }, answer: 'slow' }], 'spec.faults[0].on.occurrence');
  failsAt(t, [{ type: 'watch-end', kind: 'configmaps', at: { write: on }, mode: 'close' }], 'spec.faults[0].kind');
  failsAt(t, [{ type: 'watch-end', kind: 'ConfigMap', at: { write: on }, mode: 'slam' }], 'spec.faults[0].mode');
});
