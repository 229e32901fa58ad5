import test from 'ava';
import { parse } from 'yaml';
import { serializePlan, describeFault, describeTrigger, faultOnManagedSystem, FAULT_KINDS, type Fault, type TestPlan } from '../../src/model/plan.js';
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

test('managed-system faults (pod-crash, app-unavailable) round-trip with call triggers and windows; bad ones are rejected at the exact path', (t) => {
  const call = { application: 'kv', key: 'Pod/default/kv1-0', operation: 'POST', path: '/upgrade', occurrence: 1 };
  const faults = [
    {
      type: 'pod-crash',
      pod: 'Pod/default/kv1-0',
      mode: 'crash-loop',
      at: { change: { key: 'KV/default/kv1', change: 'update', occurrence: 1 } },
      forSeconds: 5,
    },
    { type: 'pod-crash', pod: 'Pod/default/kv1-1', mode: 'unready', at: { call }, until: { write: { verb: 'patch', key: 'KV/default/kv1', occurrence: 2 } } },
    {
      type: 'app-unavailable',
      application: 'kv',
      key: 'Pod/default/kv1-0',
      answer: 'service-unavailable',
      at: { call },
      until: { call: { application: 'kv', key: 'Pod/default/kv1-0', occurrence: 2 } },
      forSeconds: 30,
    },
    {
      type: 'app-unavailable',
      application: 'kv',
      answer: 'refuse',
      at: { anyOf: [{ call }, { write: { verb: 'create', key: 'A/b', occurrence: 1 } }] },
      forSeconds: 0.5,
    },
  ];
  const plan = { ...base(faults), spec: { ...base(faults).spec, pattern: 'error-path' } };
  const validated = validatePlan(plan, 'p.yaml');
  t.deepEqual(validated, plan as unknown as TestPlan);
  t.deepEqual(validatePlan(parse(serializePlan(validated)), 'p.yaml'), validated);

  const at = { call };
  failsAt(t, [{ type: 'pod-crash', pod: 'Pod/default/kv1-0', mode: 'crash-loop', at }], 'spec.faults[0]');
  failsAt(t, [{ type: 'pod-crash', pod: 'StatefulSet/default/kv1', mode: 'crash-loop', at, forSeconds: 1 }], 'spec.faults[0].pod');
  failsAt(t, [{ type: 'pod-crash', pod: 'Pod/default/kv1-0', mode: 'explode', at, forSeconds: 1 }], 'spec.faults[0].mode');
  failsAt(t, [{ type: 'pod-crash', pod: 'Pod/default/kv1-0', mode: 'unready', at, forSeconds: 0 }], 'spec.faults[0].forSeconds');
  failsAt(t, [{ type: 'pod-crash', pod: 'Pod/default/kv1-0', mode: 'unready', at, forSeconds: 601 }], 'spec.faults[0].forSeconds');
  failsAt(t, [{ type: 'app-unavailable', application: 'kv', answer: 'teapot', at, forSeconds: 1 }], 'spec.faults[0].answer');
  failsAt(t, [{ type: 'app-unavailable', application: '', answer: 'refuse', at, forSeconds: 1 }], 'spec.faults[0].application');
  failsAt(t, [{ type: 'app-unavailable', application: 'kv', key: 'ConfigMap/default/x', answer: 'refuse', at, forSeconds: 1 }], 'spec.faults[0].key');
  failsAt(
    t,
    [{ type: 'app-unavailable', application: 'kv', answer: 'refuse', at: { call: { ...call, key: 'Node/n1' } }, forSeconds: 1 }],
    'spec.faults[0].at.call.key',
  );
  failsAt(
    t,
    [{ type: 'app-unavailable', application: 'kv', answer: 'refuse', at: { call: { ...call, occurrence: 0 } }, forSeconds: 1 }],
    'spec.faults[0].at.call.occurrence',
  );
  failsAt(
    t,
    [{ type: 'app-unavailable', application: 'kv', answer: 'refuse', at: { call: { ...call, path: '' } }, forSeconds: 1 }],
    'spec.faults[0].at.call.path',
  );
  failsAt(
    t,
    [{ type: 'app-unavailable', application: 'kv', answer: 'refuse', at: { call: { ...call, verb: 'GET' } }, forSeconds: 1 }],
    'spec.faults[0].at.call.verb',
  );
  const err = t.throws(() => validatePlan(base([{ type: 'app-unavailable', application: 'kv', answer: 'refuse', at }]), 'plan.yaml'), {
    instanceOf: UserInputError,
  });
  t.is(err!.message, 'plan.yaml at spec.faults[0]: until (a trigger) or forSeconds, or both: when the fault heals');
});

