import test from 'ava';
import {
  ChangeOccurrenceCounter,
  TIMESTAMP_PLACEHOLDER,
  changeMatchesIgnoringOccurrence,
  diffForTrigger,
  matchesChange,
} from '../../src/model/change-match.js';
import { hashSecretValue } from '../../src/model/secret-hash.js';
import type { KubeObject } from '../../src/model/object-key.js';
import type { ChangeTrigger } from '../../src/model/plan.js';

function db(rv: string, phase: string | undefined, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: {
      name: 'db1',
      namespace: 'default',
      uid: `uid-${rv}`,
      resourceVersion: rv,
      generation: Number(rv),
      creationTimestamp: '2024-01-01T00:00:00Z',
      managedFields: [{ time: rv }],
    },
    spec: { replicas: 1 },
    ...(phase !== undefined ? { status: { phase } } : {}),
    ...extra,
  };
}

test('diff of an update lists changed leaves, sorted, without uid, resourceVersion, generation, managedFields', (t) => {
  const prev = db('1', 'Pending');
  const next = { ...db('2', 'Ready'), spec: { replicas: 3 } };
  t.deepEqual(diffForTrigger(prev, next), {
    change: 'update',
    fields: [
      { path: 'spec.replicas', before: 1, after: 3 },
      { path: 'status.phase', before: 'Pending', after: 'Ready' },
    ],
  });
});

test('creation, deletion and nothing', (t) => {
  t.deepEqual(diffForTrigger(undefined, db('1', undefined)), { change: 'create', fields: [] });
  t.deepEqual(diffForTrigger(db('1', undefined), undefined), { change: 'delete', fields: [] });
  t.is(diffForTrigger(undefined, undefined), undefined);
});

test('an update that only moves volatile fields is no change', (t) => {
  const prev = db('1', 'Ready', { status: { phase: 'Ready', lastSync: '2024-01-01T00:00:01Z', observed: { uid: 'a' } } });
  const next = db('7', 'Ready', { status: { phase: 'Ready', lastSync: '2024-05-05T10:00:01.123456Z', observed: { uid: 'b' } } });
  next.metadata!.ownerReferences = [];
  prev.metadata!.ownerReferences = [];
  t.is(diffForTrigger(prev, next), undefined);
});

test('a timestamp appearing is a change, its value is masked', (t) => {
  const prev = db('1', 'Ready');
  const next = db('2', 'Ready');
  next.metadata!.deletionTimestamp = '2024-02-02T02:02:02Z';
  t.deepEqual(diffForTrigger(prev, next)?.fields, [{ path: 'metadata.deletionTimestamp', after: TIMESTAMP_PLACEHOLDER }]);
});

test('paths escape dots in keys and index arrays, in the syntax of fields.ts', (t) => {
  const prev = db('1', undefined, { metadata: { name: 'db1', namespace: 'default', labels: { 'app.kubernetes.io/name': 'a' } }, items: [1, 2] });
  const next = db('2', undefined, { metadata: { name: 'db1', namespace: 'default', labels: { 'app.kubernetes.io/name': 'b' } }, items: [1, 3, 4] });
  const diff = diffForTrigger(prev, next)!;
  t.deepEqual(
    diff.fields.map((f) => f.path),
    ['items[1]', 'items[2]', 'metadata.labels.app\\.kubernetes\\.io/name'],
  );
  // The same paths read back through getField when matching.
  const trigger: ChangeTrigger = { key: 'Database/default/db1', change: 'update', fields: diff.fields, occurrence: 1 };
  t.true(changeMatchesIgnoringOccurrence(trigger, 'Database/default/db1', prev, next));
});

test('Secret values are hashed, whether the trace writer already hashed them or not', (t) => {
  const secret = (v: string, rv: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default', resourceVersion: rv },
    data: { pw: v },
  });
  const raw = diffForTrigger(secret('b2xk', '1'), secret('bmV3', '2'))!;
  t.deepEqual(raw.fields, [{ path: 'data.pw', before: hashSecretValue('b2xk'), after: hashSecretValue('bmV3') }]);
  const redacted = diffForTrigger(secret(hashSecretValue('b2xk'), '1'), secret(hashSecretValue('bmV3'), '2'))!;
  t.deepEqual(redacted, raw);
  // A trigger planned from a redacted reference trace matches the raw values a live watch sees.
  t.true(
    changeMatchesIgnoringOccurrence(
      { key: 'Secret/default/s', change: 'update', fields: redacted.fields },
      'Secret/default/s',
      secret('b2xk', '5'),
      secret('bmV3', '6'),
    ),
  );
});