test('managed-system faults and call triggers describe themselves in words', (t) => {
  const [crash, app] = validatePlan(
    base([
      {
        type: 'pod-crash',
        pod: 'Pod/default/kv1-0',
        mode: 'crash-loop',
        at: { change: { key: 'KV/default/kv1', change: 'update', occurrence: 1 } },
        forSeconds: 5,
      },
      {
        type: 'app-unavailable',
        application: 'kv',
        key: 'Pod/default/kv1-0',
        answer: 'service-unavailable',
        at: { call: { application: 'kv', key: 'Pod/default/kv1-0', operation: 'POST', path: '/upgrade', occurrence: 1 } },
        until: { call: { application: 'kv', key: 'Pod/default/kv1-0', occurrence: 2 } },
      },
    ]),
    'p.yaml',
  ).spec.faults;
  t.is(describeFault(crash!), 'crash-loop the containers of Pod/default/kv1-0 when KV/default/kv1 is updated (1st time), healed for 5 s');
  t.is(
    describeFault(app!),
    'make kv on Pod/default/kv1-0 answer 503 Service Unavailable when the controller calls kv on Pod/default/kv1-0 (POST /upgrade) (1st time), healed until the controller calls kv on Pod/default/kv1-0 (2nd time)',
  );
});

test('node-not-ready, pod-evict and pvc-fault round-trip and describe themselves; bad ones are rejected at the exact path, with the file', (t) => {
  const at = { change: { key: 'KV/default/kv1', change: 'update', occurrence: 1 } };
  const faults = [
    { type: 'node-not-ready', node: 'Node/node-1', mode: 'unreachable', evictAfterSeconds: 0, at, forSeconds: 5 },
    { type: 'node-not-ready', node: 'Node/node-2', mode: 'not-ready', at, until: { write: { verb: 'patch', key: 'KV/default/kv1', occurrence: 2 } } },
    { type: 'pod-evict', pod: 'Pod/default/kv1-0', how: 'evict', at },
    { type: 'pod-evict', pod: 'Pod/default/kv1-1', how: 'delete', at },
    { type: 'pvc-fault', claim: 'PersistentVolumeClaim/default/data-kv1-0', mode: 'resize-refused', at, forSeconds: 3 },
    { type: 'pvc-fault', claim: 'PersistentVolumeClaim/default/data-kv1-1', mode: 'pending', at, forSeconds: 3 },
  ];
  const plan = { ...base(faults), spec: { ...base(faults).spec, pattern: 'managed-system' } };
  const validated = validatePlan(plan, 'p.yaml');
  t.deepEqual(validated, plan as unknown as TestPlan);
  t.deepEqual(validatePlan(parse(serializePlan(validated)), 'p.yaml'), validated);
  t.deepEqual(validated.spec.faults.map(describeFault), [
    'make Node/node-1 unreachable (its pods evicted after at most 0 s) when KV/default/kv1 is updated (1st time), healed for 5 s',
    'make Node/node-2 not-ready when KV/default/kv1 is updated (1st time), healed until the controller patches KV/default/kv1 (2nd time)',
    'evict Pod/default/kv1-0 (someone else) when KV/default/kv1 is updated (1st time)',
    'delete Pod/default/kv1-1 (someone else) when KV/default/kv1 is updated (1st time)',
    'refuse resizing PersistentVolumeClaim/default/data-kv1-0 when KV/default/kv1 is updated (1st time), healed for 3 s',
    'keep PersistentVolumeClaim/default/data-kv1-1 Pending when KV/default/kv1 is updated (1st time), healed for 3 s',
  ]);
  failsAt(t, [{ type: 'node-not-ready', node: 'node-1', mode: 'unreachable', at, forSeconds: 1 }], 'spec.faults[0].node');
  failsAt(t, [{ type: 'node-not-ready', node: 'Node/default/node-1', mode: 'unreachable', at, forSeconds: 1 }], 'spec.faults[0].node');
  failsAt(t, [{ type: 'node-not-ready', node: 'Node/node-1', mode: 'gone', at, forSeconds: 1 }], 'spec.faults[0].mode');
  failsAt(
    t,
    [{ type: 'node-not-ready', node: 'Node/node-1', mode: 'unreachable', evictAfterSeconds: -1, at, forSeconds: 1 }],
    'spec.faults[0].evictAfterSeconds',
  );
  failsAt(t, [{ type: 'node-not-ready', node: 'Node/node-1', mode: 'unreachable', at }], 'spec.faults[0]');
  failsAt(t, [{ type: 'pod-evict', pod: 'StatefulSet/default/kv1', how: 'evict', at }], 'spec.faults[0].pod');
  failsAt(t, [{ type: 'pod-evict', pod: 'Pod/default/kv1-0', how: 'drain', at }], 'spec.faults[0].how');
  failsAt(t, [{ type: 'pod-evict', pod: 'Pod/default/kv1-0', how: 'evict' }], 'spec.faults[0].at');
  failsAt(t, [{ type: 'pvc-fault', claim: 'Pod/default/kv1-0', mode: 'lost', at, forSeconds: 1 }], 'spec.faults[0].claim');
  failsAt(t, [{ type: 'pvc-fault', claim: 'PersistentVolumeClaim/data', mode: 'lost', at, forSeconds: 1 }], 'spec.faults[0].claim');
  failsAt(t, [{ type: 'pvc-fault', claim: 'PersistentVolumeClaim/default/data', mode: 'full', at, forSeconds: 1 }], 'spec.faults[0].mode');
  const err = t.throws(() => validatePlan(base([{ type: 'pvc-fault', claim: 'PersistentVolumeClaim/default/data', mode: 'lost', at }]), 'plan.yaml'), {
    instanceOf: UserInputError,
  });
  t.is(err!.message, 'plan.yaml at spec.faults[0]: until (a trigger) or forSeconds, or both: when the fault heals');
});