test('matching: key, change type and every field (before and after; absent means absent)', (t) => {
  const key = 'Database/default/db1';
  const prev = db('1', undefined);
  const next = db('2', 'Ready');
  const m = (trigger: Omit<ChangeTrigger, 'occurrence'>) => changeMatchesIgnoringOccurrence(trigger, key, prev, next);
  t.true(m({ key, change: 'update' }));
  t.true(m({ key, change: 'update', fields: [{ path: 'status.phase', after: 'Ready' }] }));
  t.true(m({ key, change: 'update', fields: [{ path: 'status', after: { phase: 'Ready' } }] }), 'subtree values');
  t.false(m({ key, change: 'update', fields: [{ path: 'status.phase', before: 'Pending', after: 'Ready' }] }), 'before was absent');
  t.false(m({ key, change: 'update', fields: [{ path: 'status.phase', after: 'Failed' }] }));
  t.false(
    m({
      key,
      change: 'update',
      fields: [
        { path: 'status.phase', after: 'Ready' },
        { path: 'spec.replicas', before: 1, after: 2 },
      ],
    }),
    'all fields must match',
  );
  t.false(m({ key, change: 'create' }));
  t.false(m({ key: 'Database/default/other', change: 'update' }));
  // Unchanged fields named in a trigger still match when their values agree (the planner may pin context).
  t.true(
    m({
      key,
      change: 'update',
      fields: [
        { path: 'spec.replicas', before: 1, after: 1 },
        { path: 'status.phase', after: 'Ready' },
      ],
    }),
  );
});

test('deletes and creates match on key and type; fields are read from the state that exists', (t) => {
  const key = 'Database/default/db1';
  t.true(changeMatchesIgnoringOccurrence({ key, change: 'delete' }, key, db('3', 'Ready'), undefined));
  t.true(changeMatchesIgnoringOccurrence({ key, change: 'delete', fields: [{ path: 'status.phase', before: 'Ready' }] }, key, db('3', 'Ready'), undefined));
  t.true(changeMatchesIgnoringOccurrence({ key, change: 'create', fields: [{ path: 'spec.replicas', after: 1 }] }, key, undefined, db('1', undefined)));
  t.false(changeMatchesIgnoringOccurrence({ key, change: 'create' }, key, db('1', undefined), db('2', 'x')));
});

test('matchesChange fires exactly once, on the n-th matching change; volatile-only updates do not count', (t) => {
  const trigger: ChangeTrigger = { key: 'Database/default/db1', change: 'update', fields: [{ path: 'spec.replicas' }], occurrence: 2 };
  // `fields: [{path}]` without before/after means "absent before and after": never matches an update of it.
  const counter = new ChangeOccurrenceCounter();
  t.false(matchesChange(trigger, db('1', 'A'), db('2', 'B'), counter));
  const any: ChangeTrigger = { key: 'Database/default/db1', change: 'update', occurrence: 2 };
  const c2 = new ChangeOccurrenceCounter();
  const states = [db('1', 'A'), db('2', 'A'), db('3', 'B'), db('4', 'C'), db('5', 'D')];
  const fired = states.slice(1).map((s, i) => matchesChange(any, states[i], s, c2));
  // 1->2 moved only resourceVersion/generation: not a change. 2->3 is the 1st, 3->4 the 2nd.
  t.deepEqual(fired, [false, false, true, false]);
  t.is(c2.count, 3);
});

test('the key is read from the objects when not given', (t) => {
  const trigger: ChangeTrigger = { key: 'Namespace/ns1', change: 'create', occurrence: 1 };
  t.true(matchesChange(trigger, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } }, new ChangeOccurrenceCounter()));
  t.false(matchesChange(trigger, undefined, undefined, new ChangeOccurrenceCounter()));
});