test("the managed-system fault kinds say they leave the controller's view true; the proxy's do not", (t) => {
  const onManagedSystem = FAULT_KINDS.filter((k) => faultOnManagedSystem({ type: k.type } as Fault)).map((k) => k.type);
  t.deepEqual(onManagedSystem.sort(), ['app-unavailable', 'node-not-ready', 'pod-crash', 'pod-evict', 'pvc-fault']);
});

test('a stale-restart freezes its view right after one change (viewAfter) or right before one (viewBefore): exactly one of the two', (t) => {
  const view = { key: 'A/b/c', change: 'create', occurrence: 1 };
  const before = validatePlan(base([{ type: 'stale-restart', at: { change: view }, viewBefore: view, releaseAfterSeconds: 1 }]), 'p.yaml');
  t.deepEqual(before.spec.faults[0], { type: 'stale-restart', at: { change: view }, viewBefore: view, releaseAfterSeconds: 1 });
  for (const moment of [{}, { viewAfter: view, viewBefore: view }]) {
    const err = t.throws(() => validatePlan(base([{ type: 'stale-restart', at: { change: view }, ...moment, releaseAfterSeconds: 1 }]), 'p.yaml'), {
      instanceOf: UserInputError,
    });
    t.is(err!.at, 'spec.faults[0]');
    t.regex(err!.message, /viewAfter or viewBefore \(a change trigger\), exactly one/);
  }
  failsAt(
    t,
    [{ type: 'stale-restart', at: { change: view }, viewBefore: { ...view, change: 'explode' }, releaseAfterSeconds: 1 }],
    'spec.faults[0].viewBefore.change',
  );
});
